// Package s3test runs a real S3-protocol server for tests: gofakes3 with an
// in-memory backend behind net/http/httptest on 127.0.0.1, reached by
// gocloud.dev's s3blob (and so the AWS SDK v2) exactly as a user's bucket
// would be. It records the requests it serves, so that tests can check
// which objects were read and how.
package s3test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob" // s3://
)

// Server is a running S3-protocol server.
type Server struct {
	// Endpoint is the server's URL, http://127.0.0.1:port.
	Endpoint string

	mu       sync.Mutex
	requests []Request
	vanish   map[string]int // "/bucket/key": GETs or HEADs left before it answers 404
	stall    map[string]int // "/bucket/key": bytes of GET bodies left before it stalls
	stop     chan struct{}  // closed when the test ends: stalled answers end
}

// Request is a request the server served.
type Request struct {
	Method string
	Path   string // /bucket/key
	Range  string // the Range header, if any
}

// Start starts a server with the given buckets, stopped when the test ends.
// It sets the AWS environment of the test (t.Setenv: credentials, region, no
// EC2 metadata lookups, and no AWS_ENDPOINT_URL), so that nothing leaves
// the machine: a test reaches the server through the URL parameters of
// URL, or by setting AWS_ENDPOINT_URL to Endpoint itself.
func Start(t testing.TB, buckets ...string) *Server {
	t.Helper()
	// The test's AWS environment: fixed credentials and region, no shared
	// config files, never the EC2 metadata service.
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID":           "dime-test",
		"AWS_SECRET_ACCESS_KEY":       "dime-test-secret",
		"AWS_SESSION_TOKEN":           "",
		"AWS_REGION":                  "us-east-1",
		"AWS_PROFILE":                 "",
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_CONFIG_FILE":             filepath.Join(dir, "config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
		"AWS_ENDPOINT_URL":            "",
		"AWS_ENDPOINT_URL_S3":         "",
	} {
		t.Setenv(k, v)
	}
	os.Unsetenv("AWS_ENDPOINT_URL")
	os.Unsetenv("AWS_ENDPOINT_URL_S3")
	os.Unsetenv("AWS_PROFILE")
	os.Unsetenv("AWS_SESSION_TOKEN")
	backend := s3mem.New()
	for _, b := range buckets {
		if err := backend.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	faker := gofakes3.New(backend)
	s := &Server{stop: make(chan struct{})}
	h := faker.Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Range: r.Header.Get("Range")})
		gone := false
		if left, ok := s.vanish[r.URL.Path]; ok && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			gone = left <= 0
			s.vanish[r.URL.Path] = left - 1
		}
		_, stalls := s.stall[r.URL.Path]
		s.mu.Unlock()
		if gone {
			noSuchKey(w, r)
			return
		}
		if stalls && r.Method == http.MethodGet {
			sw := &stallingWriter{ResponseWriter: w, s: s, path: r.URL.Path}
			h.ServeHTTP(sw, r)
			if sw.stalled {
				select { // until the client gives up, or the test ends
				case <-r.Context().Done():
				case <-s.stop:
				}
			}
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(s.stop) }) // first: srv.Close waits for the stalled answers
	s.Endpoint = srv.URL
	return s
}

// Params are the URL parameters that reach the server without
// AWS_ENDPOINT_URL: endpoint, use_path_style (the bucket in the path, as
// 127.0.0.1 has no subdomains) and disable_https.
func (s *Server) Params() string {
	return "endpoint=" + url.QueryEscape(s.Endpoint) + "&use_path_style=true&disable_https=true"
}

// URL returns the s3:// URL of a key in a bucket, with Params.
func (s *Server) URL(bucket, key string) string {
	return "s3://" + bucket + "/" + key + "?" + s.Params()
}

// Put writes an object through s3blob.
func (s *Server) Put(t testing.TB, bucket, key string, data []byte) {
	t.Helper()
	ctx := context.Background()
	b, err := blob.OpenBucket(ctx, "s3://"+bucket+"?"+s.Params())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.WriteAll(ctx, key, data, nil); err != nil {
		t.Fatal(err)
	}
}

// PutFile writes the contents of a local file as an object.
func (s *Server) PutFile(t testing.TB, bucket, key, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Put(t, bucket, key, data)
}

// Vanish makes an object answer every later GET and HEAD as a deleted one
// does (404 NoSuchKey) while listings still show it: an object deleted
// between the listing of a dataset and its read.
func (s *Server) Vanish(bucket, key string) { s.VanishAfter(bucket, key, 0) }

// VanishAfter is Vanish after the object has served n more GETs or HEADs:
// an object deleted in the middle of its read.
func (s *Server) VanishAfter(bucket, key string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vanish == nil {
		s.vanish = map[string]int{}
	}
	s.vanish["/"+bucket+"/"+key] = n
}

// StallAfter makes the object's GETs send n more bytes of their bodies in
// all, then nothing: the headers and the bytes sent go out, and the answer
// stalls until the client gives up (or the test ends). It is an endpoint
// that stalls in the middle of a body.
func (s *Server) StallAfter(bucket, key string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stall == nil {
		s.stall = map[string]int{}
	}
	s.stall["/"+bucket+"/"+key] = n
}

// stallingWriter passes a body on until the bytes left to its object
// (Server.stall) are spent, and then drops the rest.
type stallingWriter struct {
	http.ResponseWriter
	s       *Server
	path    string
	stalled bool
}

func (w *stallingWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	left := w.s.stall[w.path]
	n := min(left, len(p))
	w.s.stall[w.path] = left - n
	w.s.mu.Unlock()
	if n < len(p) {
		w.stalled = true
	}
	if n > 0 {
		if _, err := w.ResponseWriter.Write(p[:n]); err != nil {
			return 0, err
		}
	}
	if w.stalled {
		if f, ok := w.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
	}
	return len(p), nil // the rest is dropped: the handler ends, then stalls
}

// noSuchKey answers as S3 does for a key that does not exist.
func noSuchKey(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusNotFound)
	if r.Method == http.MethodHead {
		return
	}
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message><Key>%s</Key><RequestId>0</RequestId></Error>`,
		html.EscapeString(strings.TrimPrefix(r.URL.Path, "/")))
}

// Requests returns the requests served so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Reset forgets the requests served so far and the stalls (StallAfter).
func (s *Server) Reset() {
	s.mu.Lock()
	s.requests = nil
	s.stall = nil
	s.mu.Unlock()
}

// Gets returns the GET requests of objects whose path contains sub.
func (s *Server) Gets(sub string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Method == http.MethodGet && strings.Contains(r.Path, sub) {
			out = append(out, r)
		}
	}
	return out
}

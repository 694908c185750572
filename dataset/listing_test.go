package dataset_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
)

// TestEndlessListingBounded: an S3 endpoint on loopback whose listing pages
// forever (every page says it is truncated) ends the resolution with an
// error naming the argument after the bound, instead of growing the
// process until it dies, and Options.Listing is told how it goes. Before,
// there was no bound, and nothing showed the listing.
func TestEndlessListingBounded(t *testing.T) {
	defer dataset.SetMaxListed(dataset.SetMaxListed(5000))
	var pages atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("list-type") != "2" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		n := pages.Add(1)
		var b strings.Builder
		fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>bucket</Name><Prefix></Prefix><IsTruncated>true</IsTruncated><NextContinuationToken>t%d</NextContinuationToken><KeyCount>1000</KeyCount><MaxKeys>1000</MaxKeys>`, n)
		for i := range 1000 {
			fmt.Fprintf(&b, `<Contents><Key>p%06d-%04d.csv</Key><Size>10</Size><LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>"x"</ETag></Contents>`, n, i)
		}
		b.WriteString(`</ListBucketResult>`)
		w.Header().Set("Content-Type", "application/xml")
		w.Write([]byte(b.String()))
	}))
	defer srv.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "dime-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "dime-test-secret")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	arg := "s3://bucket/?endpoint=" + url.QueryEscape(srv.URL) + "&use_path_style=true&disable_https=true"
	var calls []string
	listing := func(a string, n int, done bool) {
		if a != arg {
			t.Errorf("Listing told of %q, want %q", a, arg)
		}
		calls = append(calls, fmt.Sprintf("%d %v", n, done))
	}
	_, err := dataset.Resolve(context.Background(), []string{arg}, dataset.Options{Listing: listing})
	if !errors.Is(err, decode.ErrDataset) || !strings.Contains(err.Error(), "the listing goes on past 5000 objects") {
		t.Fatalf("%v, want an ErrDataset about the listing", err)
	}
	// The listing's progress: at its start, every 1,000 objects, and at
	// its end (here its error).
	if got, want := strings.Join(calls, ", "), "0 false, 1000 false, 2000 false, 3000 false, 4000 false, 5000 true"; got != want {
		t.Errorf("Listing calls %s, want %s", got, want)
	}
	if n := pages.Load(); n > 6 {
		t.Errorf("%d pages listed for a bound of 5000 objects", n)
	}
}

// TestFileURLs: file:///d/../d/ is the directory /d/, and a host in a
// file:// URL is refused, not ignored. Before, the first reported "no data
// files" and the second read the local path whatever the host.
func TestFileURLs(t *testing.T) {
	dir := t.TempDir()
	d := dir + "/d"
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(d+"/a.csv", []byte("x,y\n1,2\n"), 0o644)
	for _, arg := range []string{"file://" + d + "/../d/", "file://localhost" + d + "/", "file://" + d + "/./a.csv"} {
		ds, err := dataset.Resolve(context.Background(), []string{arg}, dataset.Options{})
		if err != nil || len(ds.Inputs) != 1 {
			t.Errorf("%s: %v", arg, err)
		}
	}
	_, err := dataset.Resolve(context.Background(), []string{"file://host" + d + "/"}, dataset.Options{})
	if !errors.Is(err, decode.ErrDataset) || !strings.Contains(err.Error(), `not host "host"`) {
		t.Errorf("file://host/: %v", err)
	}
}

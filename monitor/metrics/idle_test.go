package metrics

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestIdleConnectionsClosed: keep-alive connections left idle are closed
// after the idle timeout, and more connections than MaxConns wait instead
// of taking file descriptors, so that /healthz answers again once the idle
// ones are gone. Before, idle connections were kept forever: 20,000 of them
// exhausted the descriptors and /healthz stopped answering.
func TestIdleConnectionsClosed(t *testing.T) {
	old := idleTimeout
	idleTimeout = 300 * time.Millisecond
	defer func() { idleTimeout = old }()
	base := serve(t, New(Labels{X: "a", Y: "b"}))
	addr := strings.TrimPrefix(base, "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	// MaxConns + 40 clients that send one request each and then idle.
	for range MaxConns + 40 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	// Every one of them is answered (the last 40 once earlier ones were
	// closed for idling), then closed by the server.
	deadline := time.Now().Add(20 * time.Second)
	for i, c := range conns {
		c.SetReadDeadline(deadline)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		resp.Body.Close()
		if _, err := br.ReadByte(); err != io.EOF {
			t.Fatalf("connection %d: %v after the answer, want the server to close it (EOF)", i, err)
		}
	}
	resp, err := http.Get(base + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/healthz: %v", err)
	}
	resp.Body.Close()
}

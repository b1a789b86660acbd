package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench/internal/server"
	"github.com/dynabench-go/dynabench/internal/server/servertest"
	"github.com/dynabench-go/dynabench/internal/sqlstore"
)

// Slow and idle clients cannot hold the server's connections: a client that trickles its headers,
// one that trickles its body, and a crowd of connections that send nothing are all dropped once
// the server's timeouts pass, and meanwhile ordinary requests are answered. The header and idle
// timeouts are the production ones scaled down (Config.ReadHeaderTimeout etc.; the defaults are
// 10 s and 120 s); a body is bounded by huma's 5 s read timeout per request.

const (
	testHeaderTimeout = 300 * time.Millisecond
	testReadTimeout   = 1 * time.Second
	dropBound         = 4 * time.Second // a slow client is dropped within this of connecting
)

func shortTimeouts(c *server.Config) {
	c.ReadHeaderTimeout, c.ReadTimeout, c.IdleTimeout = testHeaderTimeout, testReadTimeout, testReadTimeout
}

// trickle writes parts one at a time, every, until the server stops taking them or they run
// out; it returns how long the connection lived and what the server sent back.
func trickle(t *testing.T, addr string, parts []string, every time.Duration) (time.Duration, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	began := time.Now()
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(bufio.NewReader(conn)) // until the server closes
		got <- string(b)
	}()
	for _, p := range parts {
		if _, err := conn.Write([]byte(p)); err != nil {
			break
		}
		select {
		case answer := <-got:
			return time.Since(began), answer
		case <-time.After(every):
		}
	}
	select {
	case answer := <-got:
		return time.Since(began), answer
	case <-time.After(dropBound):
		return time.Since(began), "(still open)"
	}
}

func TestSlowClientsAreDropped(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, sqlstore.SQLite, servertest.NoDemo, shortTimeouts)
	addr := strings.TrimPrefix(s.URL, "http://")

	t.Run("headers trickled", func(t *testing.T) {
		t.Parallel()
		parts := []string{"GET /healthz HTTP/1.1\r\nHost: x\r\n"}
		for i := range 100 {
			parts = append(parts, fmt.Sprintf("X-Slow-%d: y\r\n", i))
		}
		lived, answer := trickle(t, addr, parts, 50*time.Millisecond)
		if lived > dropBound || strings.Contains(answer, "200 OK") {
			t.Errorf("connection lived %s and got %q; want dropped after about %s", lived, answer, testHeaderTimeout)
		}
	})
	t.Run("body trickled", func(t *testing.T) {
		t.Parallel()
		parts := []string{"POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{"}
		for range 200 {
			parts = append(parts, " ")
		}
		// huma bounds every body read at 5 s (its BodyReadTimeout, under the server's ReadTimeout of
		// 60 s), and answers 408 with our error shape before closing.
		lived, answer := trickle(t, addr, parts, 50*time.Millisecond)
		if lived > 7*time.Second || !strings.Contains(answer, "408 Request Timeout") || !strings.Contains(answer, `"code":"timeout"`) {
			t.Errorf("connection lived %s and got %q; want a 408 after about 5 s", lived, answer)
		}
	})
	t.Run("idle crowd", func(t *testing.T) {
		t.Parallel()
		const n = 200
		conns := make([]net.Conn, 0, n)
		for range n {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			conns = append(conns, c)
		}
		began := time.Now()
		// While they sit there, ordinary requests are answered.
		hc := &http.Client{Timeout: 5 * time.Second}
		for range 5 {
			resp, err := hc.Get(s.URL + "/api/v1/tasks")
			if err != nil {
				t.Fatalf("an ordinary request during the crowd: %v", err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		open := 0
		for _, c := range conns {
			wg.Go(func() {
				defer c.Close()
				c.SetReadDeadline(time.Now().Add(dropBound))
				if _, err := c.Read(make([]byte, 1)); err != nil {
					if ne, ok := err.(net.Error); ok && ne.Timeout() {
						mu.Lock()
						open++
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		if open > 0 {
			t.Errorf("%d of %d idle connections still open after %s", open, n, time.Since(began).Round(time.Millisecond))
		}
	})
}

package bench

import (
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"
)

// NewClient returns an HTTP client for concurrency clients against one host: one kept-alive
// connection per client (MaxIdleConnsPerHost = concurrency, so no connection is closed and reopened
// between requests), no compression, and a dialer that refuses every address but loopback, so that
// a mistyped URL cannot turn the benchmark into a load test of someone else's server.
func NewClient(concurrency int) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second, Control: loopbackOnly}
	tr := &http.Transport{
		DialContext:           d.DialContext,
		MaxIdleConns:          concurrency,
		MaxIdleConnsPerHost:   concurrency,
		MaxConnsPerHost:       concurrency,
		IdleConnTimeout:       90 * time.Second,
		DisableCompression:    true,
		ResponseHeaderTimeout: 60 * time.Second,
		ForceAttemptHTTP2:     false,
	}
	return &http.Client{Transport: tr, Timeout: 90 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// loopbackOnly is a net.Dialer Control hook: it runs after name resolution, on the address about
// to be connected to.
func loopbackOnly(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("bench: refusing to connect to %s: only loopback targets are allowed", address)
	}
	return nil
}

// closeIdle releases the client's kept-alive connections.
func closeIdle(c *http.Client) {
	if tr, ok := c.Transport.(*http.Transport); ok {
		tr.CloseIdleConnections()
	}
}

// Package e2e runs the real dynabench binary as a child process and talks to it over HTTP on the
// loopback interface only. The tests here are slow (they build the binary) and skip under -short.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// adminPassword is the first admin's password in every test database.
const adminPassword = "e2e-admin-password-1"

var (
	buildOnce sync.Once
	buildDir  string
	buildBin  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// binary builds ./cmd/dynabench once per test process (with -race when the tests run with -race,
// so the server is checked for data races too) and returns its path. Skipped under -short.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the real binary; skipped under -short")
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "dynabench-e2e-")
		if buildErr != nil {
			return
		}
		buildBin = filepath.Join(buildDir, "dynabench")
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		args := []string{"build", "-o", buildBin}
		if raceEnabled {
			args = append(args, "-race")
		}
		args = append(args, "github.com/dynabench-go/dynabench/cmd/dynabench")
		cmd := exec.Command(goTool, args...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildBin
}

// childEnv is the test process's environment without any DYNABENCH_* variable (so a developer's
// settings cannot leak into the server), plus extra.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DYNABENCH_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// serverProc is one run of `dynabench serve`.
type serverProc struct {
	t       *testing.T
	bin     string
	dbURL   string
	base    string // http://127.0.0.1:port
	logPath string
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
}

// startServer starts `dynabench serve` on a free loopback port over dbURL and waits for /readyz.
// The process is SIGKILLed when the test ends if it is still running.
func startServer(t *testing.T, bin, dbURL, dataDir string, run int) *serverProc {
	t.Helper()
	return startServerWith(t, bin, dbURL, dataDir, run, nil, nil)
}

// startServerWith is startServer with extra serve flags and environment variables.
func startServerWith(t *testing.T, bin, dbURL, dataDir string, run int, args, env []string) *serverProc {
	t.Helper()
	var last error
	for attempt := 0; attempt < 3; attempt++ {
		addr := freeAddr(t)
		s := &serverProc{t: t, bin: bin, dbURL: dbURL, base: "http://" + addr,
			logPath: filepath.Join(dataDir, fmt.Sprintf("serve-%d-%d.log", run, attempt)), done: make(chan struct{})}
		logf, err := os.Create(s.logPath)
		if err != nil {
			t.Fatal(err)
		}
		s.cmd = exec.Command(bin, append([]string{"serve", "--addr", addr, "--database-url", dbURL, "--data-dir", dataDir,
			"--log-format", "json"}, args...)...)
		s.cmd.Env = childEnv(append([]string{"DYNABENCH_ADMIN_PASSWORD=" + adminPassword, "DYNABENCH_DEMO=true"}, env...)...)
		s.cmd.Stdout, s.cmd.Stderr = logf, logf
		s.cmd.SysProcAttr = childAttr()
		if err := s.cmd.Start(); err != nil {
			logf.Close()
			t.Fatalf("start server: %v", err)
		}
		go func() {
			s.waitErr = s.cmd.Wait()
			logf.Close()
			close(s.done)
		}()
		t.Cleanup(s.kill)
		if err = s.waitReady(30 * time.Second); err == nil {
			return s
		}
		last = err
		s.kill()
		if !strings.Contains(s.logTail(20), "address already in use") {
			break
		}
	}
	t.Fatalf("server did not become ready: %v", last)
	return nil
}

func (s *serverProc) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (s *serverProc) waitReady(timeout time.Duration) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	defer hc.CloseIdleConnections()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if s.exited() {
			return fmt.Errorf("server exited (%v); log:\n%s", s.waitErr, s.logTail(30))
		}
		resp, err := hc.Get(s.base + "/readyz")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("no 200 from /readyz within %s; log:\n%s", timeout, s.logTail(30))
}

// kill sends SIGKILL (os.Process.Kill) and waits for the process to be gone. Idempotent.
func (s *serverProc) kill() {
	if s.exited() {
		return
	}
	s.cmd.Process.Kill()
	<-s.done
}

// logTail returns the last n lines of the server's log, leaving out the access log.
func (s *serverProc) logTail(n int) string {
	b, _ := os.ReadFile(s.logPath)
	var lines []string
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if !strings.Contains(line, `"msg":"request"`) {
			lines = append(lines, line)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// logProblems returns log lines that no healthy run should print: data races, panics, errors.
func (s *serverProc) logProblems() []string {
	f, err := os.Open(s.logPath)
	if err != nil {
		return []string{err.Error()}
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	inRace := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.Contains(line, "WARNING: DATA RACE"):
			inRace = true
			out = append(out, line)
		case inRace:
			out = append(out, line)
			if strings.HasPrefix(line, "==================") {
				inRace = false
			}
		case strings.Contains(line, `"level":"ERROR"`), strings.HasPrefix(line, "panic:"), strings.HasPrefix(line, "fatal error:"):
			out = append(out, line)
		}
	}
	return out
}

// runCLI runs the binary with args (and stdin when non-empty) and returns stdout, stderr and the
// exit code.
func runCLI(t *testing.T, bin, stdin string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = childEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return stdout.String(), stderr.String(), code
}

// drift is one line of `dynabench doctor --json`.
type drift struct {
	Table   string `json:"table"`
	Key     string `json:"key"`
	Counter string `json:"counter"`
	Stored  int64  `json:"stored"`
	Counted int64  `json:"counted"`
}

// doctor runs `dynabench doctor --json` on the database and returns the drift and the exit code.
func doctor(t *testing.T, bin, dbURL string) ([]drift, int, string) {
	t.Helper()
	stdout, stderr, code := runCLI(t, bin, "", "doctor", "--json", "--database-url", dbURL)
	var out struct {
		Drift []drift `json:"drift"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("doctor --json printed no JSON (exit %d): %v\nstdout: %s\nstderr: %s", code, err, stdout, stderr)
	}
	return out.Drift, code, stderr
}

// apiClient is one user's view of the API.
type apiClient struct {
	base  string
	token string
	hc    *http.Client
}

// errTransport marks a request whose outcome is unknown: the connection failed or the answer was
// cut off, so the server may or may not have done it.
var errTransport = errors.New("transport error")

// do sends a JSON request and returns the status and body. A transport failure (including a body
// cut off mid-read) is errTransport.
func (c *apiClient) do(ctx context.Context, method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %v", errTransport, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("%w: reading body: %v", errTransport, err)
	}
	return resp.StatusCode, b, nil
}

// mustDo is do for setup and checking steps, where the server is up and any failure is fatal
// unless the status is one of want.
func (c *apiClient) mustDo(t *testing.T, method, path string, body any, out any, want ...int) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	status, b, err := c.do(ctx, method, path, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	ok := false
	for _, w := range want {
		ok = ok || status == w
	}
	if !ok {
		t.Fatalf("%s %s: status %d, want %v: %s", method, path, status, want, b)
	}
	if out != nil && len(b) > 0 && status < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: decode: %v: %s", method, path, err, b)
		}
	}
	return status
}

func newHTTPClient() *http.Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 32,
		IdleConnTimeout:     30 * time.Second,
	}
	return &http.Client{Transport: tr, Timeout: 15 * time.Second}
}

// parallel runs fn(i) for i in [0, n) on up to workers goroutines.
func parallel(n, workers int, fn func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

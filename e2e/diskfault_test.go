package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// The SQLite file's disk fills up, or the file becomes read-only, under load: writes answer 503
// "unavailable" with a message that says why, reads keep working, the server does not crash, it
// recovers by itself once the fault is gone, nothing acknowledged is lost, and the file passes
// PRAGMA integrity_check and `dynabench doctor`.

// smallFS mounts a tmpfs of size bytes at a new directory (root only), unmounted when t ends.
func smallFS(t *testing.T, size int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (needs root and CAP_SYS_ADMIN): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fill writes a file in dir until the file system is full, and returns its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			t.Fatalf("filling: %v", err)
		}
	}
	for n := 4096; n >= 1; n /= 2 { // the last partial blocks too
		for {
			if _, err := f.Write(chunk[:n]); err != nil {
				break
			}
		}
	}
	return path
}

// chattr sets or clears the immutable flag (which even root's writes obey) on the files.
func chattr(t *testing.T, flag string, files ...string) {
	t.Helper()
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			continue
		}
		if out, err := exec.Command("chattr", flag, f).CombinedOutput(); err != nil {
			t.Skipf("chattr %s %s: %v %s (needs root on a file system with attributes)", flag, f, err, out)
		}
	}
}

// integrityCheck runs PRAGMA integrity_check on a SQLite file no process has open.
func integrityCheck(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res []string
	rows, err := db.Query("PRAGMA integrity_check")
	if err != nil {
		t.Fatalf("integrity_check: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		rows.Scan(&s)
		res = append(res, s)
	}
	return strings.Join(res, "; ")
}

type faultCase struct {
	name   string
	inject func(t *testing.T, dbPath string) // called under load
	heal   func(t *testing.T, dbPath string)
	// message is what the 503's message must say.
	message string
}

func TestSQLiteDiskFaults(t *testing.T) {
	bin := binary(t)
	var filler string
	cases := []faultCase{
		{
			name: "disk full",
			inject: func(t *testing.T, dbPath string) {
				filler = fill(t, filepath.Dir(dbPath))
			},
			heal:    func(t *testing.T, dbPath string) { os.Remove(filler) },
			message: "disk is full",
		},
		{
			name: "read-only",
			inject: func(t *testing.T, dbPath string) {
				t.Cleanup(func() { exec.Command("chattr", "-i", dbPath, dbPath+"-wal", dbPath+"-shm").Run() })
				chattr(t, "+i", dbPath, dbPath+"-wal", dbPath+"-shm")
			},
			heal: func(t *testing.T, dbPath string) {
				chattr(t, "-i", dbPath, dbPath+"-wal", dbPath+"-shm")
			},
			message: "cannot be written",
		},
	}
	for _, fc := range cases {
		t.Run(strings.ReplaceAll(fc.name, " ", "_"), func(t *testing.T) {
			dir := t.TempDir()
			if fc.name == "disk full" {
				dir = smallFS(t, 48<<20)
			}
			sqliteFault(t, bin, filepath.Join(dir, "dynabench.db"), fc)
		})
	}
}

func sqliteFault(t *testing.T, bin, dbPath string, fc faultCase) {
	dataDir := t.TempDir()
	srv := startServer(t, bin, dbPath, dataDir, 0)
	users := []string{"df1", "df2", "df3", "df4"}
	tokens, need := accounts(t, srv, users)
	clientTokens := map[string]string{}
	for _, u := range users {
		clientTokens[u] = tokens[u]
	}
	l := newLedger()
	var seq atomic.Int64
	load := startLoad(srv, l, clientTokens, users[:3], users[1:], &seq)
	defer load.stop()
	time.Sleep(1500 * time.Millisecond)
	before := l.acked()
	var cx struct {
		ID string `json:"id"`
	}
	probeClient := &apiClient{base: srv.base, token: tokens["df4"], hc: load.hc}
	probeClient.mustDo(t, http.MethodGet, "/api/v1/tasks/sentiment/context", nil, &cx, 200)

	fc.inject(t, dbPath)
	faulted := time.Now()
	rng := rand.New(rand.NewPCG(5, 5))
	// Writes must start failing with a clear 503 (the database may absorb a few first: free pages,
	// WAL space), and every answer must come fast.
	var first503 time.Duration
	var message string
	slowest := time.Duration(0)
	reads, readsOK := 0, 0
	for time.Since(faulted) < 10*time.Second {
		began := time.Now()
		status, body := directWrite(t, load.w, "df4", cx.ID, rng)
		slowest = max(slowest, time.Since(began))
		if status == http.StatusServiceUnavailable && first503 == 0 {
			first503 = time.Since(faulted)
			message = body
		}
		if st, _, err := probeClient.do(context.Background(), http.MethodGet, "/api/v1/tasks/sentiment", nil); err == nil {
			reads++
			if st == http.StatusOK {
				readsOK++
			}
		}
		if first503 != 0 && time.Since(faulted) > first503+2*time.Second {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if first503 == 0 {
		t.Fatalf("%s: no write answered 503 within 10 s of the fault; server log:\n%s", fc.name, srv.logTail(20))
	}
	if !strings.Contains(message, `"code":"unavailable"`) || !strings.Contains(message, fc.message) {
		t.Errorf("%s: the 503 says %s; want code unavailable and %q", fc.name, message, fc.message)
	}
	if slowest > failFastBound {
		t.Errorf("%s: a write took %s to answer", fc.name, slowest)
	}
	during := l.acked() - before

	fc.heal(t, dbPath)
	healed := time.Now()
	var recovered time.Duration
	for time.Since(healed) < recoverBound {
		if status, _ := directWrite(t, load.w, "df4", cx.ID, rng); status == http.StatusCreated {
			recovered = time.Since(healed)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if recovered == 0 {
		t.Fatalf("%s: no write succeeded within %s of the fault's end; server log:\n%s", fc.name, recoverBound, srv.logTail(20))
	}
	afterHeal := l.acked()
	time.Sleep(1 * time.Second)
	load.stop()
	after := l.acked() - afterHeal
	if srv.exited() {
		t.Fatalf("the server exited: %v\n%s", srv.waitErr, srv.logTail(30))
	}
	l.mu.Lock()
	unexpected := append([]string(nil), l.unexpected...)
	l.mu.Unlock()
	if len(unexpected) > 0 {
		sort.Strings(unexpected)
		t.Errorf("%d unexpected answer(s) under load, e.g.:\n%s", len(unexpected), strings.Join(unexpected[:min(len(unexpected), 20)], "\n"))
	}
	verify(t, srv, l, tokens, need)
	srv.kill()
	if drift, code, stderr := doctor(t, bin, dbPath); code != 0 || len(drift) > 0 {
		t.Errorf("doctor exit %d, drift %+v %s", code, drift, stderr)
	}
	if res := integrityCheck(t, dbPath); res != "ok" {
		t.Errorf("PRAGMA integrity_check: %s", res)
	}
	if p := unexpectedLogProblems(srv); len(p) > 0 {
		t.Errorf("the server logged problems:\n%s", strings.Join(p[:min(len(p), 20)], "\n"))
	}
	t.Logf("%s: first 503 %s after the fault (%s); %d/%d reads answered 200 meanwhile; slowest write answer %s; load saw %d 503(s); examples acknowledged %d before, %d during, %d after; first write %s after the fault ended; integrity ok, no drift, nothing acknowledged lost",
		fc.name, first503.Round(time.Millisecond), strings.TrimSpace(message), readsOK, reads, slowest.Round(time.Millisecond),
		load.w.unavailable.Load(), before, during, after, recovered.Round(time.Millisecond))
}

// directWrite submits one example as user and returns the status and the raw body; the write goes
// into the ledger (acknowledged on 201, of unknown outcome on 503).
func directWrite(t *testing.T, w *workload, user, contextID string, rng *rand.Rand) (int, string) {
	nonce := fmt.Sprintf("%s-%d", user, w.seq.Add(1))
	input := map[string]any{"statement": fmt.Sprintf("%s [e2e:%s]", phrases[rng.IntN(len(phrases))], nonce), "label": "positive"}
	rec := &written{nonce: nonce, task: "sentiment", user: user, contextID: contextID, input: jsonRoundTrip(input)}
	w.l.mu.Lock()
	w.l.byNonce[nonce] = rec
	w.l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 3*failFastBound)
	defer cancel()
	status, b, err := w.clients[user].do(ctx, http.MethodPost, "/api/v1/tasks/sentiment/examples",
		map[string]any{"context_id": contextID, "input": input})
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	switch {
	case err != nil || status == http.StatusServiceUnavailable:
		w.l.cycle.unknown++
	case status == http.StatusCreated:
		var eb exampleBody
		if json.Unmarshal(b, &eb) == nil {
			var id int64
			fmt.Sscan(eb.Example.ID, &id)
			rec.id, rec.acked = id, true
			w.l.byID[id] = rec
			w.l.own[user] = append(w.l.own[user], id)
			w.l.cycle.examples++
		}
	default:
		delete(w.l.byNonce, nonce)
		w.l.unexpected = append(w.l.unexpected, fmt.Sprintf("probe write: %d %s", status, b))
	}
	return status, string(b)
}

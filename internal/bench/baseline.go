package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	_ "modernc.org/sqlite"             // the "sqlite" driver

	"github.com/dynabench-go/dynabench/internal/sqlstore"
)

// Baseline is the bare reference point: a net/http handler that decodes the same JSON body the
// server gets and does one INSERT into a scratch table of the same database — no authentication,
// no reads, no model, no counters. It listens on its own loopback port.
type Baseline struct {
	URL      string // the endpoint to POST to
	Settings string // the database settings as the baseline's own connection reports them
	db       *sql.DB
	srv      *http.Server
	done     chan error
}

// baselineDDL creates the scratch table; its key is declared like the examples table's.
var baselineDDL = map[string]string{
	sqlstore.SQLite: `CREATE TABLE IF NOT EXISTS bench_baseline (id INTEGER PRIMARY KEY AUTOINCREMENT,
		body TEXT NOT NULL, created_at BIGINT NOT NULL)`,
	sqlstore.Postgres: `CREATE TABLE IF NOT EXISTS bench_baseline (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		body TEXT NOT NULL, created_at BIGINT NOT NULL)`,
}

// StartBaseline opens its own connection to the database at dbURL (configured as sqlstore
// configures the server's writer), creates the scratch table and starts serving.
func StartBaseline(ctx context.Context, dbURL, engine, synchronous string) (*Baseline, error) {
	db, err := openBaselineDB(dbURL, engine, synchronous)
	if err != nil {
		return nil, err
	}
	b := &Baseline{db: db, done: make(chan error, 1)}
	if err := b.prepare(ctx, engine); err != nil {
		db.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		db.Close()
		return nil, err
	}
	b.URL = "http://" + ln.Addr().String() + "/examples"
	b.srv = &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	go func() { b.done <- b.srv.Serve(ln) }()
	return b, nil
}

// openBaselineDB mirrors sqlstore.Open: for SQLite the same pragmas in the same order and one
// write connection (writes serialised in-process); for PostgreSQL a pool of sqlstore's default size.
func openBaselineDB(dbURL, engine, synchronous string) (*sql.DB, error) {
	if engine == sqlstore.Postgres {
		db, err := sql.Open("pgx", dbURL)
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(16)
		db.SetMaxIdleConns(16)
		return db, nil
	}
	sync := strings.ToUpper(synchronous)
	if sync == "" {
		sync = "FULL"
	}
	path := strings.TrimPrefix(strings.TrimPrefix(dbURL, "sqlite:"), "file:")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous("+sync+")")
	db, err := sql.Open("sqlite", "file:"+abs+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	return db, nil
}

// prepare creates the table and records the settings the connection really runs with.
func (b *Baseline) prepare(ctx context.Context, engine string) error {
	if _, err := b.db.ExecContext(ctx, baselineDDL[engine]); err != nil {
		return fmt.Errorf("bench: baseline table: %w", err)
	}
	if engine != sqlstore.SQLite {
		b.Settings = "postgres pool of 16"
		return nil
	}
	var mode string
	var sync int
	if err := b.db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		return err
	}
	if err := b.db.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync); err != nil {
		return err
	}
	names := map[int]string{0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}
	b.Settings = fmt.Sprintf("journal_mode=%s synchronous=%s, one write connection", mode, names[sync])
	return nil
}

// ServeHTTP decodes the example body and inserts it.
func (b *Baseline) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var p payload
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 256<<10)).Decode(&p); err != nil {
		http.Error(w, "bad JSON: "+err.Error(), http.StatusBadRequest)
		return
	}
	body, err := json.Marshal(p)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var id int64
	err = b.db.QueryRowContext(r.Context(), `INSERT INTO bench_baseline (body, created_at) VALUES ($1, $2) RETURNING id`,
		string(body), time.Now().UnixMilli()).Scan(&id)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	w.Write([]byte(`{"id":"` + strconv.FormatInt(id, 10) + `"}`))
}

// Close stops serving and closes the connection.
func (b *Baseline) Close(ctx context.Context) error {
	err := b.srv.Shutdown(ctx)
	if serr := <-b.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if cerr := b.db.Close(); err == nil {
		err = cerr
	}
	return err
}

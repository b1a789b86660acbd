package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynabench-go/dynabench/internal/bench"
	"github.com/dynabench-go/dynabench/internal/server"
)

// benchCmd load-tests the example-submit path against a bare-insert baseline on the same database.
func benchCmd(cfg *server.Config, logger func() *slog.Logger) *cobra.Command {
	var opt bench.Options
	var cpuProfile, serverLog string
	var asJSON bool
	c := &cobra.Command{
		Use:   "bench",
		Short: "Load-test example submission (built-in model in the loop) against a one-INSERT baseline",
		Long: `Starts the server in-process on a fresh database (a temporary SQLite file, or a new schema in the
PostgreSQL database given with --database-url, dropped afterwards), creates accounts with API tokens,
and has --concurrency clients POST examples to it over loopback HTTP, the built-in model answering
each. In the same run, on the same database, the same bodies go to a bare net/http handler that does
one INSERT. Prints throughput and latency percentiles of both and the ratio; progress goes to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opt.Synchronous = cfg.Synchronous
			opt.Progress = cmd.ErrOrStderr()
			closeFiles, err := benchFiles(&opt, cpuProfile, serverLog)
			if err != nil {
				return err
			}
			defer closeFiles()
			logger().Debug("bench starting", "task", opt.Task, "concurrency", opt.Concurrency)
			rep, err := bench.Compare(cmd.Context(), opt)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			rep.WriteText(cmd.OutOrStdout())
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&opt.Task, "task", "nli", "demo task to submit to: sentiment, nli, qa or hs")
	f.IntVar(&opt.Concurrency, "concurrency", 32, "concurrent clients, each with one request in flight")
	f.IntVar(&opt.Users, "users", 0, "accounts the clients share (default: one per client)")
	f.DurationVar(&opt.Duration, "duration", 10*time.Second, "measured time per target")
	f.IntVar(&opt.Requests, "requests", 0, "stop each target after this many measured requests (0: duration only)")
	f.DurationVar(&opt.Warmup, "warmup", 2*time.Second, "unmeasured load before each measured window")
	f.IntVar(&opt.Rounds, "rounds", 2, "alternating measurement windows per target")
	f.Float64Var(&opt.Rate, "rate", 0, "pace each target at this many requests/s (latency at a given load); 0: every client sends as fast as it is answered (throughput)")
	// Shadows the global flag and ignores DYNABENCH_DATABASE_URL: a benchmark never writes into
	// the configured database, only into a fresh file or schema.
	f.StringVar(&opt.DatabaseURL, "database-url", "", "empty: a temporary SQLite file; a new SQLite path; or a postgres:// URL in which a fresh schema is created and dropped")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the first measured server window to this file")
	f.StringVar(&serverLog, "server-log", "", "write the server's request log to this file (default: formatted, then discarded)")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return c
}

// benchFiles opens the optional profile and log files and returns their closer.
func benchFiles(opt *bench.Options, cpuProfile, serverLog string) (func(), error) {
	var files []io.Closer
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	for _, p := range []struct {
		path string
		dst  *io.Writer
	}{{cpuProfile, &opt.CPUProfile}, {serverLog, &opt.ServerLog}} {
		if p.path == "" {
			continue
		}
		f, err := os.Create(p.path)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("bench: %w", err)
		}
		files = append(files, f)
		*p.dst = f
	}
	return closeAll, nil
}

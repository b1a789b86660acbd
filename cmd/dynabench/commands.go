package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/server"
	"github.com/dynabench-go/dynabench/internal/service"
	"github.com/dynabench-go/dynabench/internal/sqlstore"
)

// env returns the DYNABENCH_<name> variable or def.
func env(name, def string) string {
	if v, ok := os.LookupEnv("DYNABENCH_" + name); ok {
		return v
	}
	return def
}

func newRootCmd() *cobra.Command {
	var cfg server.Config
	var logFormat, logLevel string
	root := &cobra.Command{
		Use:           "dynabench",
		Short:         "Dynamic adversarial benchmarking: one binary, the whole loop",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&cfg.DatabaseURL, "database-url", env("DATABASE_URL", ""), "SQLite file path or postgres:// URL (env DYNABENCH_DATABASE_URL; default <data-dir>/dynabench.db)")
	pf.StringVar(&cfg.DataDir, "data-dir", env("DATA_DIR", "."), "directory for the SQLite file and blobs (env DYNABENCH_DATA_DIR)")
	pf.StringVar(&cfg.Synchronous, "sqlite-synchronous", env("SQLITE_SYNCHRONOUS", "FULL"), "SQLite synchronous pragma: FULL survives power loss, NORMAL only process crashes")
	pf.StringVar(&logFormat, "log-format", env("LOG_FORMAT", "text"), "log format: text or json")
	pf.StringVar(&logLevel, "log-level", env("LOG_LEVEL", "info"), "log level: debug, info, warn, error")
	logger := func() *slog.Logger {
		var lvl slog.Level
		if err := lvl.UnmarshalText([]byte(logLevel)); err != nil {
			lvl = slog.LevelInfo
		}
		opts := &slog.HandlerOptions{Level: lvl}
		if logFormat == "json" {
			return slog.New(slog.NewJSONHandler(os.Stderr, opts))
		}
		return slog.New(slog.NewTextHandler(os.Stderr, opts))
	}
	cfg.Version = version
	root.AddCommand(serveCmd(&cfg, logger), migrateCmd(&cfg, logger), versionCmd(), userCmd(&cfg, logger), doctorCmd(&cfg, logger))
	root.AddCommand(benchCmd(&cfg, logger))
	root.AddCommand(modelCmd(&cfg, logger), workerCmd(logger), roundCmd(), exportCmd(), simulateCmd())
	return root
}

func serveCmd(cfg *server.Config, logger func() *slog.Logger) *cobra.Command {
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the API (creates, migrates and seeds the database on first start)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.AdminPassword = os.Getenv("DYNABENCH_ADMIN_PASSWORD")
			log := logger()
			m, err := server.Open(cmd.Context(), *cfg, log)
			if err != nil {
				return err
			}
			defer m.Close()
			if err := m.Listen(); err != nil {
				return err
			}
			return m.Serve(cmd.Context())
		},
	}
	f := c.Flags()
	f.StringVar(&cfg.Addr, "addr", env("ADDR", ":8080"), "listen address (env DYNABENCH_ADDR)")
	f.BoolVar(&cfg.Demo, "demo", env("DEMO", "true") == "true", "seed the four demo tasks on an empty database")
	f.BoolVar(&cfg.OpenRegistration, "open-registration", env("OPEN_REGISTRATION", "true") == "true", "let anyone register")
	f.BoolVar(&cfg.DenyPrivateModelURLs, "deny-private-model-urls", env("DENY_PRIVATE_MODEL_URLS", "false") == "true", "refuse to call models on loopback or private addresses (set where untrusted users register models)")
	f.BoolVar(&cfg.TrustProxy, "trust-proxy", env("TRUST_PROXY", "false") == "true", "take client addresses from X-Forwarded-For (only behind your own proxy)")
	f.DurationVar(&cfg.JobLease, "job-lease", 60*time.Second, "how long a worker holds an evaluation job between heartbeats; a dead worker's job passes to another after it")
	f.IntVar(&cfg.Workers, "workers", 1, "in-process evaluation workers (0 for none, when dynabench worker processes run elsewhere)")
	return c
}

func openDB(ctx context.Context, cfg *server.Config) (*sqlstore.DB, error) {
	return sqlstore.Open(ctx, cfg.DatabaseURLOrDefault(), sqlstore.Options{Synchronous: cfg.Synchronous})
}

func migrateCmd(cfg *server.Config, logger func() *slog.Logger) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply pending database migrations",
		RunE: func(cmd *cobra.Command, _ []string) error {
			db, err := openDB(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			defer db.Close()
			n, err := db.Migrate(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: applied %d migration(s); schema is current\n", db.Engine, n)
			return nil
		},
	}
}

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Run:   func(cmd *cobra.Command, _ []string) { fmt.Fprintln(cmd.OutOrStdout(), "dynabench", version) },
	}
}

func userCmd(cfg *server.Config, logger func() *slog.Logger) *cobra.Command {
	user := &cobra.Command{Use: "user", Short: "Manage accounts"}
	var username, email string
	var admin, stdin bool
	create := &cobra.Command{
		Use:   "create",
		Short: "Create an account (the password is read from the terminal, or stdin with --password-stdin)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			password, err := readPassword(cmd, stdin)
			if err != nil {
				return err
			}
			db, err := openDB(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			defer db.Close()
			if _, err := db.Migrate(cmd.Context()); err != nil {
				return err
			}
			svc := service.New(sqlstore.NewStore(db), nil, logger())
			u, err := svc.CreateUser(cmd.Context(), username, email, password, admin)
			if err != nil {
				return cliError(err)
			}
			role := "user"
			if u.Admin {
				role = "admin"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created %s %q (id %d)\n", role, u.Username, u.ID)
			return nil
		},
	}
	f := create.Flags()
	f.StringVar(&username, "username", "", "username (required)")
	f.StringVar(&email, "email", "", "email (required)")
	f.BoolVar(&admin, "admin", false, "grant the admin role")
	f.BoolVar(&stdin, "password-stdin", false, "read the password from standard input")
	create.MarkFlagRequired("username")
	create.MarkFlagRequired("email")
	user.AddCommand(create)
	return user
}

func readPassword(cmd *cobra.Command, stdin bool) (string, error) {
	if stdin || !term.IsTerminal(int(os.Stdin.Fd())) {
		var b strings.Builder
		buf := make([]byte, 1024)
		for b.Len() <= 1024 {
			n, err := cmd.InOrStdin().Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return strings.TrimRight(b.String(), "\r\n"), nil
	}
	fmt.Fprint(cmd.ErrOrStderr(), "Password: ")
	pw, err := term.ReadPassword(int(os.Stdin.Fd()))
	fmt.Fprintln(cmd.ErrOrStderr())
	return string(pw), err
}

// cliError turns a rule's error into one line for stderr.
func cliError(err error) error {
	if de, ok := err.(*dynabench.Error); ok {
		var parts []string
		for _, d := range de.Details {
			parts = append(parts, d.Field+": "+d.Message)
		}
		if len(parts) > 0 {
			return fmt.Errorf("%s", strings.Join(parts, "; "))
		}
	}
	return err
}

func doctorCmd(cfg *server.Config, logger func() *slog.Logger) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Recount every counter from the rows and report drift (exit 1 when any)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			db, err := openDB(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			defer db.Close()
			drift, err := sqlstore.NewStore(db).Recount(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]any{"drift": drift})
			} else if len(drift) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "ok: every counter equals a recount of the rows")
			} else {
				for _, d := range drift {
					fmt.Fprintf(cmd.OutOrStdout(), "%s %s %s: stored %d, counted %d\n", d.Table, d.Key, d.Counter, d.Stored, d.Counted)
				}
			}
			if len(drift) > 0 {
				return fmt.Errorf("%d counter(s) drifted", len(drift))
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

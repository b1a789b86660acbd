package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/blob"
	"github.com/dynabench-go/dynabench/internal/demo"
	"github.com/dynabench-go/dynabench/internal/server"
	"github.com/dynabench-go/dynabench/internal/sqlstore"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
	"github.com/dynabench-go/dynabench/internal/training"
)

// blobsDir is where registered artifacts live under the data directory.
const blobsDir = "blobs"

// modelCmd groups the commands for built-in models: train one on a task's data, serve one over the
// Dynabench model protocol, show an artifact's manifest.
func modelCmd(cfg *server.Config, logger func() *slog.Logger) *cobra.Command {
	c := &cobra.Command{Use: "model", Short: "Train, register, inspect and serve built-in models; submit models served over HTTP"}
	c.AddCommand(modelTrainCmd(cfg), modelServeCmd(logger), modelShowCmd(), modelSubmitCmd())
	return c
}

// trainFlags are the flags of `model train`.
type trainFlags struct {
	task, name, out, owner, features string
	rounds                           []int
	data                             []string
	seedData, register, publish      bool
	asJSON, quiet                    bool
	opts                             training.Options
}

func modelTrainCmd(cfg *server.Config) *cobra.Command {
	var f trainFlags
	c := &cobra.Command{
		Use:   "train",
		Short: "Train a built-in model on a task's seed data, data files and verified round examples",
		Long: `Trains the task's built-in model (a classifier for label tasks, pair features for NLI-shaped
configs; the span model for QA) on the sources given, holds out a deterministic share of the rows,
and reports the model's scores on them. The artifact (model + manifest) is written to --out, and with
--register stored under <data-dir>/blobs and registered as a new built-in model of the task.

Sources: --seed-data (a demo task's seed set), --data FILE (JSONL: the config's fields per line, or
{"input": {...}, "label": ...}; repeatable), --rounds 1,2 (the rounds' verified examples).`,
		Example: `  dynabench model train --task nli --seed-data --rounds 1 --register
  dynabench model train --task sentiment --data extra.jsonl --seed 7 --out sentiment.dbm`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTrain(cmd, cfg, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.task, "task", "", "task code (required)")
	fl.IntSliceVar(&f.rounds, "rounds", nil, "round numbers whose verified examples to train on, e.g. 1,2")
	fl.BoolVar(&f.seedData, "seed-data", false, "train on the demo task's seed set")
	fl.StringArrayVar(&f.data, "data", nil, "JSONL data file to train on (repeatable)")
	fl.StringVar(&f.name, "name", "", "name of the registered model (default <task>-builtin-<model hash>)")
	fl.Uint64Var(&f.opts.Seed, "seed", 1, "training seed; the same data and seed give the same model")
	fl.Float64Var(&f.opts.HeldOut, "heldout", training.DefaultHeldOut, "share of rows held out for scoring (0 for none)")
	fl.StringVar(&f.features, "features", training.FeaturesAuto, "classifier features: auto, text or pair")
	fl.IntVar(&f.opts.Epochs, "epochs", 0, "training epochs (default 10)")
	fl.StringVar(&f.out, "out", "", "write the artifact here (default <task>.dbm unless --register)")
	fl.BoolVar(&f.register, "register", false, "store the artifact under <data-dir>/blobs and register it as a model of the task")
	fl.StringVar(&f.owner, "owner", "admin", "username the registered model belongs to")
	fl.BoolVar(&f.publish, "publish", false, "publish the registered model")
	fl.BoolVar(&f.asJSON, "json", false, "print the manifest as JSON instead of a summary")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
	c.MarkFlagRequired("task")
	return c
}

func runTrain(cmd *cobra.Command, cfg *server.Config, f trainFlags) error {
	ctx := cmd.Context()
	if !f.seedData && len(f.data) == 0 && len(f.rounds) == 0 {
		return errors.New("nothing to train on: give --seed-data, --data FILE or --rounds N,...")
	}
	if f.opts.HeldOut == 0 {
		f.opts.HeldOut = -1 // --heldout 0: train on every row (0 in Options means the default)
	}
	if f.out == "" && !f.register {
		f.out = f.task + ".dbm"
	}
	db, err := openDB(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return err
	}
	store := sqlstore.NewStore(db)
	task, tcfg, err := loadTask(ctx, store, f.task)
	if err != nil {
		return err
	}
	prog := newProgress(cmd.ErrOrStderr(), f.quiet)
	defer prog.close()
	data, err := gatherSources(ctx, store, task, tcfg, f, prog.report)
	if err != nil {
		return err
	}
	f.opts.Task, f.opts.Features, f.opts.CodeVersion = task.Code, f.features, cfg.Version
	a, err := training.Train(ctx, tcfg, data, f.opts, prog.report)
	if err != nil {
		return cliError(err)
	}
	prog.close()
	if err := saveArtifact(ctx, cmd, cfg, store, task, a, &f); err != nil {
		return err
	}
	if f.asJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(a.Manifest)
	}
	return nil
}

func loadTask(ctx context.Context, store dynabench.Store, code string) (*dynabench.Task, *taskconfig.Config, error) {
	task, err := store.FindTaskByCode(ctx, code)
	if dynabench.IsCode(err, dynabench.ENOTFOUND) {
		return nil, nil, fmt.Errorf("no task %q in this database (dynabench serve seeds the demo tasks)", code)
	} else if err != nil {
		return nil, nil, err
	}
	tcfg, rep := taskconfig.Parse([]byte(task.ConfigSource))
	if !rep.OK() {
		return nil, nil, fmt.Errorf("task %q: its config has problems: %v", code, rep.Problems[0])
	}
	return task, tcfg, nil
}

// gatherSources reads every source the flags name, in a fixed order: seed set, files, rounds.
func gatherSources(ctx context.Context, store dynabench.Store, task *dynabench.Task, cfg *taskconfig.Config, f trainFlags,
	progress training.Progress) (training.Dataset, error) {
	var data training.Dataset
	if f.seedData {
		src, err := demoSeed(task.Code, cfg)
		if err != nil {
			return data, err
		}
		data.Sources = append(data.Sources, src)
	}
	for _, path := range f.data {
		src, err := readDataFile(path, cfg)
		if err != nil {
			return data, err
		}
		data.Sources = append(data.Sources, src)
	}
	if len(f.rounds) > 0 {
		rounds, err := findRounds(ctx, store, task, f.rounds)
		if err != nil {
			return data, err
		}
		srcs, err := training.RoundSources(ctx, store, cfg, rounds, progress)
		if err != nil {
			return data, cliError(err)
		}
		data.Sources = append(data.Sources, srcs...)
	}
	return data, nil
}

func demoSeed(code string, cfg *taskconfig.Config) (training.Source, error) {
	tasks, err := demo.Tasks()
	if err != nil {
		return training.Source{}, err
	}
	for _, t := range tasks {
		if t.Code == code {
			src, err := training.SeedSource("seed:"+code, cfg, t.Seed)
			return src, cliError(err)
		}
	}
	return training.Source{}, fmt.Errorf("--seed-data: %q is not a demo task; only demo tasks ship a seed set", code)
}

func readDataFile(path string, cfg *taskconfig.Config) (training.Source, error) {
	fh, err := os.Open(path)
	if err != nil {
		return training.Source{}, fmt.Errorf("--data: %w", err)
	}
	defer fh.Close()
	src, err := training.ReadJSONL("file:"+filepath.Base(path), cfg, fh)
	if err != nil {
		return training.Source{}, fmt.Errorf("--data %s: %w", path, cliError(err))
	}
	return src, nil
}

func findRounds(ctx context.Context, store dynabench.Store, task *dynabench.Task, numbers []int) ([]*dynabench.Round, error) {
	var rounds []*dynabench.Round
	seen := map[int]bool{}
	for _, n := range numbers {
		if seen[n] {
			continue
		}
		seen[n] = true
		r, err := store.FindRound(ctx, task.ID, n)
		if dynabench.IsCode(err, dynabench.ENOTFOUND) {
			return nil, fmt.Errorf("--rounds: task %q has no round %d", task.Code, n)
		} else if err != nil {
			return nil, err
		}
		rounds = append(rounds, r)
	}
	return rounds, nil
}

// saveArtifact writes --out and registers the model, then prints the summary.
func saveArtifact(ctx context.Context, cmd *cobra.Command, cfg *server.Config, store dynabench.Store, task *dynabench.Task,
	a *training.Artifact, f *trainFlags) error {
	w := cmd.OutOrStdout()
	if f.asJSON {
		w = io.Discard
	}
	printSummary(w, a)
	if f.out != "" {
		file, err := a.MarshalBinary()
		if err != nil {
			return err
		}
		if err := writeFileAtomic(f.out, file); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %s (%d bytes)\n", f.out, len(file))
	}
	if !f.register {
		return nil
	}
	m, rec, err := registerModel(ctx, cfg, store, task, a, f)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "registered model %d %q (blob %s)\n", m.ID, m.Name, rec.BlobKey)
	return nil
}

func registerModel(ctx context.Context, cfg *server.Config, store dynabench.Store, task *dynabench.Task, a *training.Artifact,
	f *trainFlags) (*dynabench.Model, *dynabench.ModelArtifact, error) {
	owner, err := store.FindUserByUsername(ctx, f.owner)
	if dynabench.IsCode(err, dynabench.ENOTFOUND) {
		return nil, nil, fmt.Errorf("--owner: no user %q", f.owner)
	} else if err != nil {
		return nil, nil, err
	}
	blobs, err := blob.NewDir(filepath.Join(cmp.Or(cfg.DataDir, "."), blobsDir))
	if err != nil {
		return nil, nil, err
	}
	defer blobs.Close()
	name := f.name
	if name == "" {
		name = fmt.Sprintf("%s-builtin-%s", task.Code, a.Manifest.ModelSHA256[:8])
	}
	m := &dynabench.Model{TaskID: task.ID, UserID: owner.ID, Name: name, Published: f.publish, Card: modelCard(a.Manifest)}
	rec, err := training.Register(ctx, store, blobs, a, m)
	if err != nil {
		return nil, nil, cliError(err)
	}
	return m, rec, nil
}

// modelCard is the registered model's card: what it is and how it was trained, in Markdown.
func modelCard(m training.Manifest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Built-in %s (%s), trained with `dynabench model train` (seed %d, code %s).\n\n", m.Model, m.Kind, m.Seed, m.CodeVersion)
	b.WriteString("| source | rows | held out | sha256 |\n|---|---|---|---|\n")
	for _, s := range m.Sources {
		fmt.Fprintf(&b, "| %s | %d | %d | `%s` |\n", s.Name, s.Rows, s.HeldOut, s.SHA256[:12])
	}
	if len(m.HeldOutScores) > 0 {
		fmt.Fprintf(&b, "\nHeld-out scores (%d rows): %s.\n", m.HeldOutRows, scoreList(m.HeldOutScores))
	}
	return b.String()
}

func scoreList(scores map[string]float64) string {
	names := make([]string, 0, len(scores))
	for n := range scores {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %.3f", n, scores[n])
	}
	return strings.Join(parts, ", ")
}

func printSummary(w io.Writer, a *training.Artifact) {
	m := a.Manifest
	fmt.Fprintf(w, "task %s: %s %s, seed %d\n", m.Task, m.Kind, m.Model, m.Seed)
	for _, s := range m.Sources {
		skipped := ""
		if s.Skipped > 0 {
			skipped = fmt.Sprintf(", %d skipped", s.Skipped)
		}
		fmt.Fprintf(w, "  source %-24s %6d rows (%d held out%s)  sha256 %s\n", s.Name, s.Rows, s.HeldOut, skipped, s.SHA256[:12])
	}
	fmt.Fprintf(w, "trained on %d rows; held out %d", m.TrainRows, m.HeldOutRows)
	if len(m.HeldOutScores) > 0 {
		fmt.Fprintf(w, ": %s", scoreList(m.HeldOutScores))
	}
	if m.HeldOutFailures > 0 {
		fmt.Fprintf(w, " (%d rows the model could not read)", m.HeldOutFailures)
	}
	fmt.Fprintf(w, "\nmodel sha256 %s\n", m.ModelSHA256)
}

// writeFileAtomic writes data to path through a synced temporary file in the same directory, so the
// path holds the old file or the whole new one.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("--out: %w", err)
	}
	return nil
}

// progress shows training stages on stderr: a progress bar per stage on a terminal (a spinner with
// the elapsed time for a stage that cannot count, like the trainer's epochs), one line per stage
// otherwise.
type progress struct {
	w     io.Writer
	tty   bool
	quiet bool

	mu          sync.Mutex
	stage       string
	done, total int
	started     time.Time
	bar         *progressbar.ProgressBar
}

func newProgress(w io.Writer, quiet bool) *progress {
	p := &progress{w: w, quiet: quiet}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
	}
	return p
}

// report is a training.Progress.
func (p *progress) report(stage string, done, total int) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if stage != p.stage {
		p.finishLocked()
		p.stage, p.started = stage, time.Now()
		p.startLocked(total)
	}
	p.done, p.total = done, total
	if p.bar != nil && total > 1 {
		p.bar.Set(done)
	}
	if p.bar != nil && total < 0 {
		p.bar.Describe(fmt.Sprintf("%s (%d rows)", stage, done))
	}
}

func (p *progress) startLocked(total int) {
	if !p.tty {
		return
	}
	opts := []progressbar.Option{progressbar.OptionSetWriter(p.w), progressbar.OptionSetDescription(p.stage),
		progressbar.OptionSetElapsedTime(true), progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(p.w) })}
	if total > 1 {
		p.bar = progressbar.NewOptions(total, append(opts, progressbar.OptionShowCount())...)
		return
	}
	// A stage that cannot count its work: a spinner, which the library keeps turning (and its elapsed
	// time moving) once rendered.
	p.bar = progressbar.NewOptions(-1, append(opts, progressbar.OptionSpinnerType(14), progressbar.OptionSetRenderBlankState(true))...)
}

func (p *progress) finishLocked() {
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
	if !p.tty && p.stage != "" && !p.quiet {
		count := ""
		if p.total < 0 || p.total > 1 {
			count = fmt.Sprintf(" %d rows", p.done)
		}
		fmt.Fprintf(p.w, "%s%s in %s\n", p.stage, count, time.Since(p.started).Round(time.Millisecond))
	}
}

// close ends the last stage.
func (p *progress) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finishLocked()
	p.stage = ""
}

func modelServeCmd(logger func() *slog.Logger) *cobra.Command {
	var path, addr string
	var opts training.HandlerOptions
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve a trained artifact over the Dynabench model protocol (Dynalab 2.0)",
		Long: `Serves POST /model/single_evaluation and POST /model/batch_evaluation, as Dynabench model containers
do, plus GET /healthz. Register the URL as a dynalab model of the task to put it in the loop.`,
		Example: "  dynabench model serve --model nli.dbm --addr :9090",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, m, err := loadArtifactFile(path)
			if err != nil {
				return err
			}
			opts.Log = logger()
			return serveModel(cmd.Context(), cmd.OutOrStdout(), addr, training.NewHandler(p, m, opts), m)
		},
	}
	f := c.Flags()
	f.StringVar(&path, "model", "", "artifact file written by `dynabench model train --out` (required)")
	f.StringVar(&addr, "addr", ":9090", "listen address")
	f.Int64Var(&opts.MaxBodyBytes, "max-body", 1<<20, "request body limit in bytes")
	f.IntVar(&opts.MaxBatch, "max-batch", 256, "samples per batch_evaluation request")
	c.MarkFlagRequired("model")
	return c
}

func loadArtifactFile(path string) (dynabench.Predictor, *training.Manifest, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--model: %w", err)
	}
	if st.Size() > training.MaxArtifactBytes {
		return nil, nil, fmt.Errorf("--model: %s is %d bytes, larger than any artifact", path, st.Size())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--model: %w", err)
	}
	p, m, err := training.Load(data)
	if err != nil {
		return nil, nil, fmt.Errorf("--model %s: %w", path, err)
	}
	return p, m, nil
}

// serveModel listens on addr and serves h until ctx ends, then shuts down gracefully, giving
// requests in flight up to 10 seconds.
func serveModel(ctx context.Context, out io.Writer, addr string, h http.Handler, m *training.Manifest) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute}
	fmt.Fprintf(out, "serving %s model of task %s (%s) on http://%s\n", m.Kind, m.Task, m.ModelSHA256[:12], ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func modelShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show FILE",
		Short: "Check an artifact file and print its manifest as JSON",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, m, err := loadArtifactFile(args[0])
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(m)
		},
	}
}

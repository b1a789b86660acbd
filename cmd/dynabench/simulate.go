package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynabench-go/dynabench/internal/simulate"
)

// simFlags are the flags of `simulate`.
type simFlags struct {
	server, adminUser, adminPassword, prefix string
	tasks                                    []string
	rounds, writers, examples, validators    int
	seed                                     uint64
	mislabel, noise                          float64
	split                                    []float64
	evalTimeout                              time.Duration
}

// simulateCmd drives a running server through full adversarial rounds with scripted annotators.
func simulateCmd() *cobra.Command {
	var f simFlags
	c := &cobra.Command{
		Use:   "simulate",
		Short: "Run scripted writers and validators through rounds of the adversarial loop on a running server, retraining between rounds",
		Long: `Drives a running server over its API through --rounds rounds per demo task (nli, sentiment), as an
owner with annotators would. In each round scripted writers (registered through open registration as
<prefix>-w<i>) write adversarial examples against the model in the loop, with tricks that get harder
each round, and scripted validators (<prefix>-v<i>) judge the ones that fooled it. Then, as the task's
owner (the admin account): close the round, release it, train a built-in model on the seed set plus
the released train splits, publish it, put it in the loop of the next round, and wait for every
round's model to be evaluated on every round's test split.

The task must be at round 1: run it on a fresh server (an empty --data-dir). Progress goes to
stderr; the tables (vMER per round; each round's model on each round's test split) to stdout as
markdown. The scripted annotators are deterministic for a seed, but two fresh servers still differ:
the server breaks ties between least-used contexts at random, and each install splits releases
with its own secret key (see docs/SIMULATION.md).`,
		Example: `  dynabench serve --data-dir /tmp/simdata --addr 127.0.0.1:18777 &
  dynabench simulate --server http://127.0.0.1:18777 --admin-password "$DYNABENCH_ADMIN_PASSWORD" --task nli,sentiment --rounds 3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSimulate(cmd, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.server, "server", env("SERVER", "http://127.0.0.1:8080"), "base URL of the server (env DYNABENCH_SERVER)")
	fl.StringVar(&f.adminUser, "admin-user", "admin", "username of an owner of the tasks (the bootstrap admin owns the demo tasks)")
	fl.StringVar(&f.adminPassword, "admin-password", os.Getenv("DYNABENCH_ADMIN_PASSWORD"), "its password (env DYNABENCH_ADMIN_PASSWORD)")
	fl.StringSliceVar(&f.tasks, "task", []string{"nli", "sentiment"}, "demo tasks to simulate, comma-separated: nli, sentiment")
	fl.IntVar(&f.rounds, "rounds", 3, "rounds of writing per task")
	fl.IntVar(&f.writers, "writers", 4, "scripted writers")
	fl.IntVar(&f.examples, "examples", 50, "examples per writer per round")
	fl.IntVar(&f.validators, "validators", 3, "scripted validators")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the writers, validators and training")
	fl.Float64Var(&f.mislabel, "mislabel", 0.05, "share of examples written with a wrong label (validators should reject them)")
	fl.Float64Var(&f.noise, "noise", 0.02, "share of validators' votes that are wrong")
	fl.Float64SliceVar(&f.split, "split", []float64{0.7, 0.1, 0.2}, "train,dev,test shares of each release")
	fl.StringVar(&f.prefix, "user-prefix", "", "prefix of the annotators' usernames (default sim<seed>)")
	fl.DurationVar(&f.evalTimeout, "eval-timeout", 15*time.Minute, "longest wait for the evaluations after each round")
	return c
}

func runSimulate(cmd *cobra.Command, f simFlags) error {
	if f.adminPassword == "" {
		return fmt.Errorf("--admin-password (or DYNABENCH_ADMIN_PASSWORD) is required: the owner closes, releases and retrains")
	}
	if len(f.split) != 3 {
		return fmt.Errorf("--split: three shares (train,dev,test), have %d", len(f.split))
	}
	for _, t := range f.tasks {
		if _, err := simulate.NewWriter(t); err != nil {
			return err
		}
	}
	ctx := cmd.Context()
	c := simulate.NewClient(f.server)
	token, err := c.Login(ctx, f.adminUser, f.adminPassword)
	if err != nil {
		return fmt.Errorf("log in as %s: %w", f.adminUser, err)
	}
	prefix := f.prefix
	if prefix == "" {
		prefix = fmt.Sprintf("sim%d", f.seed)
	}
	progress := cmd.ErrOrStderr()
	fmt.Fprintf(progress, "registering %d writers and %d validators (%s-w*, %s-v*); registration is rate-limited, this may take a minute\n",
		f.writers, f.validators, prefix, prefix)
	writers, validators, err := c.Accounts(ctx, prefix, f.writers, f.validators)
	if err != nil {
		return err
	}
	var reports []*simulate.CycleReport
	for _, t := range f.tasks {
		rep, err := simulate.Cycle(ctx, c, simulate.CyclePlan{Task: t, Rounds: f.rounds, Writers: f.writers,
			ExamplesPerWriter: f.examples, Validators: f.validators, Seed: f.seed, MislabelRate: f.mislabel,
			NoiseRate: f.noise, OwnerToken: token, WriterTokens: writers, ValidatorTokens: validators,
			Split: simulate.Split{Train: f.split[0], Dev: f.split[1], Test: f.split[2]}, EvalTimeout: f.evalTimeout,
			Poll: 2 * time.Second, Progress: progress})
		if err != nil {
			return err
		}
		fmt.Fprintf(progress, "%s: done in %s\n", t, rep.Elapsed.Round(time.Second))
		reports = append(reports, rep)
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "## Simulation: %s, %d rounds, %d writers × %d examples, %d validators, seed %d\n\n",
		strings.Join(f.tasks, ", "), f.rounds, f.writers, f.examples, f.validators, f.seed)
	for _, rep := range reports {
		rep.Markdown(out)
	}
	return nil
}

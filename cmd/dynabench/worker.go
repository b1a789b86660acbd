package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters"
	"github.com/dynabench-go/dynabench/internal/service"
	"github.com/dynabench-go/dynabench/internal/worker"
)

// serverFlags are how a client command reaches a running server.
type serverFlags struct {
	server, token string
}

func (f *serverFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&f.server, "server", env("SERVER", "http://127.0.0.1:8080"), "the server's base URL (env DYNABENCH_SERVER)")
	c.Flags().StringVar(&f.token, "token", env("TOKEN", ""), "an API token (env DYNABENCH_TOKEN; create one with POST /api/v1/me/tokens)")
}

func (f *serverFlags) remote(name string) (*worker.Remote, error) {
	if f.token == "" {
		return nil, errors.New("--token (or DYNABENCH_TOKEN) is required")
	}
	return &worker.Remote{Server: f.server, Token: f.token, Name: name}, nil
}

// workerCmd runs evaluation jobs next to the models, leasing them from a server over its API.
func workerCmd(logger func() *slog.Logger) *cobra.Command {
	var sf serverFlags
	var name string
	var n, batch int
	var denyPrivate bool
	c := &cobra.Command{
		Use:   "worker",
		Short: "Run evaluation jobs for a server, on this machine, next to the models",
		Long: `Leases evaluation jobs from the server over its authenticated API, calls each job's model
(dynalab, openai, hf or kserve, reached from this machine; keys named by api_key_env are read from
this machine's environment) in batches while keeping the lease alive, and reports the answers; the
server scores them. With an admin's token the worker takes any job; with a model builder's, only
the jobs of their own models on datasets that are not hidden. Built-in models are evaluated by the
server itself. Stop with Ctrl-C: a job in progress is handed back for another worker.`,
		Example: `  dynabench worker --server https://dynabench.example.org --token dbt_...`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			host, _ := os.Hostname()
			if name == "" {
				name = fmt.Sprintf("%s:%d", host, os.Getpid())
			}
			r, err := sf.remote(name)
			if err != nil {
				return err
			}
			log := logger()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			reg := adapters.DefaultRegistry(adapters.Options{DenyPrivateNetworks: denyPrivate})
			preds := worker.RemotePredictors(r, reg)
			var wg sync.WaitGroup
			for i := range max(n, 1) {
				w := &worker.Worker{Source: r, Predictors: preds, Log: log.With("worker", fmt.Sprintf("%s/%d", name, i+1)), BatchSize: batch,
					Progress: func(w *service.Work, done, total int) {
						if done == total || done%(10*max(batch, 1)) == 0 {
							log.Info("progress", "job", w.JobID, "dataset", w.Dataset, "variant", w.Variant, "done", done, "total", total)
						}
					}}
				wg.Add(1)
				go func() { defer wg.Done(); w.Run(ctx) }()
			}
			log.Info("worker started", "server", sf.server, "name", name, "concurrency", n)
			wg.Wait()
			return nil
		},
	}
	sf.add(c)
	c.Flags().StringVar(&name, "name", "", "the worker's name in evaluation logs (default host:pid)")
	c.Flags().IntVar(&n, "concurrency", 1, "jobs run at once")
	c.Flags().IntVar(&batch, "batch-size", 32, "inputs per call to the model")
	c.Flags().BoolVar(&denyPrivate, "deny-private-model-urls", false, "refuse to call models on loopback or private addresses")
	return c
}

// modelSubmitCmd registers a model with a server and follows its evaluation.
func modelSubmitCmd() *cobra.Command {
	var sf serverFlags
	var task, name, kind, url, options, cardFile string
	var wait bool
	c := &cobra.Command{
		Use:   "submit",
		Short: "Submit a model served over HTTP to a task and follow its evaluation",
		Long: `Registers the model with the server (POST /api/v1/tasks/{code}/models), which queues one
evaluation per dataset and perturbed copy, then shows their progress until every one completed or
failed, and prints the scores (or why each failed).`,
		Example: `  dynabench model submit --task nli --name my-roberta --kind dynalab --url http://10.0.0.5:8080 --token dbt_...`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := sf.remote("submit")
			if err != nil {
				return err
			}
			body := map[string]any{"name": name, "kind": kind, "url": url}
			if options != "" {
				var o map[string]any
				if err := json.Unmarshal([]byte(options), &o); err != nil {
					return fmt.Errorf("--options: not a JSON object: %v", err)
				}
				body["options"] = o
			}
			if cardFile != "" {
				b, err := os.ReadFile(cardFile)
				if err != nil {
					return err
				}
				body["card"] = string(b)
			}
			var m submitView
			if err := r.Call(cmd.Context(), http.MethodPost, "/api/v1/tasks/"+task+"/models", body, &m); err != nil {
				return explain(err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "model %s (%s) registered: %d datasets queued\n", m.ID, m.Name, len(m.Evaluations))
			if !wait {
				fmt.Fprintln(cmd.OutOrStdout(), m.ID)
				return nil
			}
			m, err = followEvaluation(cmd.Context(), r, m.ID, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			printEvaluations(cmd.OutOrStdout(), m)
			return nil
		},
	}
	sf.add(c)
	c.Flags().StringVar(&task, "task", "", "task code (required)")
	c.Flags().StringVar(&name, "name", "", "model name (required)")
	c.Flags().StringVar(&kind, "kind", "dynalab", "model protocol: dynalab, openai, hf or kserve")
	c.Flags().StringVar(&url, "url", "", "the model's base URL (required)")
	c.Flags().StringVar(&options, "options", "", `adapter options as JSON, e.g. '{"model":"gpt-4o-mini","api_key_env":"DYNABENCH_MODEL_KEY_OPENAI"}'`)
	c.Flags().StringVar(&cardFile, "card", "", "a Markdown file with the model card")
	c.Flags().BoolVar(&wait, "wait", true, "follow the evaluation until it ends")
	for _, f := range []string{"task", "name", "url"} {
		c.MarkFlagRequired(f)
	}
	return c
}

// submitView is a model with its evaluations, as GET /api/v1/models/{id} answers.
type submitView struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Evaluations []struct {
		Dataset string             `json:"dataset"`
		Status  string             `json:"status"`
		Reason  string             `json:"reason"`
		Fault   string             `json:"fault"`
		Scores  map[string]float64 `json:"scores"`
		Parts   []struct {
			Status string `json:"status"`
		} `json:"parts"`
	} `json:"evaluations"`
}

func (m submitView) progress() (done, total int) {
	for _, e := range m.Evaluations {
		for _, p := range e.Parts {
			total++
			if p.Status == dynabench.EvalCompleted || p.Status == dynabench.EvalFailed {
				done++
			}
		}
	}
	return done, total
}

// followEvaluation polls the model until every part of its evaluation ended, with a progress bar on
// a terminal and a line per change otherwise.
func followEvaluation(ctx context.Context, r *worker.Remote, id string, w io.Writer) (submitView, error) {
	var bar *progressbar.ProgressBar
	tty := false
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		tty = true
	}
	last := -1
	for {
		var m submitView
		if err := r.Call(ctx, http.MethodGet, "/api/v1/models/"+id, nil, &m); err != nil {
			return m, explain(err)
		}
		done, total := m.progress()
		if tty && bar == nil && total > 0 {
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("evaluating"),
				progressbar.OptionShowCount(), progressbar.OptionSetElapsedTime(true), progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }))
		}
		if bar != nil {
			bar.Set(done)
		} else if done != last {
			fmt.Fprintf(w, "evaluating: %d of %d parts done\n", done, total)
		}
		last = done
		if done == total {
			if bar != nil {
				bar.Finish()
			}
			return m, nil
		}
		select {
		case <-ctx.Done():
			return m, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func printEvaluations(w io.Writer, m submitView) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DATASET\tSTATUS\tSCORES")
	for _, e := range m.Evaluations {
		detail := e.Reason
		if e.Status == dynabench.EvalCompleted {
			var parts []string
			for _, k := range []string{"accuracy", "macro_f1", "squad_em", "squad_f1", "robustness", "fairness", "examples_per_second", "memory_gib"} {
				if v, ok := e.Scores[k]; ok {
					parts = append(parts, fmt.Sprintf("%s=%.2f", k, v))
				}
			}
			detail = strings.Join(parts, " ")
		} else if e.Fault != "" {
			detail = e.Fault + " fault: " + detail
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Dataset, e.Status, detail)
	}
	tw.Flush()
}

// explain turns an API error into a message for a terminal.
func explain(err error) error {
	var de *dynabench.Error
	if errors.As(err, &de) {
		if de.Field != "" {
			return fmt.Errorf("%s: %s (%s)", de.Field, de.Message, de.Code)
		}
		return fmt.Errorf("%s (%s)", de.Message, de.Code)
	}
	return err
}

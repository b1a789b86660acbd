package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/dynabench-go/dynabench/internal/worker"
)

// roundCmd groups the owner's round commands, run against a server over its API.
func roundCmd() *cobra.Command {
	c := &cobra.Command{Use: "round", Short: "Close rounds, release them, and retrain the model in the loop"}
	c.AddCommand(roundNextCmd())
	return c
}

type taskView struct {
	Code         string `json:"code"`
	CurrentRound int    `json:"current_round"`
}

type roundView struct {
	Number int      `json:"number"`
	Status string   `json:"status"`
	Models []string `json:"models"`
	Stats  struct {
		Collected      int     `json:"collected"`
		VerifiedFooled int     `json:"verified_fooled"`
		VMER           float64 `json:"vmer"`
	} `json:"stats"`
}

func roundNextCmd() *cobra.Command {
	var sf serverFlags
	var task string
	var retrain, seedData bool
	var wait time.Duration
	c := &cobra.Command{
		Use:   "next",
		Short: "Close the current round and open the next; with --retrain, release it and put a model trained on every released round in the loop",
		Long: `Closes the task's current round by opening the next one, as a job on the server. With
--retrain the job then:
  1. releases the closed round (splits, manifest, datasheet; its test split becomes a scoring dataset),
  2. trains a built-in model on the seed set plus the train splits of every released round,
  3. publishes it and puts it in the loop of the new round;
and this command follows the new model's evaluation (queued as jobs) on every dataset, each round's
test split included, and prints its scores. Each step is shown as the job reports it.`,
		Example: `  dynabench round next --task nli --retrain --token dbt_...`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := sf.remote("round-next")
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			out := cmd.ErrOrStderr()
			var job struct {
				ID        string `json:"id"`
				State     string `json:"state"`
				LastError string `json:"last_error"`
				Progress  []struct {
					Step, Message string
				} `json:"progress"`
			}
			if err := r.Call(ctx, http.MethodPost, "/api/v1/tasks/"+task+"/rounds/cycle",
				map[string]any{"retrain": retrain, "seed_data": seedData}, &job); err != nil {
				return explain(err)
			}
			fmt.Fprintf(out, "cycle job %s queued\n", job.ID)
			shown := 0
			for {
				if err := r.Call(ctx, http.MethodGet, "/api/v1/jobs/"+job.ID, nil, &job); err != nil {
					return explain(err)
				}
				for _, p := range job.Progress[min(shown, len(job.Progress)):] {
					fmt.Fprintf(out, "• %-8s %s\n", p.Step, p.Message)
				}
				shown = max(shown, len(job.Progress))
				switch job.State {
				case "done":
				case "parked":
					return fmt.Errorf("the cycle stopped: %s", job.LastError)
				default:
					select {
					case <-ctx.Done():
						return ctx.Err()
					case <-time.After(300 * time.Millisecond):
					}
					continue
				}
				break
			}
			if !retrain {
				return nil
			}
			var t taskView
			if err := r.Call(ctx, http.MethodGet, "/api/v1/tasks/"+task, nil, &t); err != nil {
				return explain(err)
			}
			var cur roundView
			if err := r.Call(ctx, http.MethodGet, fmt.Sprintf("/api/v1/tasks/%s/rounds/%d", task, t.CurrentRound), nil, &cur); err != nil {
				return explain(err)
			}
			if len(cur.Models) == 0 {
				return errors.New("the new round has no model in the loop")
			}
			wctx, cancel := context.WithTimeout(ctx, wait)
			defer cancel()
			m, err := followEvaluation(wctx, r, cur.Models[0], out)
			if err != nil {
				return err
			}
			printEvaluations(cmd.OutOrStdout(), m)
			return nil
		},
	}
	sf.add(c)
	c.Flags().StringVar(&task, "task", "", "task code (required)")
	c.Flags().BoolVar(&retrain, "retrain", false, "release the closed round and put a model retrained on every released round in the loop")
	c.Flags().BoolVar(&seedData, "seed-data", true, "with --retrain, also train on the task's seed set (demo tasks have one)")
	c.Flags().DurationVar(&wait, "wait", 10*time.Minute, "how long to follow the new model's evaluation")
	c.MarkFlagRequired("task")
	return c
}

// exportCmd downloads a closed round's examples, anonymised, with a progress bar.
func exportCmd() *cobra.Command {
	var sf serverFlags
	var task, format, out string
	var round int
	c := &cobra.Command{
		Use:   "export",
		Short: "Download a closed round's examples with their validations, contributors anonymised",
		Long: `Formats: jsonl (Dynabench's export shape: input, output, context, model_wrong, validations with
anonymised validator ids, anon_uid), csv, hf (flat rows for Hugging Face datasets). Owners only; the
round must be closed.`,
		Example: `  dynabench export --task nli --round 1 --format jsonl --out nli-r1.jsonl --token dbt_...`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if sf.token == "" {
				return errors.New("--token (or DYNABENCH_TOKEN) is required")
			}
			url := fmt.Sprintf("%s/api/v1/tasks/%s/rounds/%d/export?format=%s", strings.TrimRight(sf.server, "/"), task, round, format)
			req, err := http.NewRequestWithContext(cmd.Context(), http.MethodGet, url, nil)
			if err != nil {
				return err
			}
			req.Header.Set("Authorization", "Bearer "+sf.token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				r := &worker.Remote{Server: sf.server, Token: sf.token}
				return explain(r.Call(cmd.Context(), http.MethodGet, strings.TrimPrefix(url, strings.TrimRight(sf.server, "/")), nil, nil))
			}
			if out == "" {
				out = fmt.Sprintf("%s-round-%d.%s", task, round, map[string]string{"csv": "csv"}[format])
				if format != "csv" {
					out = strings.TrimSuffix(out, ".") + ".jsonl"
				}
			}
			tmp, err := os.CreateTemp(filepath.Dir(out), ".export-*")
			if err != nil {
				return err
			}
			defer os.Remove(tmp.Name())
			var w io.Writer = tmp
			if f, ok := cmd.ErrOrStderr().(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				bar := progressbar.DefaultBytes(resp.ContentLength, "downloading")
				w = io.MultiWriter(tmp, bar)
			}
			n, err := io.Copy(w, resp.Body)
			if err != nil {
				tmp.Close()
				return err
			}
			if err := tmp.Sync(); err != nil {
				return err
			}
			if err := tmp.Close(); err != nil {
				return err
			}
			if err := os.Rename(tmp.Name(), out); err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.ErrOrStderr(), 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "wrote\t%s\t(%d bytes)\n", out, n)
			return tw.Flush()
		},
	}
	sf.add(c)
	c.Flags().StringVar(&task, "task", "", "task code (required)")
	c.Flags().IntVar(&round, "round", 0, "round number (required)")
	c.Flags().StringVar(&format, "format", "jsonl", "jsonl, csv or hf")
	c.Flags().StringVar(&out, "out", "", "output file (default <task>-round-<n>.<ext>)")
	c.MarkFlagRequired("task")
	c.MarkFlagRequired("round")
	return c
}

package simulate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dynabench-go/dynabench/internal/demo"
)

// CyclePlan is a full retraining cycle over a running server, for one demo task.
type CyclePlan struct {
	Task              string // nli or sentiment: the tasks with scripted writers
	Rounds            int    // rounds of writing; the cycle trains one model per round
	Writers           int
	ExamplesPerWriter int
	Validators        int
	Seed              uint64
	// MislabelRate and NoiseRate are as in Plan.
	MislabelRate, NoiseRate float64

	// OwnerToken is a token of an owner of the task (the bootstrap admin owns the demo tasks).
	OwnerToken string
	// WriterTokens and ValidatorTokens are the annotators' tokens (distinct accounts). When nil, the
	// cycle registers <UserPrefix>-w<i> and <UserPrefix>-v<i> through open registration.
	WriterTokens, ValidatorTokens []string
	UserPrefix                    string // default "sim<seed>"

	// NumMatchingValidations is the task setting that decides verified / rejected; default 2.
	NumMatchingValidations int
	// Split is the release's train/dev/test shares; zero means 0.7/0.1/0.2 (the server's default,
	// 0.8/0.1/0.1, leaves a handful of test examples in a small simulated round).
	Split Split
	// EvalTimeout bounds each wait for evaluations; default 10 minutes.
	EvalTimeout time.Duration
	// Poll is the interval between evaluation checks; default 1 s.
	Poll time.Duration
	// Progress receives one line per step; nil for none.
	Progress io.Writer
}

// Split is a release's train/dev/test shares.
type Split struct {
	Train float64 `json:"train"`
	Dev   float64 `json:"dev"`
	Test  float64 `json:"test"`
}

// CycleReport is what a cycle produced.
type CycleReport struct {
	Task   string
	Metric string // the task's perf metric: accuracy or macro_f1
	Rounds []CycleRound
	// Models are the rows of the matrix: Models[i] is the model in the loop of round i+1; the last
	// one, trained on every round, is in the loop of the round the cycle left open.
	Models []CycleModel
	// Datasets are the columns: round-1-test … round-N-test, then demo-dev.
	Datasets []string
	// Sizes are the datasets' example counts (the test splits' from the release manifests; 0 when unknown).
	Sizes map[string]int
	// Scores[model id][dataset] is a completed evaluation.
	Scores  map[string]map[string]Score
	Elapsed time.Duration
}

// CycleRound is one round of writing.
type CycleRound struct {
	Round  int
	Models []string // ids of the models in the loop
	Stats  *RoundStats
	Server ServerStats // the platform's own counters for the round
	// Release is the round's release: its version, scoring dataset and split sizes.
	Release ReleaseSummary
}

// ServerStats are a round's counters as GET /api/v1/tasks/{code}/rounds/{n} reports them.
type ServerStats struct {
	Collected      int     `json:"collected"`
	Fooled         int     `json:"fooled"`
	VerifiedFooled int     `json:"verified_fooled"`
	Rejected       int     `json:"rejected"`
	MER            float64 `json:"mer"`
	VMER           float64 `json:"vmer"`
}

// ReleaseSummary is what the cycle keeps of a release.
type ReleaseSummary struct {
	Version  int
	Dataset  string
	Examples int
	Splits   map[string]int // train, dev, test → examples
}

// CycleModel is a row of the matrix.
type CycleModel struct {
	Round     int // the round whose loop it is in
	ID, Name  string
	TrainedOn []int // rounds whose released train splits it learnt from (besides the seed set); nil for the demo model
}

// Score is one evaluation, in percent.
type Score struct {
	Accuracy, MacroF1 float64
}

// taskJSON is what the cycle reads of GET /api/v1/tasks/{code}.
type taskJSON struct {
	CurrentRound int            `json:"current_round"`
	Config       map[string]any `json:"config"`
	Settings     map[string]any `json:"settings"`
	Rounds       []struct {
		Number int         `json:"number"`
		Status string      `json:"status"`
		Models []string    `json:"models"`
		Stats  ServerStats `json:"stats"`
	} `json:"rounds"`
}

type cycle struct {
	c      *Client
	p      CyclePlan
	task   string // path-escaped code
	report *CycleReport
	start  time.Time
}

func (cy *cycle) logf(format string, args ...any) {
	if cy.p.Progress != nil {
		fmt.Fprintf(cy.p.Progress, "%s [%5.1fs] ", cy.p.Task, time.Since(cy.start).Seconds())
		fmt.Fprintf(cy.p.Progress, format+"\n", args...)
	}
}

// Cycle runs the adversarial loop for p.Rounds rounds against a running server, as an owner would
// with annotators: in each round r the scripted writers write against the model in the loop (round 1:
// the demo's built-in model) and the validators judge what fooled it; then the owner closes the round
// (POST /rounds, which opens r+1), releases it, trains a built-in model on the seed set plus the
// released train splits of rounds 1..r, publishes it, puts it in the loop of round r+1, and waits
// until every model of the cycle has been evaluated on every released test split and on demo-dev.
// The task must be at round 1: a cycle starts on a fresh task.
func Cycle(ctx context.Context, c *Client, p CyclePlan) (*CycleReport, error) {
	if err := p.defaults(); err != nil {
		return nil, err
	}
	contexts, err := demoContexts(p.Task)
	if err != nil {
		return nil, err
	}
	cy := &cycle{c: c, p: p, task: url.PathEscape(p.Task), start: time.Now(),
		report: &CycleReport{Task: p.Task, Sizes: map[string]int{}, Scores: map[string]map[string]Score{}}}
	t, err := cy.getTask(ctx)
	if err != nil {
		return nil, err
	}
	if t.CurrentRound != 1 {
		return nil, fmt.Errorf("simulate: task %s is at round %d; a cycle starts on a fresh task at round 1 (start a server on an empty data directory)", p.Task, t.CurrentRound)
	}
	cy.report.Metric = perfMetric(t.Config)
	if len(t.Rounds) == 0 || len(t.Rounds[0].Models) == 0 {
		return nil, fmt.Errorf("simulate: task %s has no model in the loop of round 1", p.Task)
	}
	loopModels := t.Rounds[0].Models
	first, err := cy.model(ctx, loopModels[0])
	if err != nil {
		return nil, err
	}
	cy.report.Models = append(cy.report.Models, CycleModel{Round: 1, ID: loopModels[0], Name: first.Name})
	if err := cy.settings(ctx, t.Settings); err != nil {
		return nil, err
	}
	writers, validators := p.WriterTokens, p.ValidatorTokens
	if writers == nil || validators == nil {
		cy.logf("registering %d writers and %d validators (%s-w*, %s-v*)", p.Writers, p.Validators, p.UserPrefix, p.UserPrefix)
		if writers, validators, err = c.Accounts(ctx, p.UserPrefix, p.Writers, p.Validators); err != nil {
			return nil, err
		}
	}
	if len(writers) < p.Writers || len(validators) < p.Validators {
		return nil, fmt.Errorf("simulate: %d writer and %d validator tokens for %d writers and %d validators",
			len(writers), len(validators), p.Writers, p.Validators)
	}
	for r := 1; r <= p.Rounds; r++ {
		if err := cy.round(ctx, r, loopModels, writers, validators); err != nil {
			return nil, err
		}
		// Close round r (and open r+1, with the same models until the new one is trained).
		var opened struct {
			Number int `json:"number"`
		}
		if _, err := c.Do(ctx, http.MethodPost, "/api/v1/tasks/"+cy.task+"/rounds", p.OwnerToken,
			map[string]any{"models": loopModels}, &opened); err != nil {
			return nil, fmt.Errorf("simulate: close round %d: %w", r, err)
		}
		if opened.Number != r+1 {
			return nil, fmt.Errorf("simulate: closing round %d opened round %d", r, opened.Number)
		}
		if _, err := c.Do(ctx, http.MethodPost, fmt.Sprintf("/api/v1/tasks/%s/rounds/%d/contexts", cy.task, r+1), p.OwnerToken,
			rawBody{"application/x-ndjson", contexts}, nil); err != nil {
			return nil, fmt.Errorf("simulate: contexts of round %d: %w", r+1, err)
		}
		rel, err := cy.release(ctx, r)
		if err != nil {
			return nil, err
		}
		cy.report.Rounds[r-1].Release = rel
		if rel.Dataset != "" { // a small round may have an empty test split: no column for it
			cy.report.Datasets = append(cy.report.Datasets, rel.Dataset)
			cy.report.Sizes[rel.Dataset] = rel.Splits["test"]
		}
		cy.logf("round %d released: version %d, %d examples (train %d, dev %d, test %d) → dataset %s", r, rel.Version,
			rel.Examples, rel.Splits["train"], rel.Splits["dev"], rel.Splits["test"], rel.Dataset)
		m, err := cy.train(ctx, r)
		if err != nil {
			return nil, err
		}
		cy.report.Models = append(cy.report.Models, m)
		loopModels = []string{m.ID}
		if _, err := c.Do(ctx, http.MethodPut, fmt.Sprintf("/api/v1/tasks/%s/rounds/%d/models", cy.task, r+1), p.OwnerToken,
			map[string]any{"models": loopModels}, nil); err != nil {
			return nil, fmt.Errorf("simulate: model of round %d: %w", r+1, err)
		}
		cy.logf("model %s (%s) trained on seed + released train of rounds 1..%d, published, in the loop of round %d", m.ID, m.Name, r, r+1)
		if err := cy.waitEvaluations(ctx); err != nil {
			return nil, err
		}
	}
	cy.report.Elapsed = time.Since(cy.start)
	return cy.report, nil
}

func (p *CyclePlan) defaults() error {
	if p.Rounds < 1 {
		return fmt.Errorf("simulate: rounds must be ≥ 1, is %d", p.Rounds)
	}
	if p.Validators < 1 {
		return errors.New("simulate: a cycle needs validators: only verified examples are released")
	}
	if p.OwnerToken == "" {
		return errors.New("simulate: a cycle needs a task owner's token")
	}
	if p.UserPrefix == "" {
		p.UserPrefix = fmt.Sprintf("sim%d", p.Seed)
	}
	if p.NumMatchingValidations <= 0 {
		p.NumMatchingValidations = 2
	}
	if p.Split == (Split{}) {
		p.Split = Split{Train: 0.7, Dev: 0.1, Test: 0.2}
	}
	if p.EvalTimeout <= 0 {
		p.EvalTimeout = 10 * time.Minute
	}
	if p.Poll <= 0 {
		p.Poll = time.Second
	}
	return nil
}

// demoContexts returns the demo task's contexts as the context upload takes them: each new round
// gets the same contexts as round 1.
func demoContexts(code string) ([]byte, error) {
	tasks, err := demo.Tasks()
	if err != nil {
		return nil, err
	}
	for _, t := range tasks {
		if t.Code != code {
			continue
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for _, c := range t.Contexts {
			if err := enc.Encode(c); err != nil {
				return nil, err
			}
		}
		return buf.Bytes(), nil
	}
	return nil, fmt.Errorf("simulate: %q is not a demo task", code)
}

func perfMetric(cfg map[string]any) string {
	if pm, ok := cfg["perf_metric"].(map[string]any); ok {
		if s, ok := pm["type"].(string); ok {
			return s
		}
	}
	return "accuracy"
}

func (cy *cycle) getTask(ctx context.Context) (*taskJSON, error) {
	var t taskJSON
	if _, err := cy.c.Do(ctx, http.MethodGet, "/api/v1/tasks/"+cy.task, cy.p.OwnerToken, nil, &t); err != nil {
		return nil, fmt.Errorf("simulate: task %s: %w", cy.p.Task, err)
	}
	return &t, nil
}

// settings sends the task's settings back with num_matching_validations set and no daily cap on
// examples (the writers write many in a minute).
func (cy *cycle) settings(ctx context.Context, s map[string]any) error {
	if s == nil {
		s = map[string]any{}
	}
	s["num_matching_validations"] = cy.p.NumMatchingValidations
	s["max_examples_per_day"] = 0
	if _, err := cy.c.Do(ctx, http.MethodPut, "/api/v1/tasks/"+cy.task+"/settings", cy.p.OwnerToken, s, nil); err != nil {
		return fmt.Errorf("simulate: settings of %s: %w", cy.p.Task, err)
	}
	return nil
}

func (cy *cycle) round(ctx context.Context, r int, models, writers, validators []string) error {
	loop := &APILoop{Client: cy.c, Writers: writers, Validators: validators, Reader: cy.p.OwnerToken, Round: r}
	st, err := Run(ctx, loop, Plan{Task: cy.p.Task, Round: r, Writers: cy.p.Writers, ExamplesPerWriter: cy.p.ExamplesPerWriter,
		Validators: cy.p.Validators, Seed: cy.p.Seed, MislabelRate: cy.p.MislabelRate, NoiseRate: cy.p.NoiseRate})
	if err != nil {
		return fmt.Errorf("simulate: round %d: %w", r, err)
	}
	var rj struct {
		Stats ServerStats `json:"stats"`
	}
	if _, err := cy.c.Do(ctx, http.MethodGet, fmt.Sprintf("/api/v1/tasks/%s/rounds/%d", cy.task, r), cy.p.OwnerToken, nil, &rj); err != nil {
		return fmt.Errorf("simulate: round %d: %w", r, err)
	}
	cy.report.Rounds = append(cy.report.Rounds, CycleRound{Round: r, Models: models, Stats: st, Server: rj.Stats})
	cy.logf("round %d: %d written, %d fooled (MER %.2f), %d verified fooled (vMER %.2f), %d votes; server: vMER %.2f",
		r, st.Submitted, st.Fooled, st.MER(), st.VerifiedFooled, st.VMER(), st.Validations, rj.Stats.VMER)
	return nil
}

func (cy *cycle) release(ctx context.Context, r int) (ReleaseSummary, error) {
	var out struct {
		Version  int    `json:"version"`
		Dataset  string `json:"dataset"`
		Manifest struct {
			Examples int `json:"examples"`
			Splits   []struct {
				Name     string `json:"name"`
				Examples int    `json:"examples"`
			} `json:"splits"`
		} `json:"manifest"`
	}
	if _, err := cy.c.Do(ctx, http.MethodPost, fmt.Sprintf("/api/v1/tasks/%s/rounds/%d/release", cy.task, r), cy.p.OwnerToken,
		map[string]any{"ratios": cy.p.Split}, &out); err != nil {
		return ReleaseSummary{}, fmt.Errorf("simulate: release round %d: %w", r, err)
	}
	rel := ReleaseSummary{Version: out.Version, Dataset: out.Dataset, Examples: out.Manifest.Examples, Splits: map[string]int{}}
	for _, s := range out.Manifest.Splits {
		rel.Splits[s.Name] = s.Examples
	}
	return rel, nil
}

func (cy *cycle) train(ctx context.Context, r int) (CycleModel, error) {
	rounds := make([]int, r)
	for i := range rounds {
		rounds[i] = i + 1
	}
	name := fmt.Sprintf("%s-sim%d-r%d", cy.p.Task, cy.p.Seed, r+1)
	var out struct {
		Model struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"model"`
	}
	body := map[string]any{"name": name, "rounds": rounds, "seed_data": true, "released_only": true, "publish": true,
		"seed": cy.p.Seed}
	if _, err := cy.c.Do(ctx, http.MethodPost, "/api/v1/tasks/"+cy.task+"/models/train", cy.p.OwnerToken, body, &out); err != nil {
		return CycleModel{}, fmt.Errorf("simulate: train the model of round %d: %w", r+1, err)
	}
	return CycleModel{Round: r + 1, ID: out.Model.ID, Name: out.Model.Name, TrainedOn: rounds}, nil
}

// modelJSON is what the cycle reads of GET /api/v1/models/{id}.
type modelJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Evaluations []struct {
		Dataset string             `json:"dataset"`
		Status  string             `json:"status"`
		Reason  string             `json:"reason"`
		Scores  map[string]float64 `json:"scores"`
	} `json:"evaluations"`
}

func (cy *cycle) model(ctx context.Context, id string) (*modelJSON, error) {
	var m modelJSON
	if _, err := cy.c.Do(ctx, http.MethodGet, "/api/v1/models/"+url.PathEscape(id), cy.p.OwnerToken, nil, &m); err != nil {
		return nil, fmt.Errorf("simulate: model %s: %w", id, err)
	}
	return &m, nil
}

// waitEvaluations polls the cycle's models until each has a completed evaluation on every released
// test split and on demo-dev. A model that has no evaluation of a dataset after a while is queued
// again (POST /models/{id}/evaluate), once.
func (cy *cycle) waitEvaluations(ctx context.Context) error {
	datasets := append(slices.Clone(cy.report.Datasets), "demo-dev")
	deadline := time.Now().Add(cy.p.EvalTimeout)
	requeueAt := time.Now().Add(30 * time.Second)
	requeued := map[string]bool{}
	cy.logf("waiting for %d models × %d datasets to be evaluated", len(cy.report.Models), len(datasets))
	for {
		missing := 0
		var pending []string
		for _, m := range cy.report.Models {
			mj, err := cy.model(ctx, m.ID)
			if err != nil {
				return err
			}
			got := map[string]bool{}
			for _, e := range mj.Evaluations {
				if !slices.Contains(datasets, e.Dataset) {
					continue
				}
				got[e.Dataset] = true
				switch e.Status {
				case "completed":
					if cy.report.Scores[m.ID] == nil {
						cy.report.Scores[m.ID] = map[string]Score{}
					}
					cy.report.Scores[m.ID][e.Dataset] = Score{Accuracy: e.Scores["accuracy"], MacroF1: e.Scores["macro_f1"]}
				case "failed":
					return fmt.Errorf("simulate: model %s on %s: evaluation failed: %s", m.ID, e.Dataset, e.Reason)
				default:
					pending = append(pending, m.ID+"/"+e.Dataset)
				}
			}
			for _, d := range datasets {
				if !got[d] {
					missing++
					pending = append(pending, m.ID+"/"+d+" (not queued)")
					if time.Now().After(requeueAt) && !requeued[m.ID] {
						requeued[m.ID] = true
						if _, err := cy.c.Do(ctx, http.MethodPost, "/api/v1/models/"+url.PathEscape(m.ID)+"/evaluate", cy.p.OwnerToken, nil, nil); err != nil {
							return fmt.Errorf("simulate: queue model %s: %w", m.ID, err)
						}
					}
				}
			}
		}
		if len(pending) == 0 {
			cy.logf("evaluations complete")
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("simulate: evaluations not complete after %s: %s", cy.p.EvalTimeout, strings.Join(pending, ", "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(cy.p.Poll):
		}
	}
}

// Markdown writes the report as markdown: vMER per round, then the matrix of every round's model
// on every round's test split and demo-dev (accuracy / macro-F1, the perf metric marked).
func (r *CycleReport) Markdown(w io.Writer) {
	fmt.Fprintf(w, "### %s\n\n", r.Task)
	fmt.Fprintf(w, "| round | model in the loop | written | fooled | MER | verified fooled | vMER | released train / dev / test |\n")
	fmt.Fprintf(w, "|---|---|---:|---:|---:|---:|---:|---|\n")
	for _, rd := range r.Rounds {
		name := strings.Join(rd.Models, ", ")
		if len(r.Models) >= rd.Round && r.Models[rd.Round-1].Round == rd.Round {
			name = r.Models[rd.Round-1].Name
		}
		fmt.Fprintf(w, "| %d | %s | %d | %d | %.2f | %d | **%.2f** | %d / %d / %d |\n", rd.Round, name, rd.Stats.Submitted,
			rd.Stats.Fooled, rd.Stats.MER(), rd.Stats.VerifiedFooled, rd.Stats.VMER(),
			rd.Release.Splits["train"], rd.Release.Splits["dev"], rd.Release.Splits["test"])
	}
	fmt.Fprintf(w, "\nFooling rate per strategy (fooled / written):\n\n| round |")
	for _, rd := range r.Rounds {
		fmt.Fprintf(w, " %d |", rd.Round)
	}
	fmt.Fprintf(w, "\n|---|")
	for range r.Rounds {
		fmt.Fprintf(w, "---|")
	}
	fmt.Fprintln(w)
	var names []string
	for _, rd := range r.Rounds {
		for n := range rd.Stats.ByStrategy {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(w, "| %s |", n)
		for _, rd := range r.Rounds {
			if s := rd.Stats.ByStrategy[n]; s != nil {
				fmt.Fprintf(w, " %d / %d |", s.Fooled, s.Submitted)
			} else {
				fmt.Fprintf(w, " |")
			}
		}
		fmt.Fprintln(w)
	}
	metric := map[string]string{"accuracy": "accuracy", "macro_f1": "macro-F1"}[r.Metric]
	if metric == "" {
		metric = r.Metric
	}
	fmt.Fprintf(w, "\nAccuracy / macro-F1 (%%) of the model in the loop of each round (rows) on each released round's test split and on demo-dev (columns); the task's perf metric is %s.\n\n", metric)
	fmt.Fprintf(w, "| model |")
	for _, d := range r.Datasets {
		if n := r.Sizes[d]; n > 0 {
			fmt.Fprintf(w, " %s (n=%d) |", d, n)
		} else {
			fmt.Fprintf(w, " %s |", d)
		}
	}
	fmt.Fprintf(w, " demo-dev |\n|---|")
	for range len(r.Datasets) + 1 {
		fmt.Fprintf(w, "---:|")
	}
	fmt.Fprintln(w)
	for _, m := range r.Models {
		trained := "seed"
		if len(m.TrainedOn) > 0 {
			trained = "seed + r1.." + strconv.Itoa(m.TrainedOn[len(m.TrainedOn)-1]) + " train"
		}
		fmt.Fprintf(w, "| r%d: %s (%s) |", m.Round, m.Name, trained)
		for _, d := range append(slices.Clone(r.Datasets), "demo-dev") {
			if s, ok := r.Scores[m.ID][d]; ok {
				fmt.Fprintf(w, " %.1f / %.1f |", s.Accuracy, s.MacroF1)
			} else {
				fmt.Fprintf(w, " – |")
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

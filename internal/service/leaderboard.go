package service

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/evaluation"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// Leaderboard metric names besides the perf metrics.
const (
	MetricThroughput = "examples_per_second"
	MetricMemory     = "memory_utilization"
	MetricFairness   = "fairness"
	MetricRobustness = "robustness"
)

// DefaultDatasetWeight is Dynaboard's default dataset weight.
const DefaultDatasetWeight = 5

// LeaderboardSeed fixes the bootstrap, so a leaderboard is the same on every request and replica.
const LeaderboardSeed = 20210601

// LeaderboardQuery is a reader's view of a leaderboard: weights (nil: the task's defaults) and an
// optional round (only the scoring datasets released from that round).
type LeaderboardQuery struct {
	MetricWeights  map[string]float64
	DatasetWeights map[string]float64
	Round          int
}

// BoardModel names a model on a leaderboard.
type BoardModel struct {
	ID   int64  `json:"id,string"`
	Name string `json:"name"`
}

// LeaderboardRow is one ranked model.
type LeaderboardRow struct {
	Model       BoardModel                        `json:"model"`
	Dynascore   float64                           `json:"dynascore"`
	DynascoreCI evaluation.Interval               `json:"dynascore_ci"`
	Rank        int                               `json:"rank"`
	Metrics     map[string]evaluation.MetricValue `json:"metrics"`
}

// ExcludedMetric is a metric left out of the Dynascore, and why.
type ExcludedMetric struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// PendingModel is a published model not ranked yet, and why.
type PendingModel struct {
	Model  BoardModel `json:"model"`
	Reason string     `json:"reason"`
}

// Leaderboard is a task's ranked models. Metrics and Datasets say exactly how each Dynascore was
// computed (weights as used, before normalisation), so a reader can recompute it from the rows.
type Leaderboard struct {
	Task            string                     `json:"task"`
	Round           int                        `json:"round,omitempty"`
	Metrics         []evaluation.MetricMeta    `json:"metrics"`
	Datasets        []evaluation.DatasetWeight `json:"datasets"`
	Rows            []LeaderboardRow           `json:"rows"`
	Pending         []PendingModel             `json:"pending"`
	ExcludedMetrics []ExcludedMetric           `json:"excluded_metrics"`
	Resamples       int                        `json:"resamples"`
	Confidence      float64                    `json:"confidence"`
	Seed            uint64                     `json:"seed"`
	// Trend is, for each round with released scoring datasets, the best published model on them
	// (its perf metric averaged over that round's scoring datasets).
	Trend         []TrendPoint `json:"trend"`
	ScoresVersion string       `json:"scores_version"`
	ComputedAt    time.Time    `json:"computed_at"`
}

// TrendPoint is the best score on one round's datasets.
type TrendPoint struct {
	Round int        `json:"round"`
	Model BoardModel `json:"model"`
	Value float64    `json:"value"`
}

// trend finds, per round with scoring datasets, the best published model's mean perf metric over
// that round's datasets (models scored on all of them).
func (s *Service) trend(ctx context.Context, t *dynabench.Task, perf string) ([]TrendPoint, error) {
	bd, err := s.loadBoardData(ctx, t, func(d *dynabench.Dataset) bool { return d.Access == dynabench.AccessScoring && d.RoundNumber > 0 }, 0)
	if err != nil {
		return nil, err
	}
	byRound := map[int][]*dynabench.Dataset{}
	var rounds []int
	for _, d := range bd.datasets {
		if byRound[d.RoundNumber] == nil {
			rounds = append(rounds, d.RoundNumber)
		}
		byRound[d.RoundNumber] = append(byRound[d.RoundNumber], d)
	}
	sort.Ints(rounds)
	out := []TrendPoint{}
	for _, r := range rounds {
		best := TrendPoint{Round: r, Value: math.Inf(-1)}
		for _, m := range bd.models {
			if !m.Published {
				continue
			}
			sum, ok := 0.0, true
			for _, d := range byRound[r] {
				e := bd.completed(m, d, dynabench.VariantOriginal)
				if e == nil {
					ok = false
					break
				}
				sum += e.Result.Metrics[perf]
			}
			if v := sum / float64(len(byRound[r])); ok && v > best.Value {
				best.Model, best.Value = BoardModel{m.ID, m.Name}, v
			}
		}
		if !math.IsInf(best.Value, -1) {
			out = append(out, best)
		}
	}
	return out, nil
}

// boardCache keeps computed leaderboards by task, scores version and weights. An entry whose
// scores version is stale is never hit: the version is part of the key.
type boardCache struct {
	mu      sync.Mutex
	entries map[string]*Leaderboard
}

const maxCachedBoards = 512

func (c *boardCache) get(key string) *Leaderboard {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries[key]
}

func (c *boardCache) put(key string, b *Leaderboard) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxCachedBoards {
		c.entries = map[string]*Leaderboard{} // crude but bounded; recomputing is under a second
	}
	c.entries[key] = b
}

// metricMetas lists the task's leaderboard metrics in Dynaboard's order: the perf metric, throughput
// and memory, then the delta metrics; with the task's default weights (4 for perf, 1 otherwise).
func metricMetas(cfg *taskconfig.Config) ([]evaluation.MetricMeta, error) {
	perf := MetricAccuracy
	if len(cfg.Perf) > 0 {
		perf = cfg.Perf[0].Type
	}
	pretty := map[string]string{MetricAccuracy: "Accuracy", MetricMacroF1: "Macro F1", MetricSquadF1: "QA F1", MetricSquadEM: "QA exact match"}
	if pretty[perf] == "" {
		return nil, dynabench.Errorf(dynabench.EINVALID, "the perf metric %q is not computed by this platform (accuracy, macro_f1, squad_f1, squad_em are)", perf)
	}
	ms := []evaluation.MetricMeta{
		{Name: perf, PrettyName: pretty[perf], Unit: "%", Direction: 1},
		{Name: MetricThroughput, PrettyName: "Throughput", Unit: "examples/s", Direction: 1},
		{Name: MetricMemory, PrettyName: "Memory", Unit: "GiB", Direction: -1},
	}
	for _, d := range cfg.DeltaMetrics {
		ms = append(ms, evaluation.MetricMeta{Name: d, PrettyName: strings.ToUpper(d[:1]) + d[1:], Unit: "%", Direction: 1})
	}
	for i := range ms {
		ms[i].Weight = 1
		if i == 0 {
			ms[i].Weight = 4
		}
		if w, ok := cfg.Aggregation.DefaultWeights[ms[i].Name]; ok {
			ms[i].Weight = w
		}
	}
	return ms, nil
}

// ComputeLeaderboard ranks the task's published models by Dynascore on its scoring datasets, with
// 95% paired-bootstrap intervals (1,000 resamples, fixed seed) and tie-group ranks. Results are
// cached per weight set until a score or dataset changes.
func (s *Service) ComputeLeaderboard(ctx context.Context, actor *dynabench.User, code string, q LeaderboardQuery) (*Leaderboard, error) {
	t, err := s.VisibleTask(ctx, actor, code)
	if err != nil {
		return nil, err
	}
	version, err := s.Store.ScoresVersion(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%d|%s|%d|%s|%s", t.ID, version, q.Round, weightKey(q.MetricWeights), weightKey(q.DatasetWeights))
	if b := s.boards.get(key); b != nil {
		return b, nil
	}
	b, err := s.computeLeaderboard(ctx, t, q)
	if err != nil {
		return nil, err
	}
	b.ScoresVersion = version
	if len(b.Metrics) > 0 {
		if b.Trend, err = s.trend(ctx, t, b.Metrics[0].Name); err != nil {
			return nil, err
		}
	}
	s.boards.put(key, b)
	return b, nil
}

func weightKey(w map[string]float64) string {
	if w == nil {
		return "-"
	}
	keys := make([]string, 0, len(w))
	for k := range w {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s:%g,", k, w[k])
	}
	return b.String()
}

// boardData is what a leaderboard is computed from.
type boardData struct {
	cfg      *taskconfig.Config
	target   taskconfig.Field
	datasets []*dynabench.Dataset
	examples map[int64][]*dynabench.DatasetExample // originals by dataset
	models   []*dynabench.Model
	evals    map[int64]map[string]*dynabench.Evaluation // model → "dataset/variant" → evaluation
}

func (s *Service) loadBoardData(ctx context.Context, t *dynabench.Task, access func(*dynabench.Dataset) bool, round int) (*boardData, error) {
	cfg, err := s.Config(t)
	if err != nil {
		return nil, err
	}
	target, ok := primaryTarget(cfg)
	if !ok {
		return nil, dynabench.Errorf(dynabench.EINVALID, "the task config has no target field to score against")
	}
	all, err := s.Store.FindDatasets(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	bd := &boardData{cfg: cfg, target: target, examples: map[int64][]*dynabench.DatasetExample{}, evals: map[int64]map[string]*dynabench.Evaluation{}}
	for _, d := range all {
		if access(d) && (round == 0 || d.RoundNumber == round) {
			bd.datasets = append(bd.datasets, d)
			exs, err := s.datasetExamples(ctx, d, dynabench.VariantOriginal)
			if err != nil {
				return nil, err
			}
			bd.examples[d.ID] = exs
		}
	}
	if bd.models, err = s.Store.FindModels(ctx, t.ID); err != nil {
		return nil, err
	}
	evs, err := s.Store.FindEvaluations(ctx, dynabench.EvaluationFilter{TaskID: t.ID})
	if err != nil {
		return nil, err
	}
	for _, e := range evs {
		if bd.evals[e.ModelID] == nil {
			bd.evals[e.ModelID] = map[string]*dynabench.Evaluation{}
		}
		bd.evals[e.ModelID][fmt.Sprintf("%d/%s", e.DatasetID, e.Variant)] = e
	}
	return bd, nil
}

// completed returns the model's completed evaluation of the dataset's current version, or nil.
func (bd *boardData) completed(m *dynabench.Model, d *dynabench.Dataset, variant string) *dynabench.Evaluation {
	e := bd.evals[m.ID][fmt.Sprintf("%d/%s", d.ID, variant)]
	if e == nil || e.Status != dynabench.EvalCompleted || e.Result == nil || e.DatasetVersion != d.Version {
		return nil
	}
	if variant == dynabench.VariantOriginal && len(e.Result.Predictions) != len(bd.examples[d.ID]) {
		return nil
	}
	return e
}

// perfSample is the model's per-example perf metric on a dataset, in percent.
func (bd *boardData) perfSample(metric string, d *dynabench.Dataset, preds []string) (*evaluation.Sample, error) {
	exs := bd.examples[d.ID]
	golds := make([][]string, len(exs))
	first := make([]string, len(exs))
	for i, e := range exs {
		golds[i], first[i] = e.Gold, e.Gold[0]
	}
	switch metric {
	case MetricAccuracy:
		sc, err := evaluation.AccuracyScores(first, preds)
		return &evaluation.Sample{Scores: sc, Scale: 100}, err
	case MetricMacroF1:
		lp, err := evaluation.EncodeLabels(first, preds, bd.target.Labels)
		return &evaluation.Sample{Labels: &lp, Scale: 100}, err
	case MetricSquadEM:
		sc, err := evaluation.SquadEMScores(golds, preds)
		return &evaluation.Sample{Scores: sc, Scale: 100}, err
	default:
		sc, err := evaluation.SquadF1Scores(golds, preds)
		return &evaluation.Sample{Scores: sc, Scale: 100}, err
	}
}

func (s *Service) computeLeaderboard(ctx context.Context, t *dynabench.Task, q LeaderboardQuery) (*Leaderboard, error) {
	bd, err := s.loadBoardData(ctx, t, func(d *dynabench.Dataset) bool { return d.Access == dynabench.AccessScoring }, q.Round)
	if err != nil {
		return nil, err
	}
	metas, err := metricMetas(bd.cfg)
	if err != nil {
		return nil, err
	}
	b := &Leaderboard{Task: t.Code, Round: q.Round, Rows: []LeaderboardRow{}, Pending: []PendingModel{}, ExcludedMetrics: []ExcludedMetric{}, Trend: []TrendPoint{},
		Resamples: evaluation.DefaultResamples, Confidence: 0.95, Seed: LeaderboardSeed, ComputedAt: s.Now().UTC()}
	// Weights: the reader's, checked against the metrics and datasets there are.
	if q.MetricWeights != nil {
		for name := range q.MetricWeights {
			if !slices.ContainsFunc(metas, func(m evaluation.MetricMeta) bool { return m.Name == name }) {
				return nil, dynabench.FieldErrorf(dynabench.EINVALID, "metric_weights", "no metric %q on this leaderboard", name)
			}
		}
		for i := range metas {
			metas[i].Weight = q.MetricWeights[metas[i].Name]
		}
	}
	for name := range q.DatasetWeights {
		if !slices.ContainsFunc(bd.datasets, func(d *dynabench.Dataset) bool { return strings.EqualFold(d.Name, name) }) {
			return nil, dynabench.FieldErrorf(dynabench.EINVALID, "dataset_weights", "no scoring dataset %q", name)
		}
	}
	for _, d := range bd.datasets {
		w := float64(DefaultDatasetWeight)
		if q.DatasetWeights != nil {
			w = 0
			for name, v := range q.DatasetWeights {
				if strings.EqualFold(d.Name, name) {
					w = v
				}
			}
		}
		b.Datasets = append(b.Datasets, evaluation.DatasetWeight{Name: d.Name, Weight: w})
	}
	if len(bd.datasets) == 0 {
		b.Metrics = metas
		return b, nil
	}

	// Which models count: published, with a completed evaluation of every scoring dataset's
	// current version (and of each perturbed copy a delta metric needs).
	var ranked []*dynabench.Model
	for _, m := range bd.models {
		if !m.Published {
			continue
		}
		reason := ""
		for _, d := range bd.datasets {
			for _, v := range variantsOf(d) {
				if bd.completed(m, d, v) == nil && (v == dynabench.VariantOriginal || slices.Contains(bd.cfg.DeltaMetrics, v)) {
					reason = fmt.Sprintf("not yet scored on %s", d.Name)
					if v != "" {
						reason += " (" + v + ")"
					}
					if e := bd.evals[m.ID][fmt.Sprintf("%d/%s", d.ID, v)]; e != nil && e.Status == dynabench.EvalFailed {
						reason = fmt.Sprintf("evaluation on %s failed: %s", d.Name, e.Reason)
					}
				}
			}
		}
		if reason != "" {
			b.Pending = append(b.Pending, PendingModel{Model: BoardModel{m.ID, m.Name}, Reason: reason})
			continue
		}
		ranked = append(ranked, m)
	}
	// Metrics no counted model can be given honestly are left out of the Dynascore, and said so.
	var kept []evaluation.MetricMeta
	for _, mm := range metas {
		if why := bd.missing(mm.Name, ranked); why != "" {
			b.ExcludedMetrics = append(b.ExcludedMetrics, ExcludedMetric{Name: mm.Name, Reason: why})
			continue
		}
		kept = append(kept, mm)
	}
	b.Metrics = kept
	if len(ranked) == 0 {
		return b, nil
	}
	if sum := sumWeights(kept); sum <= 0 || math.IsNaN(sum) {
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "metric_weights", "at least one metric needs a positive weight")
	}
	if sum := sumDatasetWeights(b.Datasets); sum <= 0 {
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "dataset_weights", "at least one dataset needs a positive weight")
	}
	in := evaluation.LeaderboardInput{Metrics: kept}
	for _, dw := range b.Datasets {
		in.Datasets = append(in.Datasets, dw.Name)
		in.DatasetWeights = append(in.DatasetWeights, dw.Weight)
	}
	for _, m := range ranked {
		in.Models = append(in.Models, strconv.FormatInt(m.ID, 10))
		perDataset := make([][]*evaluation.Sample, len(bd.datasets))
		for di, d := range bd.datasets {
			ev := bd.completed(m, d, dynabench.VariantOriginal)
			perDataset[di] = make([]*evaluation.Sample, len(kept))
			for k, mm := range kept {
				var smp *evaluation.Sample
				switch mm.Name {
				case MetricThroughput:
					smp = &evaluation.Sample{Value: ev.Result.ExamplesPerSecond}
				case MetricMemory:
					smp = &evaluation.Sample{Value: *ev.Result.MemoryGiB}
				case MetricFairness, MetricRobustness:
					smp = &evaluation.Sample{Value: bd.completed(m, d, mm.Name).Result.Metrics[mm.Name]}
				default:
					if smp, err = bd.perfSample(mm.Name, d, ev.Result.Predictions); err != nil {
						return nil, err
					}
				}
				perDataset[di][k] = smp
			}
		}
		in.Samples = append(in.Samples, perDataset)
	}
	lb, err := evaluation.ComputeLeaderboard(in, evaluation.BootstrapOptions{Seed: LeaderboardSeed})
	if err != nil {
		return nil, fmt.Errorf("leaderboard %s: %w", t.Code, err)
	}
	// A metric with the same value for every ranked model has AMRS 0: Dynaboard's formula would give
	// every model +Inf, and it cannot separate the models anyway. Leave it out, say so, recompute, so
	// that the metrics listed are exactly those the Dynascores were computed from.
	constant := false
	for k, mm := range in.Metrics {
		constant = constant || (k > 0 && lb.AMRS[k] == 0 && mm.Weight > 0)
	}
	if constant {
		var keep []int
		for k, mm := range in.Metrics {
			if k > 0 && lb.AMRS[k] == 0 && mm.Weight > 0 {
				b.ExcludedMetrics = append(b.ExcludedMetrics, ExcludedMetric{Name: mm.Name,
					Reason: "the same for every ranked model: it cannot separate them (AMRS 0 would make every Dynascore infinite)"})
				continue
			}
			keep = append(keep, k)
		}
		in = in.Keep(keep)
		if lb, err = evaluation.ComputeLeaderboard(in, evaluation.BootstrapOptions{Seed: LeaderboardSeed}); err != nil {
			return nil, fmt.Errorf("leaderboard %s: %w", t.Code, err)
		}
	}
	if !finiteBoard(lb) {
		return nil, fmt.Errorf("leaderboard %s: the Dynascore is not finite", t.Code)
	}
	names := map[string]*dynabench.Model{}
	for _, m := range ranked {
		names[strconv.FormatInt(m.ID, 10)] = m
	}
	for _, r := range lb.Rows {
		m := names[r.Model]
		b.Rows = append(b.Rows, LeaderboardRow{Model: BoardModel{m.ID, m.Name}, Dynascore: r.Dynascore, DynascoreCI: r.DynascoreCI,
			Rank: r.Rank, Metrics: r.Metrics})
	}
	b.Metrics = lb.Metrics
	return b, nil
}

// finiteBoard reports whether every number of a computed leaderboard is finite.
func finiteBoard(lb evaluation.Leaderboard) bool {
	ok := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	for _, r := range lb.Rows {
		if !ok(r.Dynascore) || !ok(r.DynascoreCI[0]) || !ok(r.DynascoreCI[1]) {
			return false
		}
		for _, v := range r.Metrics {
			if !ok(v.Value) || !ok(v.CI[0]) || !ok(v.CI[1]) {
				return false
			}
		}
	}
	return true
}

// missing says why a metric cannot be given for every ranked model on every dataset ("" when it can).
func (bd *boardData) missing(metric string, ranked []*dynabench.Model) string {
	switch metric {
	case MetricMemory:
		var unmeasured []string
		for _, m := range ranked {
			for _, d := range bd.datasets {
				if e := bd.completed(m, d, dynabench.VariantOriginal); e != nil && e.Result.MemoryGiB == nil {
					unmeasured = append(unmeasured, m.Name)
					break
				}
			}
		}
		if len(unmeasured) > 0 {
			return "not measured for " + strings.Join(unmeasured, ", ") + " (a model served over HTTP that does not report its memory); memory is never estimated"
		}
	case MetricFairness, MetricRobustness:
		for _, d := range bd.datasets {
			if d.Variants[metric] == 0 {
				return fmt.Sprintf("dataset %s has no %s-perturbed copies (no example changed under those perturbations)", d.Name, metric)
			}
		}
	}
	return ""
}

func sumWeights(ms []evaluation.MetricMeta) float64 {
	var s float64
	for _, m := range ms {
		s += m.Weight
	}
	return s
}

func sumDatasetWeights(ds []evaluation.DatasetWeight) float64 {
	var s float64
	for _, d := range ds {
		s += d.Weight
	}
	return s
}

// ParseWeights reads "name:w,name:w" (weights finite and non-negative); nil for an empty string.
func ParseWeights(field, s string) (map[string]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]float64{}
	for _, part := range strings.Split(s, ",") {
		name, w, ok := strings.Cut(strings.TrimSpace(part), ":")
		v, err := strconv.ParseFloat(strings.TrimSpace(w), 64)
		if !ok || name == "" || err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1e6 {
			return nil, dynabench.FieldErrorf(dynabench.EINVALID, field, "%q: expected name:weight with a weight from 0 to 1e6", part)
		}
		if len(out) >= 100 {
			return nil, dynabench.FieldErrorf(dynabench.EINVALID, field, "at most 100 weights")
		}
		out[strings.TrimSpace(name)] = v
	}
	return out, nil
}

// CreateFork saves weights under a short URL of their own (any signed-in user).
func (s *Service) CreateFork(ctx context.Context, actor *dynabench.User, code, name string, q LeaderboardQuery) (*dynabench.LeaderboardFork, error) {
	if err := requireUser(actor); err != nil {
		return nil, err
	}
	t, err := s.VisibleTask(ctx, actor, code)
	if err != nil {
		return nil, err
	}
	if name = strings.TrimSpace(name); name == "" || len(name) > 100 || hasNUL(name) {
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "name", "1 to 100 characters")
	}
	if _, err := s.ComputeLeaderboard(ctx, actor, code, q); err != nil { // the weights must make sense
		return nil, err
	}
	f := &dynabench.LeaderboardFork{TaskID: t.ID, Slug: newSlug(), Name: name, UserID: actor.ID,
		MetricWeights: q.MetricWeights, DatasetWeights: q.DatasetWeights}
	return f, s.Store.CreateLeaderboardFork(ctx, f)
}

// Fork returns a saved fork of the task.
func (s *Service) Fork(ctx context.Context, actor *dynabench.User, code, slug string) (*dynabench.LeaderboardFork, error) {
	t, err := s.VisibleTask(ctx, actor, code)
	if err != nil {
		return nil, err
	}
	f, err := s.Store.FindLeaderboardFork(ctx, slug)
	if err != nil || f.TaskID != t.ID {
		return nil, dynabench.FieldErrorf(dynabench.ENOTFOUND, "slug", "no fork %q of task %s", slug, code)
	}
	return f, nil
}

// CreateSnapshot freezes the leaderboard as it stands now (owners), under a URL of its own.
func (s *Service) CreateSnapshot(ctx context.Context, actor *dynabench.User, code, name string, q LeaderboardQuery) (*dynabench.LeaderboardSnapshot, error) {
	t, err := s.Task(ctx, code)
	if err != nil {
		return nil, err
	}
	if err := s.requireOwner(ctx, actor, t); err != nil {
		return nil, err
	}
	if name = strings.TrimSpace(name); name == "" || len(name) > 100 || hasNUL(name) {
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "name", "1 to 100 characters")
	}
	b, err := s.ComputeLeaderboard(ctx, actor, code, q)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	sn := &dynabench.LeaderboardSnapshot{TaskID: t.ID, Slug: newSlug(), Name: name, UserID: actor.ID, Body: body}
	return sn, s.Store.CreateLeaderboardSnapshot(ctx, sn)
}

// Snapshot returns a frozen leaderboard of the task.
func (s *Service) Snapshot(ctx context.Context, actor *dynabench.User, code, slug string) (*dynabench.LeaderboardSnapshot, error) {
	t, err := s.VisibleTask(ctx, actor, code)
	if err != nil {
		return nil, err
	}
	sn, err := s.Store.FindLeaderboardSnapshot(ctx, slug)
	if err != nil || sn.TaskID != t.ID {
		return nil, dynabench.FieldErrorf(dynabench.ENOTFOUND, "slug", "no snapshot %q of task %s", slug, code)
	}
	return sn, nil
}

func newSlug() string {
	const alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
	b := make([]byte, 10)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// Comparison is two models compared on the same examples of each dataset both completed.
type Comparison struct {
	A        BoardModel          `json:"a"`
	B        BoardModel          `json:"b"`
	Metric   string              `json:"metric"`
	Datasets []DatasetComparison `json:"datasets"`
}

// DatasetComparison is a paired comparison on one dataset: the perf metric of each model, the
// difference with its 95% paired-bootstrap interval and p-value, and for labels McNemar's exact test.
type DatasetComparison struct {
	Dataset  string              `json:"dataset"`
	N        int                 `json:"n"`
	A        float64             `json:"a"`
	B        float64             `json:"b"`
	Diff     float64             `json:"diff"`
	DiffCI   evaluation.Interval `json:"diff_ci"`
	P        float64             `json:"p_bootstrap"`
	McNemarP *float64            `json:"p_mcnemar,omitempty"`
	OnlyA    *int                `json:"only_a_correct,omitempty"`
	OnlyB    *int                `json:"only_b_correct,omitempty"`
}

// Compare compares two models of one task on every dataset the actor may see and both completed.
// The paired bootstrap resamples per-example scores (accuracy, EM or F1; macro-F1 tasks compare
// accuracy there, since macro-F1 is not a mean of per-example scores).
func (s *Service) Compare(ctx context.Context, actor *dynabench.User, a, b int64) (*Comparison, error) {
	ma, t, err := s.Model(ctx, actor, a)
	if err != nil {
		return nil, dynabench.FieldErrorf(dynabench.ENOTFOUND, "a", "no model %d", a)
	}
	mb, tb, err := s.Model(ctx, actor, b)
	if err != nil {
		return nil, dynabench.FieldErrorf(dynabench.ENOTFOUND, "b", "no model %d", b)
	}
	if t.ID != tb.ID {
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "b", "the models belong to different tasks")
	}
	owner, err := s.CanOwn(ctx, actor, t)
	if err != nil {
		return nil, err
	}
	bd, err := s.loadBoardData(ctx, t, func(d *dynabench.Dataset) bool { return d.Access != dynabench.AccessHidden || owner }, 0)
	if err != nil {
		return nil, err
	}
	metric := MetricAccuracy
	if bd.target.Type != taskconfig.TypeMulticlass {
		metric = MetricSquadF1
	}
	c := &Comparison{A: BoardModel{ma.ID, ma.Name}, B: BoardModel{mb.ID, mb.Name}, Metric: metric, Datasets: []DatasetComparison{}}
	for _, d := range bd.datasets {
		ea, eb := bd.completed(ma, d, ""), bd.completed(mb, d, "")
		if ea == nil || eb == nil {
			continue
		}
		sa, err := bd.perfSample(metric, d, ea.Result.Predictions)
		if err != nil {
			return nil, err
		}
		sb, err := bd.perfSample(metric, d, eb.Result.Predictions)
		if err != nil {
			return nil, err
		}
		pr, err := evaluation.PairedBootstrap(sa.Scores, sb.Scores, evaluation.DefaultResamples, LeaderboardSeed)
		if err != nil {
			return nil, err
		}
		dc := DatasetComparison{Dataset: d.Name, N: len(sa.Scores), A: 100 * evaluation.Mean(sa.Scores), B: 100 * evaluation.Mean(sb.Scores),
			Diff: 100 * pr.Diff, DiffCI: evaluation.Interval{100 * pr.CI[0], 100 * pr.CI[1]}, P: pr.P}
		if metric == MetricAccuracy {
			ca, cb := make([]bool, len(sa.Scores)), make([]bool, len(sb.Scores))
			for i := range ca {
				ca[i], cb[i] = sa.Scores[i] == 1, sb.Scores[i] == 1
			}
			if mc, err := evaluation.McNemar(ca, cb); err == nil {
				dc.McNemarP, dc.OnlyA, dc.OnlyB = &mc.P, &mc.B, &mc.C
			}
		}
		c.Datasets = append(c.Datasets, dc)
	}
	return c, nil
}

package taskconfig

import (
	"math"
	"strings"
)

// PerfMetricTypes are the accepted perf_metric types: Dynabench's, plus
// chrf (the plain variant of its chrf_pp).
var PerfMetricTypes = []string{
	"accuracy", "macro_f1", "squad_f1", "bleu", "sp_bleu", "chrf", "chrf_pp",
	"vqa_accuracy", "dataperf_f1", "dataperf_fraction_of_fixes", "dataperf_balanced_accuracy",
}

// DeltaMetricTypes are the accepted delta_metrics types.
var DeltaMetricTypes = []string{"fairness", "robustness"}

// EfficiencyMetrics are the metrics measured on every model besides the perf
// and delta metrics; default_weights may name them too.
var EfficiencyMetrics = []string{"examples_per_second", "memory_utilization"}

var modelWrongTypes = []string{ModelWrongExactMatch, ModelWrongStringF1, ModelWrongAskUser}

// metricSpec is a model-wrong metric as written, in either dialect, with the
// paths to point problems at.
type metricSpec struct {
	typ, typPath   string
	refs, refPaths []string
	refsPath       string
	threshold      any
	thresholdPath  string
}

// modelWrong reads model_wrong_metric (v1) and model_evaluation_metric (v2).
// v1 wins when both are given; a disagreement is only a warning because the
// Dynabench examples carry both and the v1 key is the one that is applied.
func (b *builder) modelWrong() {
	v1 := b.mapping(b.doc, "model_wrong_metric", "")
	v2 := b.mapping(b.doc, "model_evaluation_metric", "")
	switch {
	case v1 != nil:
		spec := b.v1Metric(v1)
		b.applyMetric(spec)
		if v2 != nil {
			b.compareMetrics(spec, b.v2Metric(v2))
		}
	case v2 != nil:
		b.applyMetric(b.v2Metric(v2))
	default:
		b.cfg.ModelWrongMetric = ModelWrongMetric{Type: ModelWrongAskUser}
	}
}

func (b *builder) v1Metric(m map[string]any) metricSpec {
	const path = "model_wrong_metric"
	b.unknownKeys(m, path, map[string]bool{"type": true, "reference_names": true, "reference_name": true, "threshold": true})
	s := metricSpec{typ: b.text(m, "type", path), typPath: path + ".type", refsPath: path + ".reference_names",
		threshold: m["threshold"], thresholdPath: path + ".threshold"}
	if s.typ == "" {
		b.rep.problem(s.typPath, "required (exact_match, string_f1 or ask_user)")
	}
	// Dynabench spells it reference_names for exact_match and
	// reference_name for string_f1; either is accepted for both.
	if v, ok := m["reference_names"]; ok && v != nil {
		s.refs, s.refPaths = b.nameList(v, s.refsPath)
	} else if name := strings.TrimSpace(b.text(m, "reference_name", path)); name != "" {
		s.refs, s.refPaths, s.refsPath = []string{name}, []string{path + ".reference_name"}, path+".reference_name"
	}
	return s
}

// v2Metric reads model_evaluation_metric. It names no fields: Dynabench
// compares the model's prediction field with the annotator's label, so the
// prediction field (else every target) is the reference.
func (b *builder) v2Metric(m map[string]any) metricSpec {
	const path = "model_evaluation_metric"
	s := metricSpec{typ: b.text(m, "metric_name", path), typPath: path + ".metric_name", refsPath: path,
		thresholdPath: path + ".metric_parameters.threshold"}
	if s.typ == "" {
		s.typ = ModelWrongAskUser
	}
	if params, ok := asMap(m["metric_parameters"]); ok {
		s.threshold = params["threshold"]
	}
	refs := b.cfg.Targets()
	if b.cfg.IsTarget(b.cfg.PredictionField) {
		refs = []string{b.cfg.PredictionField}
	}
	for _, r := range refs {
		s.refs, s.refPaths = append(s.refs, r), append(s.refPaths, path)
	}
	return s
}

// nameList reads a list of field names (or one name).
func (b *builder) nameList(v any, path string) (names, paths []string) {
	if s, ok := v.(string); ok {
		return []string{strings.TrimSpace(s)}, []string{path}
	}
	items, ok := asList(v)
	if !ok {
		b.rep.problem(path, "must be a list of field names")
		return nil, nil
	}
	if b.tooMany(path, len(items), maxEntries) {
		return nil, nil
	}
	for i, item := range items {
		s, ok := scalarText(item)
		if !ok {
			b.rep.problem(indexPath(path, i), "must be a field name")
			continue
		}
		names, paths = append(names, strings.TrimSpace(s)), append(paths, indexPath(path, i))
	}
	return names, paths
}

// applyMetric validates a spec and stores it in the config.
func (b *builder) applyMetric(s metricSpec) {
	mw := ModelWrongMetric{Type: s.typ}
	defer func() { b.cfg.ModelWrongMetric = mw }()
	if !contains(modelWrongTypes, s.typ) {
		if s.typ != "" {
			b.rep.problem(s.typPath, "unknown type %q (want exact_match, string_f1 or ask_user)", s.typ)
		}
		return
	}
	if s.typ == ModelWrongAskUser {
		return
	}
	mw.ReferenceNames = b.targetRefs(s)
	if s.typ == ModelWrongStringF1 {
		mw.Threshold = b.threshold(s)
	}
}

func (b *builder) targetRefs(s metricSpec) []string {
	if len(s.refs) == 0 {
		b.rep.problem(s.refsPath, "required for %s: the target fields to compare", s.typ)
		return nil
	}
	var refs []string
	for i, name := range s.refs {
		if !b.cfg.IsTarget(name) {
			b.rep.problem(s.refPaths[i], "no target field named %q (a target is in both input and output; targets: %s)",
				name, orNone(b.cfg.Targets()))
			continue
		}
		refs = append(refs, name)
	}
	return refs
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func (b *builder) threshold(s metricSpec) float64 {
	if s.threshold == nil {
		b.rep.problem(s.thresholdPath, "required for string_f1")
		return 0
	}
	f, ok := toFloat(s.threshold)
	if !ok || math.IsNaN(f) || f < 0 || f > 1 {
		b.rep.problem(s.thresholdPath, "must be a number in [0, 1]")
		return 0
	}
	return f
}

// compareMetrics warns when the v2 metric says something else than the v1
// one, which is the one applied.
func (b *builder) compareMetrics(v1, v2 metricSpec) {
	if v1.typ != v2.typ {
		b.rep.warn(v2.typPath, "%q disagrees with model_wrong_metric.type %q; model_wrong_metric is used", v2.typ, v1.typ)
		return
	}
	t1, ok1 := toFloat(v1.threshold)
	t2, ok2 := toFloat(v2.threshold)
	if ok1 && ok2 && t1 != t2 {
		b.rep.warn(v2.thresholdPath, "%v disagrees with model_wrong_metric.threshold %v; model_wrong_metric is used", t2, t1)
	}
}

// perf reads perf_metric: one metric, or a list whose first is principal.
func (b *builder) perf() {
	v, present := b.doc["perf_metric"]
	if !present || v == nil {
		b.rep.problem("perf_metric", "required")
		return
	}
	if m, ok := asMap(v); ok {
		b.perfMetric(m, "perf_metric")
		return
	}
	items, ok := asList(v)
	if !ok || len(items) == 0 {
		b.rep.problem("perf_metric", "must be a mapping {type, reference_name} or a non-empty list of them")
		return
	}
	if b.tooMany("perf_metric", len(items), maxEntries) {
		return
	}
	for i, item := range items {
		m, ok := asMap(item)
		if !ok {
			b.rep.problem(indexPath("perf_metric", i), "must be a mapping {type, reference_name}")
			continue
		}
		b.perfMetric(m, indexPath("perf_metric", i))
	}
}

func (b *builder) perfMetric(m map[string]any, path string) {
	b.unknownKeys(m, path, map[string]bool{"type": true, "reference_name": true})
	p := PerfMetric{Type: b.text(m, "type", path), ReferenceName: strings.TrimSpace(b.text(m, "reference_name", path))}
	switch {
	case p.Type == "":
		b.rep.problem(joinPath(path, "type"), "required")
	case !contains(PerfMetricTypes, p.Type):
		b.rep.problem(joinPath(path, "type"), "unknown type %q (want one of %s)", p.Type, strings.Join(PerfMetricTypes, ", "))
	}
	if _, ok := b.cfg.OutputField(p.ReferenceName); !ok {
		if p.ReferenceName == "" {
			b.rep.problem(joinPath(path, "reference_name"), "required")
		} else {
			b.rep.problem(joinPath(path, "reference_name"), "no output field named %q", p.ReferenceName)
		}
	}
	b.cfg.Perf = append(b.cfg.Perf, p)
}

// deltas reads delta_metrics: a list of {type} (or bare type names).
func (b *builder) deltas() {
	for i, item := range b.list(b.doc, "delta_metrics", "") {
		path := indexPath("delta_metrics", i)
		typ, ok := item.(string)
		if m, isMap := asMap(item); isMap {
			b.unknownKeys(m, path, map[string]bool{"type": true, "perturb_fields": true})
			path = joinPath(path, "type")
			typ, ok = b.text(m, "type", indexPath("delta_metrics", i)), true
		}
		switch {
		case !ok:
			b.rep.problem(path, "must be a mapping {type: fairness|robustness}")
		case typ == "":
			b.rep.problem(path, "required (fairness or robustness)")
		case !contains(DeltaMetricTypes, typ):
			b.rep.problem(path, "unknown delta metric %q (want fairness or robustness)", typ)
		case contains(b.cfg.DeltaMetrics, typ):
			b.rep.problem(path, "duplicate delta metric %q", typ)
		default:
			b.cfg.DeltaMetrics = append(b.cfg.DeltaMetrics, typ)
		}
	}
}

// aggregation reads aggregation_metric; dynascore is the only one and the
// default. Unlike Dynabench, whose validator crashes on default_weights, we
// accept and check them.
func (b *builder) aggregation() {
	const path = "aggregation_metric"
	b.cfg.Aggregation = Aggregation{Type: "dynascore"}
	m := b.mapping(b.doc, path, "")
	if m == nil {
		return
	}
	b.unknownKeys(m, path, map[string]bool{"type": true, "default_weights": true})
	if typ := b.text(m, "type", path); typ != "" && typ != "dynascore" {
		b.rep.problem(path+".type", "unknown type %q (want dynascore)", typ)
	}
	weights := b.mapping(m, "default_weights", path)
	for _, name := range sortedKeys(weights) {
		b.defaultWeight(name, weights[name], path+".default_weights")
	}
}

func (b *builder) defaultWeight(name string, v any, path string) {
	p := joinPath(path, name)
	if !contains(PerfMetricTypes, name) && !contains(DeltaMetricTypes, name) && !contains(EfficiencyMetrics, name) {
		b.rep.problem(p, "unknown metric (want a perf metric type, fairness, robustness, examples_per_second or memory_utilization)")
		return
	}
	w, ok := toFloat(v)
	if !ok || math.IsNaN(w) || w < 0 || w > 5 {
		b.rep.problem(p, "must be a number between 0 and 5")
		return
	}
	if b.cfg.Aggregation.DefaultWeights == nil {
		b.cfg.Aggregation.DefaultWeights = map[string]float64{}
	}
	b.cfg.Aggregation.DefaultWeights[name] = w
}

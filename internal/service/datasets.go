package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/perturb"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// MaxDatasetExamples bounds one evaluation dataset.
const MaxDatasetExamples = MaxJSONLLines

// PerturbSeed seeds every perturbed copy: the same dataset always gives the same copies.
const PerturbSeed = 20211012

var datasetNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// NewDataset is an upload: a name, an access type and JSONL.
type NewDataset struct {
	Name   string
	Access string
	Body   io.Reader
	// RoundNumber ties a dataset to the round it came from (releases); 0 for uploads.
	RoundNumber int
}

// UploadDataset checks every line of a JSONL evaluation dataset against the task config (the first
// bad line is named and nothing is stored), derives its perturbed copies, and stores it: a new
// dataset, or a new version of the dataset of that name. Every model of the task is then queued for
// evaluation on it, so a changed dataset re-scores the models scored on it. Owners only.
func (s *Service) UploadDataset(ctx context.Context, actor *dynabench.User, code string, nd NewDataset) (*dynabench.Dataset, error) {
	t, err := s.Task(ctx, code)
	if err != nil {
		return nil, err
	}
	if err := s.requireOwner(ctx, actor, t); err != nil {
		return nil, err
	}
	var problems []dynabench.FieldError
	if !datasetNameRE.MatchString(nd.Name) {
		problems = append(problems, dynabench.FieldError{Field: "name", Message: "1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"})
	}
	if !slices.Contains([]string{dynabench.AccessScoring, dynabench.AccessStandard, dynabench.AccessHidden}, nd.Access) {
		problems = append(problems, dynabench.FieldError{Field: "access", Message: "one of scoring, standard, hidden"})
	}
	if len(problems) > 0 {
		return nil, dynabench.Invalid(problems)
	}
	d, all, err := s.prepareDataset(t, actor, nd)
	if err != nil {
		return nil, err
	}
	err = s.Store.InTx(ctx, func(tx dynabench.Store) error { return s.writeDataset(ctx, tx, t, d, all) })
	if err != nil {
		return nil, err
	}
	s.wakeWorkers()
	return d, nil
}

// prepareDataset reads and checks a JSONL dataset and derives its perturbed copies.
func (s *Service) prepareDataset(t *dynabench.Task, actor *dynabench.User, nd NewDataset) (*dynabench.Dataset, []*dynabench.DatasetExample, error) {
	cfg, err := s.Config(t)
	if err != nil {
		return nil, nil, err
	}
	target, ok := primaryTarget(cfg)
	if !ok {
		return nil, nil, dynabench.Errorf(dynabench.EINVALID, "the task config has no target field to score against")
	}
	h := sha256.New()
	var originals []*dynabench.DatasetExample
	var raws []rawExample
	uids := map[string]int{}
	err = ReadJSONL(io.TeeReader(nd.Body, h), func(line int, raw []byte) error {
		if len(originals) >= MaxDatasetExamples {
			return dynabench.FieldErrorf(dynabench.ETOOLARGE, "body", "more than %d examples", MaxDatasetExamples)
		}
		ex, rx, err := s.parseDatasetLine(cfg, target, raw)
		if de := (*dynabench.Error)(nil); errors.As(err, &de) && de.Code == dynabench.EINVALID {
			// Name the line first, then the field: "line 3", "label: ... is not one of ...".
			return dynabench.FieldErrorf(dynabench.EINVALID, fmt.Sprintf("line %d", line), "%s: %s", de.Field, de.Message)
		} else if err != nil {
			return err
		}
		if first, dup := uids[ex.UID]; dup {
			return fmt.Errorf("uid %q repeats line %d", ex.UID, first)
		}
		uids[ex.UID] = line
		ex.Idx = len(originals)
		originals = append(originals, ex)
		raws = append(raws, rx)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(originals) == 0 {
		return nil, nil, dynabench.FieldErrorf(dynabench.EINVALID, "body", "no examples: send one JSON object per line")
	}
	all, variants := perturbAll(cfg, originals, raws)
	d := &dynabench.Dataset{TaskID: t.ID, Name: nd.Name, Access: nd.Access, RoundNumber: nd.RoundNumber,
		SHA256: hex.EncodeToString(h.Sum(nil)), Size: len(originals), Variants: variants, CreatedBy: actor.ID}
	return d, all, nil
}

// writeDataset stores a prepared dataset (a new one, or a new version) in the caller's transaction
// and queues every model of the task on it.
func (s *Service) writeDataset(ctx context.Context, tx dynabench.Store, t *dynabench.Task, d *dynabench.Dataset, all []*dynabench.DatasetExample) error {
	if err := tx.SaveDataset(ctx, d, all); err != nil {
		return err
	}
	models, err := tx.FindModels(ctx, t.ID)
	if err != nil {
		return err
	}
	for _, m := range models {
		if err := s.queueEvaluations(ctx, tx, t, m, []*dynabench.Dataset{d}); err != nil {
			return err
		}
	}
	return nil
}

// rawExample is a dataset line's context and input fields, before they become the model's input.
type rawExample struct {
	ctx, input map[string]any
}

// parseDatasetLine reads one line: "uid", the config's context and input fields (the target among
// them: one label, or an answer or a list of acceptable answers), optional "tags" and "metadata".
func (s *Service) parseDatasetLine(cfg *taskconfig.Config, target taskconfig.Field, raw []byte) (*dynabench.DatasetExample, rawExample, error) {
	var row map[string]any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&row); err != nil || row == nil {
		return nil, rawExample{}, errors.New("not a JSON object")
	}
	if dec.More() {
		return nil, rawExample{}, errors.New("more than one JSON value on the line")
	}
	if hasNUL(row) {
		return nil, rawExample{}, errors.New("text may not contain NUL (U+0000) characters")
	}
	ex := &dynabench.DatasetExample{}
	switch uid := row["uid"].(type) {
	case string:
		ex.UID = strings.TrimSpace(uid)
	case json.Number:
		ex.UID = uid.String()
	}
	if ex.UID == "" || len(ex.UID) > 200 {
		return nil, rawExample{}, dynabench.FieldErrorf(dynabench.EINVALID, "uid", "required: a string or number of at most 200 bytes")
	}
	if v, ok := row["tags"]; ok && v != nil {
		list, ok := v.([]any)
		if !ok || len(list) > 50 {
			return nil, rawExample{}, dynabench.FieldErrorf(dynabench.EINVALID, "tags", "a list of at most 50 strings")
		}
		for _, e := range list {
			tag, ok := e.(string)
			if !ok || tag == "" || len(tag) > 100 {
				return nil, rawExample{}, dynabench.FieldErrorf(dynabench.EINVALID, "tags", "each tag a string of 1 to 100 bytes")
			}
			ex.Tags = append(ex.Tags, tag)
		}
	}
	rx := rawExample{ctx: map[string]any{}, input: map[string]any{}}
	for k, v := range row {
		switch {
		case k == "uid" || k == "tags" || k == "metadata":
		case hasField(cfg.Context, k):
			rx.ctx[k] = plainJSON(v)
		case hasField(cfg.Input, k):
			rx.input[k] = plainJSON(v)
		default:
			return nil, rawExample{}, dynabench.FieldErrorf(dynabench.EINVALID, k, "not a field of the task config")
		}
	}
	gold, err := goldValues(target, rx.input[target.Name])
	if err != nil {
		return nil, rawExample{}, err
	}
	check := cloneMap(rx.input)
	check[target.Name] = gold[0]
	// A dataset may leave out a text context field (sentiment sets often have no prompt): it is
	// checked as empty and left out of the model's input.
	ctx := cloneMap(rx.ctx)
	for _, f := range cfg.Context {
		if _, ok := ctx[f.Name]; !ok && f.Type == taskconfig.TypeString {
			ctx[f.Name] = ""
		}
	}
	if p := append(cfg.CheckContext(ctx, s.Limits), cfg.CheckInput(ctx, check, s.Limits)...); len(p) > 0 {
		return nil, rawExample{}, dynabench.FieldErrorf(dynabench.EINVALID, p[0].Path, "%s", p[0].Message)
	}
	ex.Gold = gold
	ex.Input = cfg.ModelInput(rx.ctx, rx.input)
	return ex, rx, nil
}

// goldValues reads a target: a label, an answer, or a non-empty list of acceptable answers.
func goldValues(target taskconfig.Field, v any) ([]string, error) {
	var out []string
	switch x := v.(type) {
	case string:
		out = []string{x}
	case []any:
		if target.Type == taskconfig.TypeMulticlass {
			return nil, dynabench.FieldErrorf(dynabench.EINVALID, target.Name, "one label, not a list")
		}
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, dynabench.FieldErrorf(dynabench.EINVALID, target.Name, "a list of answer strings")
			}
			out = append(out, s)
		}
	}
	if len(out) == 0 || len(out) > 20 {
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, target.Name, "required: the gold %s (a string, or a list of 1 to 20 acceptable answers)", target.Name)
	}
	for _, s := range out {
		if strings.TrimSpace(s) == "" {
			return nil, dynabench.FieldErrorf(dynabench.EINVALID, target.Name, "an empty answer")
		}
	}
	return out, nil
}

// plainJSON turns json.Number back into float64, as the rest of the platform expects.
func plainJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(x.String(), 64)
		if err != nil {
			return x.String()
		}
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = plainJSON(e)
		}
	case []any:
		for i, e := range x {
			x[i] = plainJSON(e)
		}
	}
	return v
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func hasField(fields []taskconfig.Field, name string) bool {
	for _, f := range fields {
		if f.Name == name {
			return true
		}
	}
	return false
}

// primaryTarget is the field models are trained on and scored by (taskconfig.Config.PrimaryTarget).
func primaryTarget(cfg *taskconfig.Config) (taskconfig.Field, bool) { return cfg.PrimaryTarget() }

// perturbAll returns the originals followed by their perturbed copies (robustness, then fairness),
// and the number of copies of each kind. Only the text fields the model reads are perturbed; the
// gold answers of a QA task must survive in the context unchanged, or that copy is skipped.
func perturbAll(cfg *taskconfig.Config, originals []*dynabench.DatasetExample, raws []rawExample) ([]*dynabench.DatasetExample, map[string]int) {
	pes := make([]perturb.Example, len(originals))
	for i, ex := range originals {
		fields := map[string]string{}
		for _, m := range []map[string]any{raws[i].ctx, raws[i].input} {
			for k, v := range m {
				if sv, ok := v.(string); ok && !cfg.IsTarget(k) {
					fields[k] = sv
				}
			}
		}
		pe := perturb.Example{UID: ex.UID, Fields: fields}
		if target, _ := primaryTarget(cfg); target.Type == taskconfig.TypeContextStringSelection {
			pe.Anchors = ex.Gold
		}
		pes[i] = pe
	}
	all := slices.Clone(originals)
	variants := map[string]int{}
	byUID := make(map[string]int, len(originals))
	for i, ex := range originals {
		byUID[ex.UID] = i
	}
	for _, kind := range []string{dynabench.VariantRobustness, dynabench.VariantFairness} {
		for idx, d := range perturb.Derive(pes, kind, PerturbSeed) {
			i := byUID[d.OriginalUID]
			ctx, input := cloneMap(raws[i].ctx), cloneMap(raws[i].input)
			for k, v := range d.Fields {
				if _, ok := ctx[k]; ok {
					ctx[k] = v
				} else {
					input[k] = v
				}
			}
			all = append(all, &dynabench.DatasetExample{Variant: kind, Idx: idx, UID: d.UID, OriginalUID: d.OriginalUID,
				Perturbation: d.Perturbation, Input: cfg.ModelInput(ctx, input), Gold: originals[i].Gold, Tags: originals[i].Tags})
			variants[kind]++
		}
	}
	return all, variants
}

// Datasets lists the task's datasets the actor may see: hidden ones only for owners.
func (s *Service) Datasets(ctx context.Context, actor *dynabench.User, code string) ([]*dynabench.Dataset, error) {
	t, err := s.VisibleTask(ctx, actor, code)
	if err != nil {
		return nil, err
	}
	all, err := s.Store.FindDatasets(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	owner, err := s.CanOwn(ctx, actor, t)
	if err != nil {
		return nil, err
	}
	out := make([]*dynabench.Dataset, 0, len(all))
	for _, d := range all {
		if d.Access != dynabench.AccessHidden || owner {
			out = append(out, d)
		}
	}
	return out, nil
}

// DeleteDataset removes a dataset and its scores. Owners only.
func (s *Service) DeleteDataset(ctx context.Context, actor *dynabench.User, code, name string) error {
	t, err := s.Task(ctx, code)
	if err != nil {
		return err
	}
	if err := s.requireOwner(ctx, actor, t); err != nil {
		return err
	}
	d, err := s.Store.FindDatasetByName(ctx, t.ID, name)
	if err != nil {
		return dynabench.FieldErrorf(dynabench.ENOTFOUND, "name", "no dataset %q", name)
	}
	return s.Store.DeleteDataset(ctx, d.ID)
}

// exampleCache keeps decoded dataset examples by dataset, version and variant: a version never
// changes once written, and every evaluation job reads its dataset twice (to hand out inputs and to
// score the answers), as does every leaderboard computed after a new score.
type exampleCache struct {
	mu      sync.Mutex
	entries map[string][]*dynabench.DatasetExample
	size    int
}

// maxCachedExamples bounds the cache (by examples, about 1 KiB each).
const maxCachedExamples = 500_000

// datasetExamples returns one variant of the dataset's current version, from the cache when it can.
func (s *Service) datasetExamples(ctx context.Context, d *dynabench.Dataset, variant string) ([]*dynabench.DatasetExample, error) {
	key := fmt.Sprintf("%d/%d/%s", d.ID, d.Version, variant)
	c := &s.exampleCache
	c.mu.Lock()
	exs, ok := c.entries[key]
	c.mu.Unlock()
	if ok {
		return exs, nil
	}
	exs, err := s.Store.FindDatasetExamples(ctx, d.ID, variant)
	if err != nil {
		return nil, err
	}
	// Cache only what is known to be that version: the dataset may have been replaced meanwhile.
	if now, err := s.Store.FindDatasetByID(ctx, d.ID); err != nil || now.Version != d.Version {
		return exs, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || c.size+len(exs) > maxCachedExamples {
		c.entries, c.size = map[string][]*dynabench.DatasetExample{}, 0
	}
	if len(exs) <= maxCachedExamples {
		c.entries[key] = exs
		c.size += len(exs)
	}
	return exs, nil
}

package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/release"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// ReleaseRequest is how an owner releases a round.
type ReleaseRequest struct {
	Ratios  release.Ratios // zero: 80/10/10
	License string
	Public  bool // anyone may download the files
}

// ReleaseResult is a release with its manifest.
type ReleaseResult struct {
	Release  *dynabench.Release
	Manifest *release.Manifest
	Dataset  *dynabench.Dataset // the test split as a scoring dataset; nil when the test split is empty
}

// releaseKeys are the keys of a task's releases, derived from the install secret.
type releaseKeys struct {
	split, canary []byte
	anon          *release.Anonymizer
}

func (s *Service) releaseKeys(ctx context.Context, code string) (releaseKeys, error) {
	secret, err := s.Store.InstallSecret(ctx)
	if err != nil {
		return releaseKeys{}, err
	}
	anon, err := release.NewAnonymizer(secret, code)
	if err != nil {
		return releaseKeys{}, err
	}
	return releaseKeys{split: release.DeriveKey(secret, "split", code), canary: release.DeriveKey(secret, "canary", code), anon: anon}, nil
}

// closedRound returns round n of the task if it is closed: releases and exports freeze what a round
// collected, which an open round has not finished doing.
func (s *Service) closedRound(ctx context.Context, t *dynabench.Task, n int) (*dynabench.Round, error) {
	r, err := s.Round(ctx, t, n)
	if err != nil {
		return nil, err
	}
	if r.Status == dynabench.RoundOpen {
		return nil, dynabench.FieldErrorf(dynabench.ECONFLICT, "round",
			"round %d is still open: open the next round first (POST /api/v1/tasks/%s/rounds), which closes it", n, t.Code)
	}
	return r, nil
}

// roundRecords reads a round's examples as release records: every non-retracted example when all,
// else only the verified ones.
func (s *Service) roundRecords(ctx context.Context, t *dynabench.Task, r *dynabench.Round, all bool) ([]release.Record, error) {
	f := dynabench.ExampleFilter{TaskID: t.ID, RoundIDs: []int64{r.ID}}
	if !all {
		f.Status = dynabench.StatusVerified
	}
	contexts := map[int64]*dynabench.Context{}
	var out []release.Record
	for {
		page, err := s.Store.FindExamples(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, e := range page {
			if e.Status == dynabench.StatusRetracted {
				continue
			}
			c, ok := contexts[e.ContextID]
			if !ok {
				if c, err = s.Store.FindContextByID(ctx, e.ContextID); err != nil {
					return nil, err
				}
				contexts[e.ContextID] = c
			}
			vs, err := s.Store.FindValidations(ctx, e.ID)
			if err != nil {
				return nil, err
			}
			rec := release.Record{ID: e.ID, Round: r.Number, ContextID: e.ContextID, Context: c.Data, Input: e.Input,
				ModelName: e.ModelName, ModelOutput: e.ModelOutput, ModelWrong: e.ModelWrong, Flagged: e.Flagged,
				Retracted: e.Status == dynabench.StatusRetracted, Tag: c.Tag, Metadata: e.Metadata,
				Creator: release.Person{UserID: e.UserID}, CreatedAt: e.CreatedAt}
			for _, v := range vs {
				rec.Validations = append(rec.Validations, release.Validation{Validator: release.Person{UserID: v.UserID},
					Label: v.Label, Mode: v.Mode, Metadata: v.Metadata})
			}
			out = append(out, rec)
		}
		if len(page) < dynabench.MaxExamplesPage {
			return out, nil
		}
		f.AfterID = page[len(page)-1].ID
	}
}

func schemaOf(cfg *taskconfig.Config) release.Schema {
	var sc release.Schema
	for _, f := range cfg.Context {
		sc.Context = append(sc.Context, f.Name)
	}
	for _, f := range cfg.Input {
		sc.Input = append(sc.Input, f.Name)
	}
	for _, f := range cfg.Output {
		sc.Output = append(sc.Output, f.Name)
	}
	if target, ok := primaryTarget(cfg); ok && target.Type == taskconfig.TypeMulticlass {
		sc.Label = target.Name
	}
	return sc
}

// ReleaseRound freezes a closed round's verified examples into a new release version: deterministic
// train/dev/test splits, manifest, datasheet, dataset card and canary, written atomically under the
// server's release directory. The test split becomes the scoring dataset "round-<n>-test" (every
// model of the task is queued on it). Owners only. An open round is ECONFLICT; a round without
// verified examples is EINVALID; a failure leaves neither files nor rows behind.
func (s *Service) ReleaseRound(ctx context.Context, actor *dynabench.User, code string, n int, req ReleaseRequest) (*ReleaseResult, error) {
	t, err := s.Task(ctx, code)
	if err != nil {
		return nil, err
	}
	if err := s.requireOwner(ctx, actor, t); err != nil {
		return nil, err
	}
	if s.ReleaseDir == "" {
		return nil, dynabench.Errorf(dynabench.EUNAVAILABLE, "this server has no release directory")
	}
	r, err := s.closedRound(ctx, t, n)
	if err != nil {
		return nil, err
	}
	if req.Ratios != (release.Ratios{}) {
		if err := req.Ratios.Validate(); err != nil {
			var fe *release.FieldError
			if errors.As(err, &fe) {
				return nil, dynabench.FieldErrorf(dynabench.EINVALID, fe.Field, "%s", fe.Msg)
			}
			return nil, dynabench.FieldErrorf(dynabench.EINVALID, "ratios", "%v", err)
		}
	}
	cfg, err := s.Config(t)
	if err != nil {
		return nil, err
	}
	recs, err := s.roundRecords(ctx, t, r, false)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "round", "round %d has no verified examples to release", n)
	}
	keys, err := s.releaseKeys(ctx, t.Code)
	if err != nil {
		return nil, err
	}
	previous, err := s.Store.FindReleases(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	version := 1
	for _, p := range previous {
		if p.RoundNumber == n && p.Version >= version {
			version = p.Version + 1
		}
	}
	var models []release.ModelRef
	for _, id := range r.ModelIDs {
		if m, err := s.Store.FindModelByID(ctx, id); err == nil {
			models = append(models, release.ModelRef{ID: m.ID, Name: m.Name})
		}
	}
	annotators, validators := map[int64]bool{}, map[int64]bool{}
	for _, rec := range recs {
		annotators[rec.Creator.UserID] = true
		for _, v := range rec.Validations {
			validators[v.Validator.UserID] = true
		}
	}
	dir := filepath.Join(s.ReleaseDir, t.Code, fmt.Sprintf("round-%d", n), fmt.Sprintf("v%d", version))
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	rel := release.Release{Task: t.Code, Round: n, Version: strconv.Itoa(version), CreatedAt: s.Now().UTC(),
		Config: []byte(t.ConfigSource), ConfigVersion: int(t.ConfigRev), Models: models, Ratios: req.Ratios,
		SplitKey: keys.split, CanaryKey: keys.canary, Anon: keys.anon, Schema: schemaOf(cfg), License: req.License,
		Collection: release.Collection{Collected: int(r.Stats.Collected), Fooled: int(r.Stats.Fooled), VerifiedFooled: int(r.Stats.VerifiedFooled),
			Annotators: len(annotators), Validators: len(validators), MatchingValidates: t.Settings.NumMatchingValidations},
		Info: release.CardInfo{Name: t.Name, Description: t.Description}}
	m, err := release.WriteRelease(dir, rel, recs)
	if err != nil {
		if errors.Is(err, release.ErrEmpty) {
			return nil, dynabench.FieldErrorf(dynabench.EINVALID, "round", "round %d has nothing to release", n)
		}
		return nil, fmt.Errorf("release %s round %d: %w", t.Code, n, err)
	}
	ok := false
	defer func() {
		if !ok { // nothing half-written: no rows, so no files either
			os.RemoveAll(dir)
		}
	}()
	manifest, err := os.ReadFile(filepath.Join(dir, release.ManifestFile))
	if err != nil {
		return nil, err
	}
	datasheet, _ := os.ReadFile(filepath.Join(dir, release.DatasheetFile))
	// The test split as a scoring dataset, named after its round.
	var ds *dynabench.Dataset
	var dsExamples []*dynabench.DatasetExample
	if testRows := testSplitJSONL(recs, keys.split, m.Ratios); testRows.Len() > 0 {
		ds, dsExamples, err = s.prepareDataset(t, actor, NewDataset{Name: fmt.Sprintf("round-%d-test", n), Access: dynabench.AccessScoring,
			Body: testRows, RoundNumber: n})
		if err != nil {
			return nil, fmt.Errorf("release %s round %d: its test split does not load as a dataset: %w", t.Code, n, err)
		}
	}
	row := &dynabench.Release{TaskID: t.ID, RoundNumber: n, Version: version, Dir: dir, Manifest: manifest, Datasheet: string(datasheet),
		Canary: m.Canary, Public: req.Public, CreatedBy: actor.ID}
	err = s.Store.InTx(ctx, func(tx dynabench.Store) error {
		if ds != nil {
			if err := s.writeDataset(ctx, tx, t, ds, dsExamples); err != nil {
				return err
			}
			row.DatasetID = ds.ID
		}
		return tx.CreateRelease(ctx, row)
	})
	if err != nil {
		return nil, err
	}
	ok = true
	s.wakeWorkers()
	return &ReleaseResult{Release: row, Manifest: m, Dataset: ds}, nil
}

// testSplitJSONL renders the records of the test split as dataset lines: the context fields, the
// annotator's input (the gold target among it), and a uid naming the example.
func testSplitJSONL(recs []release.Record, key []byte, ratios release.Ratios) *bytes.Buffer {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, r := range recs {
		if split, _ := release.Split(r.PublicID(), key, ratios); split != release.Test {
			continue
		}
		row := map[string]any{"uid": "example-" + r.PublicID()}
		for k, v := range r.Context {
			row[k] = v
		}
		for k, v := range r.Input {
			row[k] = v
		}
		if r.Tag != "" {
			row["tags"] = []string{r.Tag}
		}
		enc.Encode(row)
	}
	return &buf
}

// Releases lists the task's releases the actor may see: all for owners, public ones for others.
func (s *Service) Releases(ctx context.Context, actor *dynabench.User, code string) ([]*dynabench.Release, error) {
	t, err := s.VisibleTask(ctx, actor, code)
	if err != nil {
		return nil, err
	}
	all, err := s.Store.FindReleases(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	owner, err := s.CanOwn(ctx, actor, t)
	if err != nil {
		return nil, err
	}
	var out []*dynabench.Release
	for _, r := range all {
		if r.Public || owner {
			out = append(out, r)
		}
	}
	return out, nil
}

// ReleaseFile opens one file of a release (a path its manifest lists), for its owners, or anyone when
// the release is public.
func (s *Service) ReleaseFile(ctx context.Context, actor *dynabench.User, code string, n, version int, path string) (*os.File, error) {
	rels, err := s.Releases(ctx, actor, code)
	if err != nil {
		return nil, err
	}
	for _, r := range rels {
		if r.RoundNumber != n || r.Version != version {
			continue
		}
		m, err := release.ReadManifest(r.Manifest)
		if err != nil {
			return nil, err
		}
		listed := path == release.ManifestFile
		for _, f := range m.Files {
			listed = listed || f.Path == path
		}
		if !listed || strings.Contains(path, "..") {
			return nil, dynabench.FieldErrorf(dynabench.ENOTFOUND, "path", "release %d of round %d has no file %q", version, n, path)
		}
		root, err := os.OpenRoot(r.Dir)
		if err != nil {
			return nil, dynabench.Errorf(dynabench.EUNAVAILABLE, "the release's files are not on this server")
		}
		defer root.Close()
		return root.Open(path)
	}
	return nil, dynabench.FieldErrorf(dynabench.ENOTFOUND, "version", "no release %d of round %d", version, n)
}

// ExportRound writes a closed round's examples (every non-retracted one, with its validations and
// anonymised contributors) in a format: Dynabench's JSONL, CSV or Hugging Face rows. Owners only.
func (s *Service) ExportRound(ctx context.Context, actor *dynabench.User, code string, n int, format string, w io.Writer, progress release.Progress) error {
	t, err := s.Task(ctx, code)
	if err != nil {
		return err
	}
	if err := s.requireOwner(ctx, actor, t); err != nil {
		return err
	}
	r, err := s.closedRound(ctx, t, n)
	if err != nil {
		return err
	}
	cfg, err := s.Config(t)
	if err != nil {
		return err
	}
	keys, err := s.releaseKeys(ctx, t.Code)
	if err != nil {
		return err
	}
	recs, err := s.roundRecords(ctx, t, r, true)
	if err != nil {
		return err
	}
	err = release.Export(w, release.Format(format), recs, release.ExportOptions{Task: t.Code, Schema: schemaOf(cfg), Anon: keys.anon}, progress)
	var fe *release.FieldError
	if errors.As(err, &fe) {
		return dynabench.FieldErrorf(dynabench.EINVALID, fe.Field, "%s", fe.Msg)
	}
	return err
}

// ImportRequest imports a published dataset shape as an evaluation dataset.
type ImportRequest struct {
	Format  string // anli, dynasent or squad
	Name    string
	Access  string
	Mapping release.Mapping
	Body    io.Reader
}

// ImportDataset reads ANLI, DynaSent or SQuAD-style data, maps its fields and labels to the task's,
// and stores it as an evaluation dataset (checked line by line against the config like an upload).
func (s *Service) ImportDataset(ctx context.Context, actor *dynabench.User, code string, req ImportRequest) (*dynabench.Dataset, error) {
	t, err := s.Task(ctx, code)
	if err != nil {
		return nil, err
	}
	if err := s.requireOwner(ctx, actor, t); err != nil {
		return nil, err
	}
	b, err := readImport(req)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, it := range b.Items {
		row := map[string]any{"uid": it.UID}
		for k, v := range it.Fields {
			row[k] = v
		}
		if len(it.Tags) > 0 {
			row["tags"] = it.Tags
		}
		enc.Encode(row)
	}
	return s.UploadDataset(ctx, actor, code, NewDataset{Name: req.Name, Access: req.Access, Body: &buf})
}

// readImport reads a published dataset shape with its mapping, as domain errors naming the place.
func readImport(req ImportRequest) (*release.Batch, error) {
	opts := release.ImportOptions{Mapping: req.Mapping, SkipUnlabelled: true}
	var err error
	var b *release.Batch
	switch req.Format {
	case "anli":
		b, err = release.ReadANLI(req.Body, opts)
	case "dynasent":
		b, err = release.ReadDynaSent(req.Body, opts)
	case "squad":
		b, err = release.ReadSQuAD(req.Body, opts)
	default:
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "format", "one of anli, dynasent, squad")
	}
	var ie *release.ImportError
	switch {
	case errors.As(err, &ie) && errors.Is(err, release.ErrTooLarge):
		return nil, dynabench.FieldErrorf(dynabench.ETOOLARGE, ie.Error(), "%s", ie.Msg)
	case errors.As(err, &ie):
		return nil, &dynabench.Error{Code: dynabench.EINVALID, Field: ie.Error(), Message: ie.Msg}
	case err != nil:
		var fe *release.FieldError
		if errors.As(err, &fe) {
			return nil, dynabench.FieldErrorf(dynabench.EINVALID, fe.Field, "%s", fe.Msg)
		}
		return nil, err
	}
	return b, nil
}

// ImportRound imports a published adversarial dataset as verified examples of the task's current
// round (owners): ANLI's rounds into this task's rounds, say, one round at a time (import, open the
// next round, import the next). Each distinct context becomes a context of the round; each example
// is written by the importing owner, verified, and fooling when the source says its model was wrong
// (ANLI's model_label); the counters move as for any example. Every item is checked against the
// config first: the first bad one is named and nothing is stored.
func (s *Service) ImportRound(ctx context.Context, actor *dynabench.User, code string, req ImportRequest) (int, error) {
	t, err := s.Task(ctx, code)
	if err != nil {
		return 0, err
	}
	if err := s.requireOwner(ctx, actor, t); err != nil {
		return 0, err
	}
	r, err := s.Round(ctx, t, t.CurrentRound)
	if err != nil {
		return 0, err
	}
	cfg, err := s.Config(t)
	if err != nil {
		return 0, err
	}
	target, ok := primaryTarget(cfg)
	if !ok {
		return 0, dynabench.Errorf(dynabench.EINVALID, "the task config has no target field")
	}
	b, err := readImport(req)
	if err != nil {
		return 0, err
	}
	if len(b.Items) == 0 {
		return 0, dynabench.FieldErrorf(dynabench.EINVALID, "body", "no examples to import")
	}
	contexts := map[string]*dynabench.Context{}
	var ordered []*dynabench.Context
	examples := make([]*dynabench.Example, 0, len(b.Items))
	ctxOf := make([]string, 0, len(b.Items))
	for i, it := range b.Items {
		cdata, input := map[string]any{}, map[string]any{}
		for k, v := range it.Fields {
			switch {
			case hasField(cfg.Context, k):
				cdata[k] = v
			case hasField(cfg.Input, k):
				input[k] = v
			default:
				return 0, dynabench.FieldErrorf(dynabench.EINVALID, fmt.Sprintf("item %d (uid %s)", i+1, it.UID), "%s: not a field of the task config", k)
			}
		}
		for _, f := range cfg.Context {
			if _, ok := cdata[f.Name]; !ok && f.Type == taskconfig.TypeString {
				cdata[f.Name] = ""
			}
		}
		if hasNUL(cdata) || hasNUL(input) {
			return 0, dynabench.FieldErrorf(dynabench.EINVALID, fmt.Sprintf("item %d (uid %s)", i+1, it.UID), "text may not contain NUL")
		}
		if p := append(cfg.CheckContext(cdata, s.Limits), cfg.CheckInput(cdata, input, s.Limits)...); len(p) > 0 {
			return 0, dynabench.FieldErrorf(dynabench.EINVALID, fmt.Sprintf("item %d (uid %s)", i+1, it.UID), "%s: %s", p[0].Path, p[0].Message)
		}
		key, _ := json.Marshal(cdata)
		if contexts[string(key)] == nil {
			c := &dynabench.Context{TaskID: t.ID, RoundID: r.ID, Data: cdata, Tag: req.Name, Metadata: map[string]any{"imported_from": req.Format}}
			contexts[string(key)] = c
			ordered = append(ordered, c)
		}
		ctxOf = append(ctxOf, string(key))
		meta := map[string]any{"imported_from": req.Format, "source_uid": it.UID}
		for k, v := range it.Metadata {
			meta["source_"+k] = v
		}
		e := &dynabench.Example{TaskID: t.ID, RoundID: r.ID, RoundNumber: r.Number, UserID: actor.ID, Input: input,
			Status: dynabench.StatusVerified, Metadata: meta, Tag: req.Name}
		if ml, ok := it.Metadata["model_label"].(string); ok && ml != "" {
			if mapped, ok := anliLabels[ml]; ok && req.Format == "anli" {
				ml = mapped
			}
			if mapped, ok := req.Mapping.Labels[ml]; ok {
				ml = mapped
			}
			gold, _ := input[target.Name].(string)
			wrong := ml != gold
			e.ModelWrong = &wrong
		}
		examples = append(examples, e)
	}
	err = s.Store.InTx(ctx, func(tx dynabench.Store) error {
		if err := tx.CreateContexts(ctx, ordered); err != nil {
			return err
		}
		for i, e := range examples {
			e.ContextID = contexts[ctxOf[i]].ID
			if err := tx.CreateExample(ctx, e); err != nil {
				return err
			}
			if err := tx.ApplyStats(ctx, e, dynabench.Contribution(e)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return len(examples), nil
}

// anliLabels are ANLI's label letters in the demo NLI task's names (the reader's defaults).
var anliLabels = map[string]string{"e": "entailed", "n": "neutral", "c": "contradictory"}

// releasedTrainFilter keeps, of a task's released rounds, only the examples in a train split, so a
// model trained for the next round never sees a round's dev or test examples.
func (s *Service) releasedTrainFilter(ctx context.Context, t *dynabench.Task) (func(round int, exampleID int64) bool, []int, error) {
	rels, err := s.Store.FindReleases(ctx, t.ID)
	if err != nil {
		return nil, nil, err
	}
	keys, err := s.releaseKeys(ctx, t.Code)
	if err != nil {
		return nil, nil, err
	}
	ratios := map[int]release.Ratios{}
	for _, r := range rels { // the latest version of each round wins
		m, err := release.ReadManifest(r.Manifest)
		if err != nil {
			return nil, nil, err
		}
		ratios[r.RoundNumber] = m.Ratios
	}
	var rounds []int
	for n := range ratios {
		rounds = append(rounds, n)
	}
	return func(round int, id int64) bool {
		rt, ok := ratios[round]
		if !ok {
			return false
		}
		split, _ := release.Split(strconv.FormatInt(id, 10), keys.split, rt)
		return split == release.Train
	}, rounds, nil
}

// SetReleasePublic lets anyone download a release's files, or stops it (owners).
func (s *Service) SetReleasePublic(ctx context.Context, actor *dynabench.User, code string, n, version int, public bool) (*dynabench.Release, error) {
	t, err := s.Task(ctx, code)
	if err != nil {
		return nil, err
	}
	if err := s.requireOwner(ctx, actor, t); err != nil {
		return nil, err
	}
	rels, err := s.Store.FindReleases(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	for _, r := range rels {
		if r.RoundNumber == n && r.Version == version {
			if err := s.Store.SetReleasePublic(ctx, r.ID, public); err != nil {
				return nil, err
			}
			r.Public = public
			return r, nil
		}
	}
	return nil, dynabench.FieldErrorf(dynabench.ENOTFOUND, "version", "no release %d of round %d", version, n)
}

// CycleRound is one round of the retraining cycle: its stats, the models in its loop, and how the
// first of them scores on every released round's test split.
type CycleRound struct {
	Round  int          `json:"round"`
	Status string       `json:"status"`
	VMER   float64      `json:"vmer"`
	MER    float64      `json:"mer"`
	Models []BoardModel `json:"models"`
	// Scores[j] is the loop model's perf metric (percent) on round j's test split; absent while not
	// scored (or when that round has no released test split).
	Scores map[int]float64 `json:"scores"`
}

// Cycle is the "each round harder" view of a task: per round, its target model's perf metric on each
// round's test split, and the round's vMER.
type Cycle struct {
	Metric string       `json:"metric"`
	Tested []int        `json:"tested" doc:"Rounds with a released test split"`
	Rounds []CycleRound `json:"rounds"`
}

// RoundCycle computes the cycle view from the rounds, their models and completed evaluations.
func (s *Service) RoundCycle(ctx context.Context, actor *dynabench.User, code string) (*Cycle, error) {
	t, err := s.VisibleTask(ctx, actor, code)
	if err != nil {
		return nil, err
	}
	cfg, err := s.Config(t)
	if err != nil {
		return nil, err
	}
	metas, err := metricMetas(cfg)
	if err != nil {
		return nil, err
	}
	rounds, err := s.Store.FindRounds(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	datasets, err := s.Store.FindDatasets(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	testOf := map[int]*dynabench.Dataset{}
	c := &Cycle{Metric: metas[0].Name, Rounds: []CycleRound{}, Tested: []int{}}
	for _, d := range datasets {
		if d.RoundNumber > 0 && d.Name == fmt.Sprintf("round-%d-test", d.RoundNumber) {
			testOf[d.RoundNumber] = d
		}
	}
	for _, r := range rounds {
		if testOf[r.Number] != nil {
			c.Tested = append(c.Tested, r.Number)
		}
	}
	for _, r := range rounds {
		cr := CycleRound{Round: r.Number, Status: r.Status, VMER: r.Stats.VMER, MER: r.Stats.MER, Scores: map[int]float64{}, Models: []BoardModel{}}
		for i, id := range r.ModelIDs {
			m, err := s.Store.FindModelByID(ctx, id)
			if err != nil {
				continue
			}
			cr.Models = append(cr.Models, BoardModel{m.ID, m.Name})
			if i > 0 {
				continue
			}
			evs, err := s.Store.FindEvaluations(ctx, dynabench.EvaluationFilter{ModelID: m.ID})
			if err != nil {
				return nil, err
			}
			for _, e := range evs {
				for j, d := range testOf {
					if e.DatasetID == d.ID && e.Variant == dynabench.VariantOriginal && e.Status == dynabench.EvalCompleted &&
						e.DatasetVersion == d.Version && e.Result != nil {
						if v, ok := e.Result.Metrics[c.Metric]; ok {
							cr.Scores[j] = v
						}
					}
				}
			}
		}
		c.Rounds = append(c.Rounds, cr)
	}
	return c, nil
}

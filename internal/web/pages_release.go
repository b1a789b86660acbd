package web

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/release"
	"github.com/dynabench-go/dynabench/internal/service"
)

// relForm is the release form of one closed round: as posted, or the defaults.
type relForm struct {
	Round            int
	Train, Dev, Test string
	License          string
	Public           bool
}

func defaultRelForm(n int) relForm {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	d := release.DefaultRatios
	return relForm{Round: n, Train: f(d.Train), Dev: f(d.Dev), Test: f(d.Test)}
}

// Fields are the three ratio inputs, in order.
func (f relForm) Fields() []struct{ Key, Value string } {
	return []struct{ Key, Value string }{{"train", f.Train}, {"dev", f.Dev}, {"test", f.Test}}
}

// ratios reads the three ratios; all empty means the service's default.
func (f relForm) ratios() (release.Ratios, error) {
	if strings.TrimSpace(f.Train+f.Dev+f.Test) == "" {
		return release.Ratios{}, nil
	}
	var r release.Ratios
	for _, x := range []struct {
		field, v string
		to       *float64
	}{{"ratios.train", f.Train, &r.Train}, {"ratios.dev", f.Dev, &r.Dev}, {"ratios.test", f.Test, &r.Test}} {
		v, err := strconv.ParseFloat(strings.TrimSpace(x.v), 64)
		if err != nil {
			return r, dynabench.FieldErrorf(dynabench.EINVALID, x.field, "a number between 0 and 1, like 0.8")
		}
		*x.to = v
	}
	// The service checks this too; said here with the sum rounded, as people type it.
	if sum := r.Train + r.Dev + r.Test; math.Abs(sum-1) > 1e-9 {
		return r, dynabench.FieldErrorf(dynabench.EINVALID, "ratios", "train + dev + test must be 1; these add up to %s",
			strconv.FormatFloat(math.Round(sum*1e6)/1e6, 'f', -1, 64))
	}
	return r, nil
}

// closedRound is a closed round on the rounds page: its release versions, export links and form.
type closedRound struct {
	Number   int
	Versions []int
}

// RelForm is the release form of round n: what was posted to it, or the defaults.
func (p *roundsPage) RelForm(n int) relForm {
	if p.Rel.Round == n {
		return p.Rel
	}
	return defaultRelForm(n)
}

// RelErr is a problem of round n's release form (only the round whose form was posted has any).
func (p *roundsPage) RelErr(n int, field string) string {
	if p.Rel.Round != n {
		return ""
	}
	return p.Err(field)
}

// RetrainErr is a problem of the retrain form.
func (p *roundsPage) RetrainErr(field string) string {
	if !p.RetrainPosted {
		return ""
	}
	return p.Err(field)
}

// releaseInfo adds the closed rounds, their releases and the retrain form's defaults to the page.
func (s *Server) releaseInfo(r *http.Request, p *roundsPage, rounds []*dynabench.Round) error {
	rels, err := s.svc.Releases(r.Context(), actor(r), p.Task.Code)
	if err != nil {
		return err
	}
	versions := map[int][]int{}
	for _, rel := range rels {
		versions[rel.RoundNumber] = append(versions[rel.RoundNumber], rel.Version)
		if !slices.Contains(p.Released, rel.RoundNumber) {
			p.Released = append(p.Released, rel.RoundNumber)
		}
	}
	slices.Sort(p.Released)
	for i := len(rounds) - 1; i >= 0; i-- {
		if rd := rounds[i]; rd.Status != dynabench.RoundOpen {
			p.Closed = append(p.Closed, closedRound{Number: rd.Number, Versions: versions[rd.Number]})
		}
	}
	if p.RetrainName == "" {
		p.RetrainName = s.retrainName(p.Task, p.Models)
		p.SeedData = true
	}
	if id, err := strconv.ParseInt(r.URL.Query().Get("trained"), 10, 64); err == nil {
		for _, m := range p.Models {
			if m.ID == id {
				p.Trained = m
				p.TrainedOn, p.TrainedSeed = r.URL.Query().Get("on"), r.URL.Query().Get("seed") == "true"
			}
		}
	}
	return nil
}

// retrainName is a model name for the current round that no model of the task has yet.
func (s *Server) retrainName(t *dynabench.Task, models []*dynabench.Model) string {
	base := fmt.Sprintf("%s-builtin-r%d", t.Code, t.CurrentRound)
	taken := func(name string) bool {
		return slices.ContainsFunc(models, func(m *dynabench.Model) bool { return m.Name == name })
	}
	name := base
	for i := 2; taken(name); i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	return name
}

// releaseRound freezes a closed round into a new release version (owners).
func (s *Server) releaseRound(w http.ResponseWriter, r *http.Request) error {
	o, err := s.ownerPage(r, "rounds")
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil {
		return dynabench.Errorf(dynabench.ENOTFOUND, "no such round")
	}
	f := relForm{Round: n, Train: r.PostFormValue("train"), Dev: r.PostFormValue("dev"), Test: r.PostFormValue("test"),
		License: strings.TrimSpace(r.PostFormValue("license")), Public: r.PostFormValue("public") != ""}
	ratios, err := f.ratios()
	if err == nil {
		var res *service.ReleaseResult
		res, err = s.svc.ReleaseRound(r.Context(), actor(r), o.Task.Code, n, service.ReleaseRequest{Ratios: ratios, License: f.License, Public: f.Public})
		if err == nil {
			msg := fmt.Sprintf("Round %d released as version %d: %d examples.", n, res.Release.Version, res.Manifest.Examples)
			if res.Dataset != nil {
				msg += fmt.Sprintf(" Its test split is the scoring dataset %s; every model of the task is being evaluated on it.", res.Dataset.Name)
			}
			http.Redirect(w, r, releasesURL(o.Task.Code, msg, n, res.Release.Version), http.StatusSeeOther)
			return nil
		}
	}
	if !o.Fail(err) {
		return err
	}
	switch {
	case dynabench.IsCode(err, dynabench.ECONFLICT):
		o.Error = fmt.Sprintf("Round %d is still open: open the next round first (the last form on this page), which closes it.", n)
	case relFields(o.Errors):
		o.Error = fmt.Sprintf("Round %d was not released: fix the problem marked in its form below.", n)
	default:
		o.Error = fmt.Sprintf("Round %d was not released. %s", n, o.Error)
	}
	p, perr := s.newRoundsPage(r, o)
	if perr != nil {
		return perr
	}
	p.Rel = f
	return s.render(w, r, statusFor(err), "rounds", p)
}

// relFields reports whether a problem belongs to a field the release form shows next to it.
func relFields(errs map[string]string) bool {
	for f := range errs {
		if strings.HasPrefix(f, "ratios") || f == "license" {
			return true
		}
	}
	return false
}

func releasesURL(code, saved string, n, version int) string {
	u := "/tasks/" + url.PathEscape(code) + "/releases"
	if saved != "" {
		u += "?" + url.Values{"saved": {saved}}.Encode()
	}
	if n > 0 {
		u += fmt.Sprintf("#release-%d-v%d", n, version)
	}
	return u
}

// exportFormats are the export formats: file name suffix and content type.
var exportFormats = map[string]struct{ suffix, ctype string }{
	"jsonl": {".jsonl", "application/x-ndjson"},
	"csv":   {".csv", "text/csv; charset=utf-8"},
	"hf":    {"-hf.jsonl", "application/x-ndjson"},
}

// exportRound streams a closed round's examples as a download (owners).
func (s *Server) exportRound(w http.ResponseWriter, r *http.Request) error {
	t, err := s.svc.OwnedTask(r.Context(), actor(r), r.PathValue("code"))
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil {
		return dynabench.Errorf(dynabench.ENOTFOUND, "no such round")
	}
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "jsonl"
	}
	ef, ok := exportFormats[format]
	if !ok {
		return dynabench.FieldErrorf(dynabench.EINVALID, "format", "the export format is jsonl, csv or hf, not %q", format)
	}
	dw := &download{w: w, start: func(h http.Header) {
		h.Set("Content-Type", ef.ctype)
		h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-round-%d%s"`, t.Code, n, ef.suffix))
		h.Set("Cache-Control", "no-store")
	}}
	if err := s.svc.ExportRound(r.Context(), actor(r), t.Code, n, format, dw, nil); err != nil {
		if dw.started {
			// Part of the file is sent: cut the connection so the download shows as failed.
			s.log.Error("export failed while streaming", "task", t.Code, "round", n, "err", err)
			panic(http.ErrAbortHandler)
		}
		return err
	}
	dw.begin()
	return nil
}

// download sets a download's headers just before its first byte, so that an error found before
// anything is written still gets its error page and status.
type download struct {
	w       http.ResponseWriter
	start   func(http.Header)
	started bool
}

func (d *download) begin() {
	if !d.started {
		d.started = true
		d.start(d.w.Header())
		d.w.WriteHeader(http.StatusOK)
	}
}

func (d *download) Write(b []byte) (int, error) {
	d.begin()
	return d.w.Write(b)
}

var _ io.Writer = (*download)(nil)

// retrain trains a built-in model on the seed set and every released round's train split, publishes
// it, and puts it in the loop of the current round, keeping the round's loop mode (owners).
func (s *Server) retrain(w http.ResponseWriter, r *http.Request) error {
	o, err := s.ownerPage(r, "rounds")
	if err != nil {
		return err
	}
	ctx, u := r.Context(), actor(r)
	name, seed := strings.TrimSpace(r.PostFormValue("name")), r.PostFormValue("seed_data") != ""
	fail := func(err error) error {
		if !o.Fail(err) {
			return err
		}
		o.Error = "No model was trained. " + o.Error
		p, perr := s.newRoundsPage(r, o)
		if perr != nil {
			return perr
		}
		p.RetrainName, p.SeedData, p.RetrainPosted = name, seed, true
		return s.render(w, r, statusFor(err), "rounds", p)
	}
	rels, err := s.svc.Releases(ctx, u, o.Task.Code)
	if err != nil {
		return err
	}
	var rounds []int
	for _, rel := range rels {
		if !slices.Contains(rounds, rel.RoundNumber) {
			rounds = append(rounds, rel.RoundNumber)
		}
	}
	if len(rounds) == 0 {
		return fail(dynabench.Errorf(dynabench.EINVALID, "release a closed round first: the model trains on released rounds' train splits"))
	}
	m, _, err := s.svc.TrainModel(ctx, u, o.Task.Code, service.TrainRequest{Name: name, Rounds: rounds, SeedData: seed, ReleasedOnly: true, Publish: true})
	if err != nil {
		return fail(err)
	}
	t, all, err := s.svc.TaskRounds(ctx, u, o.Task.Code)
	if err != nil {
		return err
	}
	mode := ""
	for _, rd := range all {
		if rd.Number == t.CurrentRound {
			mode = rd.LoopMode
		}
	}
	if _, err := s.svc.SetRoundModels(ctx, u, t.Code, t.CurrentRound, []int64{m.ID}, mode); err != nil {
		return fail(err)
	}
	http.Redirect(w, r, fmt.Sprintf("/tasks/%s/rounds?trained=%d&on=%s&seed=%t#retrain", url.PathEscape(t.Code), m.ID,
		url.QueryEscape(joinInts(rounds)), seed), http.StatusSeeOther)
	return nil
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ", ")
}

// releasesPage lists a task's releases: all for owners, public ones for others.
type releasesPage struct {
	Base
	Form
	Task     *dynabench.Task
	Owner    bool
	Releases []releaseView
}

// releaseView is one release as the page shows it.
type releaseView struct {
	*dynabench.Release
	Manifest *release.Manifest
	Anchor   string
	Labels   []string // the label columns of the splits table
	Splits   []splitView
	Files    []fileView
	Dataset  string // the test split's scoring dataset
}

type splitView struct {
	Name             string
	Examples, Fooled int
	Labels           []int
}

type fileView struct {
	Path, Size, SHA256, URL string
}

func (s *Server) releasesPage(w http.ResponseWriter, r *http.Request) error {
	ctx, u := r.Context(), actor(r)
	t, err := s.svc.VisibleTask(ctx, u, r.PathValue("code"))
	if err != nil {
		return err
	}
	rels, err := s.svc.Releases(ctx, u, t.Code)
	if err != nil {
		return err
	}
	p := &releasesPage{Task: t}
	p.Title = t.Name + " · releases"
	p.Success = r.URL.Query().Get("saved")
	if p.Owner, err = s.svc.CanOwn(ctx, u, t); err != nil {
		return err
	}
	for i := len(rels) - 1; i >= 0; i-- {
		v, err := newReleaseView(t.Code, rels[i])
		if err != nil {
			return err
		}
		p.Releases = append(p.Releases, v)
	}
	return s.render(w, r, http.StatusOK, "releases", p)
}

func newReleaseView(code string, rel *dynabench.Release) (releaseView, error) {
	m, err := release.ReadManifest(rel.Manifest)
	if err != nil {
		return releaseView{}, fmt.Errorf("release %d of round %d: %w", rel.Version, rel.RoundNumber, err)
	}
	v := releaseView{Release: rel, Manifest: m, Anchor: fmt.Sprintf("release-%d-v%d", rel.RoundNumber, rel.Version)}
	if rel.DatasetID != 0 {
		v.Dataset = fmt.Sprintf("round-%d-test", rel.RoundNumber)
	}
	for _, sp := range m.Splits {
		for l := range sp.Labels {
			if !slices.Contains(v.Labels, l) {
				v.Labels = append(v.Labels, l)
			}
		}
	}
	slices.Sort(v.Labels)
	for _, sp := range m.Splits {
		sv := splitView{Name: sp.Name, Examples: sp.Examples, Fooled: sp.Fooled}
		for _, l := range v.Labels {
			sv.Labels = append(sv.Labels, sp.Labels[l])
		}
		v.Splits = append(v.Splits, sv)
	}
	base := fmt.Sprintf("/tasks/%s/rounds/%d/releases/%d/files?path=", url.PathEscape(code), rel.RoundNumber, rel.Version)
	files := append([]release.FileEntry{{Path: release.ManifestFile}}, m.Files...)
	for _, f := range files {
		fv := fileView{Path: f.Path, URL: base + url.QueryEscape(f.Path)}
		if f.SHA256 != "" {
			fv.Size, fv.SHA256 = byteSize(f.Size), f.SHA256[:min(12, len(f.SHA256))]
		}
		v.Files = append(v.Files, fv)
	}
	return v, nil
}

// RatioText is the release's split ratios as percentages.
func (v releaseView) RatioText() string {
	r := v.Manifest.Ratios
	return fmt.Sprintf("%g / %g / %g %%", 100*r.Train, 100*r.Dev, 100*r.Test)
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// setReleasePublic lets anyone download a release, or stops it (owners).
func (s *Server) setReleasePublic(w http.ResponseWriter, r *http.Request) error {
	n, nerr := strconv.Atoi(r.PathValue("n"))
	v, verr := strconv.Atoi(r.PathValue("v"))
	if nerr != nil || verr != nil {
		return dynabench.Errorf(dynabench.ENOTFOUND, "no such release")
	}
	public := r.PostFormValue("public") == "true"
	rel, err := s.svc.SetReleasePublic(r.Context(), actor(r), r.PathValue("code"), n, v, public)
	if err != nil {
		return err
	}
	state := "private: only the task's owners can download it"
	if rel.Public {
		state = "public: anyone can download it"
	}
	http.Redirect(w, r, releasesURL(r.PathValue("code"), fmt.Sprintf("Round %d version %d is now %s.", n, v, state), n, v), http.StatusSeeOther)
	return nil
}

// releaseFile sends one file of a release: text files (markdown, JSON Lines) as text/plain so that
// they are shown safely in the browser, others as downloads.
func (s *Server) releaseFile(w http.ResponseWriter, r *http.Request) error {
	n, nerr := strconv.Atoi(r.PathValue("n"))
	v, verr := strconv.Atoi(r.PathValue("v"))
	if nerr != nil || verr != nil {
		return dynabench.Errorf(dynabench.ENOTFOUND, "no such release")
	}
	name := r.URL.Query().Get("path")
	f, err := s.svc.ReleaseFile(r.Context(), actor(r), r.PathValue("code"), n, v, name)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	h := w.Header()
	ctype, disp := "application/octet-stream", "attachment"
	switch path.Ext(name) {
	case ".md", ".jsonl", ".txt":
		ctype, disp = "text/plain; charset=utf-8", "inline"
	case ".json":
		ctype, disp = "application/json", "inline"
	case ".csv":
		ctype = "text/csv; charset=utf-8"
	}
	h.Set("Content-Type", ctype)
	h.Set("Content-Disposition", fmt.Sprintf(`%s; filename="%s"`, disp, strings.ReplaceAll(path.Base(name), `"`, "")))
	h.Set("Cache-Control", "private, no-cache")
	http.ServeContent(w, r, "", st.ModTime(), f)
	return nil
}

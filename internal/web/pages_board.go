package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/evaluation"
	"github.com/dynabench-go/dynabench/internal/service"
)

// boardPage is a leaderboard: live (with weight sliders), a saved fork, or a frozen snapshot.
type boardPage struct {
	Base
	Form
	Task     *dynabench.Task
	Board    *service.Leaderboard
	Cols     []boardCol
	Rows     []boardRow
	Chart    *BoardChart
	Metric   []slider // metric weight sliders
	Dataset  []slider // dataset weight sliders
	Weights  boardWeights
	Fork     *dynabench.LeaderboardFork
	Snapshot *dynabench.LeaderboardSnapshot
	Owner    bool
	ForkName string
	SnapName string
	Posted   string // "fork" or "snapshot": the form whose problem is shown
}

// boardWeights are the weights of the page as the API spells them ("name:w,name:w").
type boardWeights struct {
	Metric, Dataset string
	Round           int
}

// Query is the leaderboard's query string for these weights ("" for the defaults).
func (w boardWeights) Query() string {
	v := url.Values{}
	if w.Metric != "" {
		v.Set("metric_weights", w.Metric)
	}
	if w.Dataset != "" {
		v.Set("dataset_weights", w.Dataset)
	}
	if w.Round > 0 {
		v.Set("round", strconv.Itoa(w.Round))
	}
	return v.Encode()
}

func (w boardWeights) query() (service.LeaderboardQuery, error) {
	mw, err := service.ParseWeights("metric_weights", w.Metric)
	if err != nil {
		return service.LeaderboardQuery{}, err
	}
	dw, err := service.ParseWeights("dataset_weights", w.Dataset)
	if err != nil {
		return service.LeaderboardQuery{}, err
	}
	return service.LeaderboardQuery{MetricWeights: mw, DatasetWeights: dw, Round: w.Round}, nil
}

// boardCol is one metric column of the table.
type boardCol struct {
	Name, Label, Unit string
	Weight            float64
}

// boardRow is one ranked model.
type boardRow struct {
	service.LeaderboardRow
	Tied   bool
	Values []boardValue
}

// boardValue is one metric of one model, formatted with its unit and interval.
type boardValue struct {
	Value, Interval string
}

// slider is one weight control.
type slider struct {
	ID, Name, Label string
	Value           int
	Exact           string // the weight as given, when the slider cannot show it exactly
}

// Slider inputs are named with these prefixes and the metric or dataset name; the handler turns
// them into the API's metric_weights / dataset_weights.
const (
	sliderMetric  = "mw."
	sliderDataset = "dw."
)

// leaderboard shows the task's ranked models for the weights in the query string.
func (s *Server) leaderboard(w http.ResponseWriter, r *http.Request) error {
	ctx, u := r.Context(), actor(r)
	t, err := s.svc.VisibleTask(ctx, u, r.PathValue("code"))
	if err != nil {
		return err
	}
	q := r.URL.Query()
	wt := boardWeights{Metric: q.Get("metric_weights"), Dataset: q.Get("dataset_weights"), Round: max(0, formInt(r, "round", 0))}
	if fromSliders(q, &wt) {
		canon := "/tasks/" + url.PathEscape(t.Code) + "/leaderboard"
		if qs := wt.Query(); qs != "" {
			canon += "?" + qs
		}
		if !isHTMX(r) {
			http.Redirect(w, r, canon, http.StatusSeeOther)
			return nil
		}
		w.Header().Set("HX-Replace-Url", canon)
	}
	p := &boardPage{Task: t, Weights: wt}
	p.Title = t.Name + " · leaderboard"
	return s.showBoard(w, r, http.StatusOK, p)
}

// FormErr is the name field's problem when that form (fork or snapshot) was the one posted.
func (p *boardPage) FormErr(form string) string {
	if p.Posted != form {
		return ""
	}
	return p.Err("name")
}

// fromSliders reads the sliders of the weights form into the API's weight strings, in the form's
// order; it reports whether there were any.
func fromSliders(q url.Values, wt *boardWeights) bool {
	var mw, dw []string
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sortStrings(keys)
	for _, k := range keys {
		v := q.Get(k)
		switch {
		case strings.HasPrefix(k, sliderMetric):
			mw = append(mw, strings.TrimPrefix(k, sliderMetric)+":"+v)
		case strings.HasPrefix(k, sliderDataset):
			dw = append(dw, strings.TrimPrefix(k, sliderDataset)+":"+v)
		}
	}
	if len(mw) == 0 && len(dw) == 0 {
		return false
	}
	wt.Metric, wt.Dataset = strings.Join(mw, ","), strings.Join(dw, ",")
	return true
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// showBoard computes the leaderboard for p.Weights and renders it (the #board part alone for htmx)
// with the status given, or the weights' problem's. A weight problem is shown next to the form,
// with the sliders of the default leaderboard and no table.
func (s *Server) showBoard(w http.ResponseWriter, r *http.Request, status int, p *boardPage) error {
	ctx, u := r.Context(), actor(r)
	q, err := p.Weights.query()
	var b *service.Leaderboard
	if err == nil {
		b, err = s.svc.ComputeLeaderboard(ctx, u, p.Task.Code, q)
	}
	if err != nil {
		if !p.Fail(err) {
			return err
		}
		status = statusFor(err)
		p.Error = "These weights cannot be used. " + errText(err)
		def, derr := s.svc.ComputeLeaderboard(ctx, u, p.Task.Code, service.LeaderboardQuery{Round: p.Weights.Round})
		if derr != nil {
			return derr
		}
		p.sliders(def, q)
	} else {
		p.Board = b
		p.sliders(b, q)
		p.table(b)
	}
	if p.Owner, err = s.svc.CanOwn(ctx, u, p.Task); err != nil {
		return err
	}
	if isHTMX(r) {
		return s.fragment(w, r, status, "leaderboard", "board", p)
	}
	return s.render(w, r, status, "leaderboard", p)
}

// errText is a user-facing error as one line, its field first.
func errText(err error) string {
	var de *dynabench.Error
	if errors.As(err, &de) {
		if de.Field != "" {
			return de.Field + ": " + de.Message
		}
		return de.Message
	}
	return err.Error()
}

// sliders sets the weight controls from the leaderboard's metrics and datasets; the reader's own
// weights (when they gave some) override the ones the leaderboard used.
func (p *boardPage) sliders(b *service.Leaderboard, q service.LeaderboardQuery) {
	add := func(prefix, name, label string, wt float64) slider {
		if v, ok := q.MetricWeights[name]; ok && prefix == sliderMetric {
			wt = v
		}
		if v, ok := q.DatasetWeights[name]; ok && prefix == sliderDataset {
			wt = v
		}
		sl := slider{ID: "w-" + strings.TrimSuffix(prefix, ".") + "-" + name, Name: prefix + name, Label: label, Value: int(min(max(wt, 0), 5) + 0.5)}
		if float64(sl.Value) != wt {
			sl.Exact = strconv.FormatFloat(wt, 'g', 4, 64)
		}
		return sl
	}
	for _, m := range b.Metrics {
		p.Metric = append(p.Metric, add(sliderMetric, m.Name, m.PrettyName, m.Weight))
	}
	for _, d := range b.Datasets {
		p.Dataset = append(p.Dataset, add(sliderDataset, d.Name, d.Name, d.Weight))
	}
}

// table lays out the rows, the columns and the chart.
func (p *boardPage) table(b *service.Leaderboard) {
	for _, m := range b.Metrics {
		p.Cols = append(p.Cols, boardCol{Name: m.Name, Label: m.PrettyName, Unit: m.Unit, Weight: m.Weight})
	}
	count := map[int]int{}
	for _, r := range b.Rows {
		count[r.Rank]++
	}
	for _, r := range b.Rows {
		row := boardRow{LeaderboardRow: r, Tied: count[r.Rank] > 1}
		for _, m := range b.Metrics {
			v, ok := r.Metrics[m.Name]
			if !ok {
				row.Values = append(row.Values, boardValue{Value: "–"})
				continue
			}
			row.Values = append(row.Values, metricValue(v, m.Unit))
		}
		p.Rows = append(p.Rows, row)
	}
	p.Chart = boardChart(b.Rows)
}

// metricValue formats a metric and its interval with the metric's unit. A measurement taken once
// per dataset (throughput, memory) has no sampling interval: it is shown alone.
func metricValue(v evaluation.MetricValue, unit string) boardValue {
	prec := 1
	switch {
	case unit == "GiB":
		prec = 2
	case unit != "%" && v.Value >= 1000:
		prec = 0
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', prec, 64) }
	sep := " "
	if unit == "%" {
		sep = ""
	}
	out := boardValue{Value: f(v.Value) + sep + unit}
	if f(v.CI[0]) != f(v.CI[1]) || f(v.CI[0]) != f(v.Value) {
		out.Interval = f(v.CI[0]) + "–" + f(v.CI[1]) + sep + unit
	}
	return out
}

// createFork saves the posted weights as a fork and goes to its page.
func (s *Server) createFork(w http.ResponseWriter, r *http.Request) error {
	ctx, u := r.Context(), actor(r)
	t, err := s.svc.VisibleTask(ctx, u, r.PathValue("code"))
	if err != nil {
		return err
	}
	p := &boardPage{Task: t, Weights: postedWeights(r), ForkName: r.PostFormValue("name"), Posted: "fork"}
	p.Title = t.Name + " · leaderboard"
	q, err := p.Weights.query()
	if err == nil {
		var f *dynabench.LeaderboardFork
		if f, err = s.svc.CreateFork(ctx, u, t.Code, p.ForkName, q); err == nil {
			http.Redirect(w, r, "/tasks/"+url.PathEscape(t.Code)+"/leaderboard/forks/"+url.PathEscape(f.Slug), http.StatusSeeOther)
			return nil
		}
	}
	return s.boardFormError(w, r, p, err)
}

// boardFormError shows a fork or snapshot form's problem on the leaderboard it was posted from;
// who may not post it gets the error page (or the login page).
func (s *Server) boardFormError(w http.ResponseWriter, r *http.Request, p *boardPage, err error) error {
	switch dynabench.ErrorCode(err) {
	case dynabench.EUNAUTHORIZED, dynabench.ENOTFOUND, dynabench.EFORBIDDEN:
		return err
	}
	if !p.Fail(err) {
		return err
	}
	return s.showBoard(w, r, statusFor(err), p)
}

func postedWeights(r *http.Request) boardWeights {
	return boardWeights{Metric: r.PostFormValue("metric_weights"), Dataset: r.PostFormValue("dataset_weights"),
		Round: max(0, formInt(r, "round", 0))}
}

// fork shows a saved fork: the leaderboard with its weights.
func (s *Server) fork(w http.ResponseWriter, r *http.Request) error {
	ctx, u := r.Context(), actor(r)
	t, err := s.svc.VisibleTask(ctx, u, r.PathValue("code"))
	if err != nil {
		return err
	}
	f, err := s.svc.Fork(ctx, u, t.Code, r.PathValue("slug"))
	if err != nil {
		return err
	}
	p := &boardPage{Task: t, Fork: f, Weights: boardWeights{Metric: weightString(f.MetricWeights), Dataset: weightString(f.DatasetWeights)}}
	p.Title = t.Name + " · " + f.Name
	return s.showBoard(w, r, http.StatusOK, p)
}

// weightString spells weights as the API does, names sorted.
func weightString(m map[string]float64) string {
	if m == nil {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sortStrings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ":" + strconv.FormatFloat(m[k], 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}

// createSnapshot freezes the leaderboard for the posted weights (owners) and goes to its page.
func (s *Server) createSnapshot(w http.ResponseWriter, r *http.Request) error {
	ctx, u := r.Context(), actor(r)
	t, err := s.svc.VisibleTask(ctx, u, r.PathValue("code"))
	if err != nil {
		return err
	}
	p := &boardPage{Task: t, Weights: postedWeights(r), SnapName: r.PostFormValue("name"), Posted: "snapshot"}
	p.Title = t.Name + " · leaderboard"
	q, err := p.Weights.query()
	if err == nil {
		var sn *dynabench.LeaderboardSnapshot
		if sn, err = s.svc.CreateSnapshot(ctx, u, t.Code, p.SnapName, q); err == nil {
			http.Redirect(w, r, "/tasks/"+url.PathEscape(t.Code)+"/leaderboard/snapshots/"+url.PathEscape(sn.Slug), http.StatusSeeOther)
			return nil
		}
	}
	return s.boardFormError(w, r, p, err)
}

// snapshot shows a frozen leaderboard as it was stored.
func (s *Server) snapshot(w http.ResponseWriter, r *http.Request) error {
	ctx, u := r.Context(), actor(r)
	t, err := s.svc.VisibleTask(ctx, u, r.PathValue("code"))
	if err != nil {
		return err
	}
	sn, err := s.svc.Snapshot(ctx, u, t.Code, r.PathValue("slug"))
	if err != nil {
		return err
	}
	var b service.Leaderboard
	if err := json.Unmarshal(sn.Body, &b); err != nil {
		return fmt.Errorf("snapshot %s: %w", sn.Slug, err)
	}
	p := &boardPage{Task: t, Snapshot: sn, Board: &b}
	p.Title = t.Name + " · " + sn.Name
	p.table(&b)
	return s.render(w, r, http.StatusOK, "leaderboard", p)
}

// comparePage is two models compared on the same examples.
type comparePage struct {
	Base
	Task *dynabench.Task
	Cmp  *service.Comparison
}

// compare shows the paired comparison of ?a= and ?b=.
func (s *Server) compare(w http.ResponseWriter, r *http.Request) error {
	ctx, u := r.Context(), actor(r)
	a, aerr := strconv.ParseInt(r.URL.Query().Get("a"), 10, 64)
	b, berr := strconv.ParseInt(r.URL.Query().Get("b"), 10, 64)
	if aerr != nil || berr != nil || a <= 0 || b <= 0 {
		return dynabench.Errorf(dynabench.EINVALID, "choose two models to compare (?a=<model id>&b=<model id>)")
	}
	if a == b {
		return dynabench.Errorf(dynabench.EINVALID, "choose two different models to compare")
	}
	c, err := s.svc.Compare(ctx, u, a, b)
	if err != nil {
		return err
	}
	_, t, err := s.svc.Model(ctx, u, a)
	if err != nil {
		return err
	}
	p := &comparePage{Task: t, Cmp: c}
	p.Title = c.A.Name + " vs " + c.B.Name
	return s.render(w, r, http.StatusOK, "compare", p)
}

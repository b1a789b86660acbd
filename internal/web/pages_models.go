package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/service"
)

// modelPage is one model: its card, its evaluations per dataset, and what the reader may do.
type modelPage struct {
	Base
	Form
	Model       *dynabench.Model
	Task        *dynabench.Task
	OwnerName   string
	Evals       []evalView
	Busy        bool // something is queued or running: the status section polls
	ShowLog     bool
	CanPublish  bool
	CanEvaluate bool
}

// evalView is a model's evaluation on one dataset, its perturbed copies folded in.
type evalView struct {
	Dataset               *dynabench.Dataset
	Status, Reason, Fault string
	Scores                []scoreView
	TagMetrics            []string
	Tags                  []tagView
	Parts                 []partView
}

type scoreView struct{ Label, Value string }

type tagView struct {
	Tag    string
	Values []string
}

type partView struct {
	Variant, Status, Reason, Log string
	N                            int
}

// metricLabels names the perf and delta metrics an evaluation reports.
var metricLabels = map[string]string{
	service.MetricAccuracy: "Accuracy", service.MetricMacroF1: "Macro F1", service.MetricSquadEM: "QA exact match",
	service.MetricSquadF1: "QA F1", service.MetricRobustness: "Robustness", service.MetricFairness: "Fairness",
}

func metricLabel(name string) string {
	if l, ok := metricLabels[name]; ok {
		return l
	}
	return name
}

func pct1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + "%" }

func (s *Server) model(w http.ResponseWriter, r *http.Request) error {
	ctx, u := r.Context(), actor(r)
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	m, t, err := s.svc.Model(ctx, u, id)
	if err != nil {
		return err
	}
	sts, err := s.svc.ModelEvaluations(ctx, u, m, t)
	if err != nil {
		return err
	}
	owner, err := s.svc.CanOwn(ctx, u, t)
	if err != nil {
		return err
	}
	mine := u != nil && u.ID == m.UserID
	p := &modelPage{Model: m, Task: t, ShowLog: mine || owner, CanPublish: mine || (u != nil && u.Admin), CanEvaluate: mine || owner}
	p.Title = m.Name
	p.Success = r.URL.Query().Get("saved")
	// The registrant's public name, which no service method gives.
	if ou, err := s.svc.Store.FindUserByID(ctx, m.UserID); err == nil {
		p.OwnerName = ou.Username
	}
	for _, st := range sts {
		ev := evalView{Dataset: st.Dataset, Status: st.Status, Reason: st.Reason, Fault: st.Fault}
		if st.Status == dynabench.EvalQueued || st.Status == dynabench.EvalRunning {
			p.Busy = true
		}
		for _, v := range st.Variants {
			pv := partView{Variant: v.Variant, Status: v.Status, Reason: v.Reason}
			if pv.Variant == "" {
				pv.Variant = "original"
			}
			if v.Status == dynabench.EvalQueued || v.Status == dynabench.EvalRunning {
				p.Busy = true
			}
			if p.ShowLog {
				pv.Log = v.Log
			}
			if res := v.Result; res != nil {
				pv.N = res.N
				ev.addScores(v.Variant, res)
			}
			ev.Parts = append(ev.Parts, pv)
		}
		p.Evals = append(p.Evals, ev)
	}
	if isHTMX(r) && r.URL.Query().Get("part") == "status" {
		return s.fragment(w, r, http.StatusOK, "model", "status", p)
	}
	return s.render(w, r, http.StatusOK, "model", p)
}

// addScores adds what one variant's evaluation measured.
func (ev *evalView) addScores(variant string, res *dynabench.EvalResult) {
	names := make([]string, 0, len(res.Metrics))
	for k := range res.Metrics {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		ev.Scores = append(ev.Scores, scoreView{Label: metricLabel(k), Value: pct1(res.Metrics[k])})
	}
	if variant != dynabench.VariantOriginal {
		return
	}
	prec := 1
	if res.ExamplesPerSecond >= 1000 {
		prec = 0
	}
	ev.Scores = append(ev.Scores, scoreView{Label: "Throughput", Value: strconv.FormatFloat(res.ExamplesPerSecond, 'f', prec, 64) + " examples/s"})
	mem := "not measured"
	if res.MemoryGiB != nil {
		mem = strconv.FormatFloat(*res.MemoryGiB, 'f', 2, 64) + " GiB"
	}
	ev.Scores = append(ev.Scores, scoreView{Label: "Memory", Value: mem})
	if len(res.ByTag) == 0 {
		return
	}
	tags := make([]string, 0, len(res.ByTag))
	metrics := map[string]bool{}
	for tag, ms := range res.ByTag {
		tags = append(tags, tag)
		for k := range ms {
			metrics[k] = true
		}
	}
	sort.Strings(tags)
	for k := range metrics {
		ev.TagMetrics = append(ev.TagMetrics, k)
	}
	sort.Strings(ev.TagMetrics)
	for _, tag := range tags {
		tv := tagView{Tag: tag}
		for _, k := range ev.TagMetrics {
			if v, ok := res.ByTag[tag][k]; ok {
				tv.Values = append(tv.Values, pct1(v))
			} else {
				tv.Values = append(tv.Values, "–")
			}
		}
		ev.Tags = append(ev.Tags, tv)
	}
}

// TagLabels are the per-tag table's column names.
func (ev evalView) TagLabels() []string {
	out := make([]string, len(ev.TagMetrics))
	for i, k := range ev.TagMetrics {
		out[i] = metricLabel(k)
	}
	return out
}

func (s *Server) publishModel(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	pub := r.PostFormValue("published") == "true"
	if _, err := s.svc.PublishModel(r.Context(), actor(r), id, pub); err != nil {
		return err
	}
	msg := "Unpublished: only you and the task's owners see it now."
	if pub {
		msg = "Published: the model is on the leaderboard once it is scored."
	}
	http.Redirect(w, r, fmt.Sprintf("/models/%d?saved=%s", id, url.QueryEscape(msg)), http.StatusSeeOther)
	return nil
}

func (s *Server) evaluateModel(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	if _, err := s.svc.EvaluateModel(r.Context(), actor(r), id); err != nil {
		return err
	}
	http.Redirect(w, r, fmt.Sprintf("/models/%d?saved=%s", id, url.QueryEscape("Queued for evaluation on every dataset again.")), http.StatusSeeOther)
	return nil
}

// submitPage registers a model of the task and lists the task's models the reader may see.
type submitPage struct {
	Base
	Form
	Task                           *dynabench.Task
	Models                         []*dynabench.Model
	Kinds                          []string
	Name, Kind, URL, Options, Card string
	Quota                          bool
	MaxPerDay                      int
}

var modelKinds = []string{dynabench.KindDynalab, dynabench.KindOpenAI, dynabench.KindHF, dynabench.KindKServe}

func (s *Server) submitBase(r *http.Request) (*submitPage, error) {
	ctx, u := r.Context(), actor(r)
	if u == nil {
		return nil, dynabench.Errorf(dynabench.EUNAUTHORIZED, "log in to submit a model")
	}
	t, err := s.svc.VisibleTask(ctx, u, r.PathValue("code"))
	if err != nil {
		return nil, err
	}
	models, err := s.svc.TaskModels(ctx, u, t.Code)
	if err != nil {
		return nil, err
	}
	p := &submitPage{Task: t, Models: models, Kinds: modelKinds, Kind: dynabench.KindDynalab, MaxPerDay: t.Settings.MaxSubmissionsPerDay}
	p.Title = t.Name + " · submit a model"
	return p, nil
}

func (s *Server) submitPage(w http.ResponseWriter, r *http.Request) error {
	p, err := s.submitBase(r)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "submit", p)
}

func (s *Server) submitModel(w http.ResponseWriter, r *http.Request) error {
	p, err := s.submitBase(r)
	if err != nil {
		return err
	}
	p.Name, p.Kind, p.URL = strings.TrimSpace(r.PostFormValue("name")), r.PostFormValue("kind"), strings.TrimSpace(r.PostFormValue("url"))
	p.Options, p.Card = r.PostFormValue("options"), r.PostFormValue("card")
	nm := service.NewModel{Name: p.Name, Kind: p.Kind, URL: p.URL, Card: p.Card}
	if strings.TrimSpace(p.Options) != "" {
		if err := json.Unmarshal([]byte(p.Options), &nm.Options); err != nil || nm.Options == nil {
			p.Fail(dynabench.FieldErrorf(dynabench.EINVALID, "options", "a JSON object, like {\"model\": \"gpt-4o-mini\"}, or nothing"))
			return s.render(w, r, http.StatusUnprocessableEntity, "submit", p)
		}
	}
	m, err := s.svc.RegisterModel(r.Context(), actor(r), p.Task.Code, nm)
	if err != nil {
		switch dynabench.ErrorCode(err) {
		case dynabench.EUNAUTHORIZED, dynabench.EFORBIDDEN, dynabench.ENOTFOUND:
			return err
		}
		if !p.Fail(err) {
			return err
		}
		if dynabench.IsCode(err, dynabench.ERATELIMIT) {
			p.Quota = true
			p.Error = "Daily submission quota reached. " + p.Error
		}
		return s.render(w, r, statusFor(err), "submit", p)
	}
	http.Redirect(w, r, fmt.Sprintf("/models/%d?saved=%s", m.ID, url.QueryEscape("Submitted: the model is queued for evaluation on every dataset.")), http.StatusSeeOther)
	return nil
}

// OptionsErr joins the problems of the options and of each option.
func (p *submitPage) OptionsErr() string {
	var msgs []string
	for f, m := range p.Errors {
		if f == "options" || strings.HasPrefix(f, "options.") {
			msgs = append(msgs, f+": "+m)
		}
	}
	sort.Strings(msgs)
	return strings.Join(msgs, "; ")
}

// datasetsPage lists the task's datasets and, for owners, uploads one.
type datasetsPage struct {
	Base
	Form
	Task         *dynabench.Task
	Datasets     []datasetView
	Owner        bool
	Name, Access string
	Accesses     []string
}

type datasetView struct {
	*dynabench.Dataset
	Robustness, Fairness int
	Hash                 string
}

var accesses = []string{dynabench.AccessScoring, dynabench.AccessStandard, dynabench.AccessHidden}

func (s *Server) datasetsBase(r *http.Request) (*datasetsPage, error) {
	ctx, u := r.Context(), actor(r)
	t, err := s.svc.VisibleTask(ctx, u, r.PathValue("code"))
	if err != nil {
		return nil, err
	}
	ds, err := s.svc.Datasets(ctx, u, t.Code)
	if err != nil {
		return nil, err
	}
	p := &datasetsPage{Task: t, Access: dynabench.AccessScoring, Accesses: accesses}
	if p.Owner, err = s.svc.CanOwn(ctx, u, t); err != nil {
		return nil, err
	}
	for _, d := range ds {
		v := datasetView{Dataset: d, Robustness: d.Variants[dynabench.VariantRobustness], Fairness: d.Variants[dynabench.VariantFairness], Hash: d.SHA256}
		if len(v.Hash) > 12 {
			v.Hash = v.Hash[:12]
		}
		p.Datasets = append(p.Datasets, v)
	}
	p.Title = t.Name + " · datasets"
	return p, nil
}

func (s *Server) datasetsPage(w http.ResponseWriter, r *http.Request) error {
	p, err := s.datasetsBase(r)
	if err != nil {
		return err
	}
	p.Success = r.URL.Query().Get("saved")
	return s.render(w, r, http.StatusOK, "datasets", p)
}

func (s *Server) uploadDataset(w http.ResponseWriter, r *http.Request) error {
	ctx, u := r.Context(), actor(r)
	// Who may not upload gets the error page (or the login page), not the form.
	if _, err := s.svc.OwnedTask(ctx, u, r.PathValue("code")); err != nil {
		return err
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxUpload)
	p, err := s.datasetsBase(r)
	if err != nil {
		return err
	}
	p.Name, p.Access = strings.TrimSpace(r.PostFormValue("name")), r.PostFormValue("access")
	if !slices.Contains(accesses, p.Access) {
		p.Access = dynabench.AccessScoring
		if r.PostFormValue("access") != "" {
			p.Fail(dynabench.FieldErrorf(dynabench.EINVALID, "access", "one of scoring, standard, hidden"))
			return s.render(w, r, http.StatusUnprocessableEntity, "datasets", p)
		}
	}
	var body io.Reader
	if f, _, ferr := r.FormFile("file"); ferr == nil {
		defer f.Close()
		body = f
	} else if text := r.PostFormValue("jsonl"); strings.TrimSpace(text) != "" {
		body = strings.NewReader(text)
	} else {
		var tooBig *http.MaxBytesError
		if errors.As(ferr, &tooBig) {
			p.Fail(dynabench.FieldErrorf(dynabench.ETOOLARGE, "file", "the file is larger than %d MiB", maxUpload>>20))
			return s.render(w, r, http.StatusRequestEntityTooLarge, "datasets", p)
		}
		p.Fail(dynabench.FieldErrorf(dynabench.EINVALID, "file", "choose a JSON Lines file (one example per line)"))
		return s.render(w, r, http.StatusUnprocessableEntity, "datasets", p)
	}
	d, err := s.svc.UploadDataset(ctx, u, p.Task.Code, service.NewDataset{Name: p.Name, Access: p.Access, Body: body})
	if err != nil {
		if !p.Fail(err) {
			return err
		}
		p.Error = "Nothing was stored. " + errText(err)
		if p.Errors["body"] != "" {
			p.Errors["file"] = p.Errors["body"]
		}
		return s.render(w, r, statusFor(err), "datasets", p)
	}
	msg := fmt.Sprintf("Dataset %s version %d stored: %d examples; every model of the task is queued for evaluation on it.", d.Name, d.Version, d.Size)
	http.Redirect(w, r, "/tasks/"+url.PathEscape(p.Task.Code)+"/datasets?saved="+url.QueryEscape(msg), http.StatusSeeOther)
	return nil
}

package web

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/service"
)

// ownerTabs are the owner pages of a task, shown as tabs on each.
var ownerTabs = []NavLink{
	{Label: "Settings & config", Href: "settings"},
	{Label: "Contexts", Href: "contexts"},
	{Label: "Rounds", Href: "rounds"},
	{Label: "Flagged", Href: "flagged"},
}

// ownerBase is what every owner page shows: the task and the tabs.
type ownerBase struct {
	Base
	Form
	Task *dynabench.Task
	Tabs []NavLink
}

func (s *Server) ownerPage(r *http.Request, tab string) (*ownerBase, error) {
	t, err := s.svc.OwnedTask(r.Context(), actor(r), r.PathValue("code"))
	if err != nil {
		return nil, err
	}
	o := &ownerBase{Task: t}
	for _, l := range ownerTabs {
		o.Tabs = append(o.Tabs, NavLink{Label: l.Label, Href: "/tasks/" + t.Code + "/" + l.Href, Current: l.Href == tab})
	}
	o.Title = t.Name + " · " + tab
	return o, nil
}

// settingsPage holds the settings form and the config editor.
type settingsPage struct {
	*ownerBase
	Settings   dynabench.TaskSettings
	Config     string
	Strategies []string
	Warnings   []string
}

func (s *Server) settingsPage(w http.ResponseWriter, r *http.Request) error {
	o, err := s.ownerPage(r, "settings")
	if err != nil {
		return err
	}
	p := &settingsPage{ownerBase: o, Settings: o.Task.Settings, Config: o.Task.ConfigSource, Strategies: strategies}
	p.Success = r.URL.Query().Get("saved")
	return s.render(w, r, http.StatusOK, "settings", p)
}

var strategies = []string{dynabench.StrategyLeastUsed, dynabench.StrategyUniform, dynabench.StrategyLeastFooled, dynabench.StrategyValidationFailed}

func (s *Server) saveSettings(w http.ResponseWriter, r *http.Request) error {
	o, err := s.ownerPage(r, "settings")
	if err != nil {
		return err
	}
	st := dynabench.TaskSettings{
		NumMatchingValidations: formInt(r, "num_matching_validations", -1),
		ValidateNonFooling:     r.PostFormValue("validate_non_fooling") != "",
		ContextStrategy:        r.PostFormValue("context_strategy"),
		MaxExamplesPerDay:      formInt(r, "max_examples_per_day", -1),
		Hidden:                 r.PostFormValue("hidden") != "",
		ModelTimeoutMS:         formInt(r, "model_timeout_ms", -1),
	}
	p := &settingsPage{ownerBase: o, Settings: st, Config: o.Task.ConfigSource, Strategies: strategies}
	if _, err := s.svc.UpdateSettings(r.Context(), actor(r), o.Task.Code, st); err != nil {
		if !p.Fail(err) {
			return err
		}
		return s.render(w, r, statusFor(err), "settings", p)
	}
	http.Redirect(w, r, "/tasks/"+o.Task.Code+"/settings?saved=Settings+saved.", http.StatusSeeOther)
	return nil
}

func (s *Server) saveConfig(w http.ResponseWriter, r *http.Request) error {
	o, err := s.ownerPage(r, "settings")
	if err != nil {
		return err
	}
	src := r.PostFormValue("config")
	p := &settingsPage{ownerBase: o, Settings: o.Task.Settings, Config: src, Strategies: strategies}
	_, warnings, err := s.svc.UpdateConfig(r.Context(), actor(r), o.Task.Code, src, nil)
	if err != nil {
		if !p.Fail(err) {
			return err
		}
		p.Error = "The config was not saved: fix the problems listed next to their paths."
		return s.render(w, r, statusFor(err), "settings", p)
	}
	msg := "Config saved."
	if len(warnings) > 0 {
		parts := make([]string, len(warnings))
		for i, w := range warnings {
			parts[i] = w.String()
		}
		msg += " Kept but not understood: " + strings.Join(parts, "; ")
	}
	http.Redirect(w, r, "/tasks/"+o.Task.Code+"/settings?saved="+strings.ReplaceAll(msg, " ", "+"), http.StatusSeeOther)
	return nil
}

// ConfigProblems lists the config editor's problems, path first, in a stable order.
func (p *settingsPage) ConfigProblems() [][2]string {
	var out [][2]string
	for path, msg := range p.Errors {
		if strings.HasPrefix(path, "config") {
			out = append(out, [2]string{path, msg})
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j][0] < out[j-1][0]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// contextsPage uploads contexts to a round.
type contextsPage struct {
	*ownerBase
	Round  int
	Rounds []int
}

func (s *Server) contextsPage(w http.ResponseWriter, r *http.Request) error {
	o, err := s.ownerPage(r, "contexts")
	if err != nil {
		return err
	}
	p := &contextsPage{ownerBase: o, Round: o.Task.CurrentRound, Rounds: roundNumbers(o.Task)}
	p.Success = r.URL.Query().Get("saved")
	return s.render(w, r, http.StatusOK, "contexts", p)
}

func roundNumbers(t *dynabench.Task) []int {
	out := make([]int, 0, t.CurrentRound)
	for n := t.CurrentRound; n >= 1; n-- {
		out = append(out, n)
	}
	return out
}

// maxUpload bounds a contexts file sent through the page.
const maxUpload = 32 << 20

func (s *Server) uploadContexts(w http.ResponseWriter, r *http.Request) error {
	o, err := s.ownerPage(r, "contexts")
	if err != nil {
		return err
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxUpload)
	p := &contextsPage{ownerBase: o, Round: formInt(r, "round", o.Task.CurrentRound), Rounds: roundNumbers(o.Task)}
	var body io.Reader
	if f, _, ferr := r.FormFile("file"); ferr == nil {
		defer f.Close()
		body = f
	} else if text := r.PostFormValue("jsonl"); strings.TrimSpace(text) != "" {
		body = strings.NewReader(text)
	} else {
		p.Fail(dynabench.FieldErrorf(dynabench.EINVALID, "file", "choose a JSON Lines file (one context per line)"))
		return s.render(w, r, http.StatusUnprocessableEntity, "contexts", p)
	}
	n, err := s.svc.UploadContexts(r.Context(), actor(r), o.Task.Code, p.Round, body)
	if err != nil {
		if !p.Fail(err) {
			return err
		}
		p.Error = "Nothing was stored. " + p.uploadProblem()
		return s.render(w, r, statusFor(err), "contexts", p)
	}
	http.Redirect(w, r, fmt.Sprintf("/tasks/%s/contexts?saved=%d+contexts+added+to+round+%d.", o.Task.Code, n, p.Round), http.StatusSeeOther)
	return nil
}

func (p *contextsPage) uploadProblem() string {
	for field, msg := range p.Errors {
		if strings.HasPrefix(field, "line ") {
			return "The first bad line is " + field + ": " + msg
		}
		return field + ": " + msg
	}
	return ""
}

// roundsPage shows the rounds with their models in the loop and opens the next round.
type roundsPage struct {
	*ownerBase
	Rounds []roundRow
	Models []*dynabench.Model
	InLoop map[int64]bool
	Mode   string
	// Releases and the retraining cycle.
	Closed        []closedRound // newest first
	Released      []int         // rounds with a release
	Rel           relForm       // the release form as posted (Round 0: none was)
	RetrainName   string
	SeedData      bool
	RetrainPosted bool
	Trained       *dynabench.Model // the model just trained (?trained=)
	TrainedOn     string           // the rounds it was trained on, as said in ?on=
	TrainedSeed   bool
}

func (s *Server) roundsPage(w http.ResponseWriter, r *http.Request) error {
	o, err := s.ownerPage(r, "rounds")
	if err != nil {
		return err
	}
	p, err := s.newRoundsPage(r, o)
	if err != nil {
		return err
	}
	p.Success = r.URL.Query().Get("saved")
	return s.render(w, r, http.StatusOK, "rounds", p)
}

func (s *Server) newRoundsPage(r *http.Request, o *ownerBase) (*roundsPage, error) {
	_, rounds, err := s.svc.TaskRounds(r.Context(), actor(r), o.Task.Code)
	if err != nil {
		return nil, err
	}
	p := &roundsPage{ownerBase: o, InLoop: map[int64]bool{}}
	if p.Models, err = s.svc.TaskModels(r.Context(), actor(r), o.Task.Code); err != nil {
		return nil, err
	}
	names := map[int64]string{}
	for _, m := range p.Models {
		names[m.ID] = m.Name
	}
	for _, rd := range rounds {
		row := roundRow{Number: rd.Number, Status: rd.Status, Stats: rd.Stats}
		row.Stats.Rates()
		for _, id := range rd.ModelIDs {
			row.Models = append(row.Models, names[id])
			if rd.Number == o.Task.CurrentRound {
				p.InLoop[id] = true
				p.Mode = rd.LoopMode
			}
		}
		p.Rounds = append(p.Rounds, row)
	}
	if err := s.releaseInfo(r, p, rounds); err != nil {
		return nil, err
	}
	return p, nil
}

// picker is the data of the model picker: which models are in the loop now, and the loop mode.
type picker struct {
	Prefix string
	Models []*dynabench.Model
	InLoop map[int64]bool
	Mode   string
}

// Picker returns the model picker's data for one of the page's forms (prefix keeps ids unique).
func (p *roundsPage) Picker(prefix string) picker {
	return picker{Prefix: prefix, Models: p.Models, InLoop: p.InLoop, Mode: p.Mode}
}

func modelIDs(r *http.Request) []int64 {
	var ids []int64
	for _, v := range r.PostForm["model"] {
		if id, err := strconv.ParseInt(v, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

func (s *Server) setRoundModels(w http.ResponseWriter, r *http.Request) error {
	o, err := s.ownerPage(r, "rounds")
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil {
		return dynabench.Errorf(dynabench.ENOTFOUND, "no such round")
	}
	r.ParseForm()
	if _, err := s.svc.SetRoundModels(r.Context(), actor(r), o.Task.Code, n, modelIDs(r), r.PostFormValue("mode")); err != nil {
		return s.roundsError(w, r, o, err)
	}
	http.Redirect(w, r, fmt.Sprintf("/tasks/%s/rounds?saved=Models+in+the+loop+of+round+%d+saved.", o.Task.Code, n), http.StatusSeeOther)
	return nil
}

func (s *Server) nextRound(w http.ResponseWriter, r *http.Request) error {
	o, err := s.ownerPage(r, "rounds")
	if err != nil {
		return err
	}
	r.ParseForm()
	rd, err := s.svc.NextRound(r.Context(), actor(r), o.Task.Code, modelIDs(r), r.PostFormValue("mode"))
	if err != nil {
		return s.roundsError(w, r, o, err)
	}
	http.Redirect(w, r, fmt.Sprintf("/tasks/%s/rounds?saved=Round+%d+is+open.", o.Task.Code, rd.Number), http.StatusSeeOther)
	return nil
}

func (s *Server) roundsError(w http.ResponseWriter, r *http.Request, o *ownerBase, err error) error {
	if !o.Fail(err) {
		return err
	}
	p, perr := s.newRoundsPage(r, o)
	if perr != nil {
		return perr
	}
	return s.render(w, r, statusFor(err), "rounds", p)
}

// flaggedPage lists flagged examples for an owner verdict.
type flaggedPage struct {
	*ownerBase
	Items []flaggedItem
}

type flaggedItem struct {
	Example *dynabench.Example
	Context []ContextField
	Inputs  []ShownInput
	Answer  ModelAnswer
}

func (s *Server) flaggedPage(w http.ResponseWriter, r *http.Request) error {
	o, err := s.ownerPage(r, "flagged")
	if err != nil {
		return err
	}
	p := &flaggedPage{ownerBase: o}
	p.Success = r.URL.Query().Get("saved")
	cfg, err := s.svc.Config(o.Task)
	if err != nil {
		return err
	}
	list, err := s.svc.FlaggedExamples(r.Context(), actor(r), o.Task.Code, 100)
	if err != nil {
		return err
	}
	for _, e := range list {
		c, err := s.svc.ExampleContext(r.Context(), actor(r), e)
		if err != nil {
			return err
		}
		it := flaggedItem{Example: e, Context: contextFields(cfg, c, nil), Answer: modelAnswer(cfg, e.ModelOutput)}
		for _, f := range cfg.Input {
			it.Inputs = append(it.Inputs, ShownInput{Label: fieldLabel(f), Value: valueText(e.Input[f.Name])})
		}
		p.Items = append(p.Items, it)
	}
	return s.render(w, r, http.StatusOK, "flagged", p)
}

func (s *Server) ownerVerdict(w http.ResponseWriter, r *http.Request) error {
	o, err := s.ownerPage(r, "flagged")
	if err != nil {
		return err
	}
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	label := r.PostFormValue("label")
	if _, err := s.svc.Validate(r.Context(), actor(r), id, service.NewValidation{Label: label, Mode: dynabench.ModeOwner}); err != nil {
		return err
	}
	http.Redirect(w, r, fmt.Sprintf("/tasks/%s/flagged?saved=Example+%d+marked+%s.", o.Task.Code, id, label), http.StatusSeeOther)
	return nil
}

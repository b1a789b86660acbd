package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/service"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// createPage is the data of the create page: the context, the generated input form, the model's
// answer once there is one, and the annotator's running score.
type createPage struct {
	Base
	Form
	Task           *dynabench.Task
	Goal           string
	ContentWarning string
	Context        *dynabench.Context
	ContextFields  []ContextField
	Inputs         []FormField
	Tag            string
	Sandbox        bool
	Round          int
	Score          dynabench.AnnotatorStats
	Result         *createResult
	DraftKey       string
	NoContext      string // why there is no context to write on
}

// createResult is the model's answer to one example and what the annotator may do next.
type createResult struct {
	TaskCode   string
	ContextID  int64
	Example    *dynabench.Example
	Sandbox    bool
	Answer     ModelAnswer
	Fooled     *bool
	AsksUser   bool
	ModelError string
	Metadata   []FormField
	Form
	Notice string
}

// Retracted reports whether the example was withdrawn.
func (c *createResult) Retracted() bool { return c.Example.Status == dynabench.StatusRetracted }

func (s *Server) createPage(w http.ResponseWriter, r *http.Request) error {
	ctx, u := r.Context(), actor(r)
	if u == nil {
		s.toLogin(w, r)
		return nil
	}
	code, q := r.PathValue("code"), r.URL.Query()
	p, cfg, err := s.newCreatePage(ctx, u, code)
	if err != nil {
		return err
	}
	p.Tag = strings.TrimSpace(q.Get("tag"))
	if id, err := strconv.ParseInt(q.Get("context"), 10, 64); err == nil {
		p.Context, err = s.svc.CreateContext(ctx, u, code, id)
		if err != nil && !dynabench.IsCode(err, dynabench.ENOTFOUND) {
			return err
		}
	}
	if p.Context == nil {
		p.Context, err = s.svc.PickContext(ctx, u, code, "", p.Tag)
		if dynabench.IsCode(err, dynabench.ENOTFOUND) {
			p.NoContext = err.(*dynabench.Error).Message
		} else if err != nil {
			return err
		}
		if p.Context != nil {
			// Name the context in the URL, so a reload shows the same one (and its draft).
			q.Set("context", strconv.FormatInt(p.Context.ID, 10))
			http.Redirect(w, r, "/tasks/"+url.PathEscape(code)+"/create?"+q.Encode(), http.StatusSeeOther)
			return nil
		}
	}
	if id, err := strconv.ParseInt(q.Get("example"), 10, 64); err == nil {
		if e, err := s.svc.Example(ctx, u, id); err == nil && e.TaskID == p.Task.ID {
			p.Result = s.result(cfg, p.Task, e, false)
			p.Result.Notice = q.Get("notice")
			if p.Context == nil || p.Context.ID != e.ContextID {
				if c, err := s.svc.CreateContext(ctx, u, code, e.ContextID); err == nil {
					p.Context = c
				}
			}
			p.Inputs = formFields(cfg.Input, "in.", "input.", e.Input, nil)
		}
	}
	s.fillContext(p, cfg, nil)
	return s.render(w, r, http.StatusOK, "create", p)
}

// newCreatePage reads what every state of the create page shows.
func (s *Server) newCreatePage(ctx context.Context, u *dynabench.User, code string) (*createPage, *taskconfig.Config, error) {
	t, err := s.svc.VisibleTask(ctx, u, code)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := s.svc.Config(t)
	if err != nil {
		return nil, nil, err
	}
	p := &createPage{Task: t, Goal: cfg.GoalMessage, ContentWarning: cfg.ContentWarning, Round: t.CurrentRound}
	p.Title = "Write an example · " + t.Name
	if p.Score, err = s.svc.MyRoundStats(ctx, u, code, t.CurrentRound); err != nil {
		return nil, nil, err
	}
	return p, cfg, nil
}

// fillContext lays out the context and (unless already filled) the empty input form.
func (s *Server) fillContext(p *createPage, cfg *taskconfig.Config, values map[string]any) {
	if p.Inputs == nil {
		p.Inputs = formFields(cfg.Input, "in.", "input.", values, &p.Form)
	}
	if p.Context == nil {
		return
	}
	selectFor := map[string]string{}
	for _, f := range p.Inputs {
		if f.Type == taskconfig.TypeContextStringSelection && f.Ref != "" {
			selectFor[f.Ref] = f.ID
		}
	}
	p.ContextFields = contextFields(cfg, p.Context, selectFor)
	p.DraftKey = fmt.Sprintf("draft:%s:%d", p.Task.Code, p.Context.ID)
}

// result prepares the model's answer and the follow-up form for an example.
func (s *Server) result(cfg *taskconfig.Config, t *dynabench.Task, e *dynabench.Example, sandbox bool) *createResult {
	res := &createResult{TaskCode: t.Code, ContextID: e.ContextID, Example: e, Sandbox: sandbox, Fooled: e.ModelWrong,
		ModelError: e.ModelError, AsksUser: cfg.AsksUser()}
	if e.ModelError == "" {
		res.Answer = modelAnswer(cfg, e.ModelOutput)
	}
	res.Metadata = formFields(applicableMeta(cfg, e), "meta.", "metadata.", e.Metadata, &res.Form)
	return res
}

// createExample submits the example. With htmx it answers the result fragment (and the field
// errors out of band), leaving the typed text alone; without JavaScript it answers the whole page
// with the text kept.
func (s *Server) createExample(w http.ResponseWriter, r *http.Request) error {
	ctx, u := r.Context(), actor(r)
	if u == nil {
		s.toLogin(w, r)
		return nil
	}
	code := r.PathValue("code")
	p, cfg, err := s.newCreatePage(ctx, u, code)
	if err != nil {
		return err
	}
	if err := r.ParseForm(); err != nil {
		return dynabench.Errorf(dynabench.EMALFORMED, "the form could not be read")
	}
	p.Tag, p.Sandbox = strings.TrimSpace(r.PostFormValue("tag")), r.PostFormValue("sandbox") != ""
	ctxID, _ := strconv.ParseInt(r.PostFormValue("context_id"), 10, 64)
	input := readFields(r, cfg.Input, "in.")
	e, err := s.svc.CreateExample(ctx, u, code, service.NewExample{ContextID: ctxID, Input: input, Sandbox: p.Sandbox})
	status := http.StatusOK
	if err != nil {
		if !p.Fail(err) {
			return err
		}
		status = statusFor(err)
	} else {
		p.Result = s.result(cfg, p.Task, e, p.Sandbox)
		if p.Score, err = s.svc.MyRoundStats(ctx, u, code, p.Task.CurrentRound); err != nil {
			return err
		}
	}
	if c, cerr := s.svc.CreateContext(ctx, u, code, ctxID); cerr == nil {
		p.Context = c
	}
	s.fillContext(p, cfg, input)
	if isHTMX(r) {
		return s.fragment(w, r, status, "create", "submitted", p)
	}
	return s.render(w, r, status, "create", p)
}

func isHTMX(r *http.Request) bool { return r.Header.Get("HX-Request") == "true" }

// afterExample answers a follow-up action on an example: the result fragment for htmx, else a
// redirect to the create page showing the example.
func (s *Server) afterExample(w http.ResponseWriter, r *http.Request, e *dynabench.Example, form Form, notice string) error {
	ctx, u := r.Context(), actor(r)
	t, err := s.svc.VisibleTask(ctx, u, r.PathValue("code"))
	if err != nil {
		return err
	}
	if e.TaskID != t.ID {
		return dynabench.Errorf(dynabench.ENOTFOUND, "example not found")
	}
	cfg, err := s.svc.Config(t)
	if err != nil {
		return err
	}
	res := s.result(cfg, t, e, false)
	res.Notice = notice
	if form.Errors != nil || form.Error != "" {
		res.Form = form
		res.Metadata = formFields(applicableMeta(cfg, e), "meta.", "metadata.", readFields(r, cfg.CreateMetadata, "meta."), &res.Form)
	}
	status := http.StatusOK
	if res.Form.Error != "" {
		status = http.StatusUnprocessableEntity
	}
	if isHTMX(r) {
		p := &createPage{Task: t, Result: res}
		return s.fragment(w, r, status, "create", "result", p)
	}
	if status != http.StatusOK {
		return dynabench.Errorf(dynabench.EINVALID, "%s", res.Form.Error)
	}
	q := url.Values{"context": {fmt.Sprint(e.ContextID)}, "example": {fmt.Sprint(e.ID)}, "notice": {notice}}
	http.Redirect(w, r, "/tasks/"+url.PathEscape(t.Code)+"/create?"+q.Encode(), http.StatusSeeOther)
	return nil
}

func applicableMeta(cfg *taskconfig.Config, e *dynabench.Example) []taskconfig.Field {
	var out []taskconfig.Field
	for _, f := range cfg.CreateMetadata {
		if f.ModelWrongCondition == nil || (e.ModelWrong != nil && *f.ModelWrongCondition == *e.ModelWrong) {
			out = append(out, f)
		}
	}
	return out
}

// ownExample reads the annotator's example named in the path.
func (s *Server) ownExample(r *http.Request) (*dynabench.Example, *taskconfig.Config, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return nil, nil, err
	}
	e, err := s.svc.Example(r.Context(), actor(r), id)
	if err != nil {
		return nil, nil, err
	}
	t, err := s.svc.VisibleTask(r.Context(), actor(r), r.PathValue("code"))
	if err != nil {
		return nil, nil, err
	}
	cfg, err := s.svc.Config(t)
	return e, cfg, err
}

func (s *Server) explainExample(w http.ResponseWriter, r *http.Request) error {
	if actor(r) == nil {
		s.toLogin(w, r)
		return nil
	}
	e, cfg, err := s.ownExample(r)
	if err != nil {
		return err
	}
	if err := r.ParseForm(); err != nil {
		return dynabench.Errorf(dynabench.EMALFORMED, "the form could not be read")
	}
	patch := service.ExamplePatch{Metadata: readFields(r, applicableMeta(cfg, e), "meta.")}
	if v := r.PostFormValue("model_wrong"); v == "yes" || v == "no" {
		wrong := v == "yes"
		patch.ModelWrong = &wrong
	}
	updated, err := s.svc.UpdateExample(r.Context(), actor(r), e.ID, patch)
	var form Form
	if err != nil {
		// Problems with the explanations go next to them; anything else (not the writer's
		// example, retracted meanwhile) is the error page's.
		if !dynabench.IsCode(err, dynabench.EINVALID) || !form.Fail(err) {
			return err
		}
		return s.afterExample(w, r, e, form, "")
	}
	return s.afterExample(w, r, updated, form, "Saved. Thank you for explaining.")
}

func (s *Server) retractExample(w http.ResponseWriter, r *http.Request) error {
	if actor(r) == nil {
		s.toLogin(w, r)
		return nil
	}
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	e, err := s.svc.RetractExample(r.Context(), actor(r), id)
	if err != nil {
		return err
	}
	return s.afterExample(w, r, e, Form{}, "Retracted: this example no longer counts.")
}

func (s *Server) flagExample(w http.ResponseWriter, r *http.Request) error {
	if actor(r) == nil {
		s.toLogin(w, r)
		return nil
	}
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	e, err := s.svc.FlagExample(r.Context(), actor(r), id, strings.TrimSpace(r.PostFormValue("reason")))
	if err != nil {
		return err
	}
	return s.afterExample(w, r, e, Form{}, "Flagged for the task owners to review.")
}

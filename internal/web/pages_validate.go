package web

import (
	"net/http"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/service"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// validatePage is the data of the validate page: the next example and its context, with the
// model's answer hidden until the vote (as Dynabench does), and the answer to the last vote.
type validatePage struct {
	Base
	Form
	Task           *dynabench.Task
	ContentWarning string
	Example        *dynabench.Example
	ContextFields  []ContextField
	Inputs         []ShownInput
	Verdict        string
	Metadata       []FormField
	Nothing        string // why there is nothing to validate
	Last           *lastVote
	Owner          bool
}

// ShownInput is one of the writer's input values, as the validator reads it.
type ShownInput struct{ Label, Value string }

// lastVote is what the validator learns after voting.
type lastVote struct {
	Label  string
	Answer ModelAnswer
	Fooled *bool
	Status string
}

func (s *Server) validatePage(w http.ResponseWriter, r *http.Request) error {
	if actor(r) == nil {
		s.toLogin(w, r)
		return nil
	}
	p, cfg, err := s.newValidatePage(r)
	if err != nil {
		return err
	}
	if err := s.nextItem(r, p, cfg, nil); err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "validate", p)
}

func (s *Server) newValidatePage(r *http.Request) (*validatePage, *taskconfig.Config, error) {
	t, err := s.svc.VisibleTask(r.Context(), actor(r), r.PathValue("code"))
	if err != nil {
		return nil, nil, err
	}
	cfg, err := s.svc.Config(t)
	if err != nil {
		return nil, nil, err
	}
	p := &validatePage{Task: t, ContentWarning: cfg.ContentWarning}
	p.Title = "Validate · " + t.Name
	if p.Owner, err = s.svc.CanOwn(r.Context(), actor(r), t); err != nil {
		return nil, nil, err
	}
	return p, cfg, nil
}

// nextItem fills the page with the next example due for the actor, or says that none is.
func (s *Server) nextItem(r *http.Request, p *validatePage, cfg *taskconfig.Config, values map[string]any) error {
	e, c, err := s.svc.NextToValidate(r.Context(), actor(r), p.Task.Code, 0)
	if dynabench.IsCode(err, dynabench.ENOTFOUND) {
		p.Nothing = "Nothing is left for you to validate in this round. Thank you! Come back later, or write examples yourself."
		return nil
	} else if err != nil {
		return err
	}
	s.showItem(p, cfg, e, c, values)
	return nil
}

func (s *Server) showItem(p *validatePage, cfg *taskconfig.Config, e *dynabench.Example, c *dynabench.Context, values map[string]any) {
	p.Example = e
	p.ContextFields = contextFields(cfg, c, map[string]string{})
	for _, f := range cfg.Input {
		p.Inputs = append(p.Inputs, ShownInput{Label: fieldLabel(f), Value: valueText(e.Input[f.Name])})
	}
	selectFor := map[string]string{}
	p.Metadata = formFields(cfg.ValidateMetadata, "meta.", "metadata.", values, &p.Form)
	for _, f := range p.Metadata {
		if f.Type == taskconfig.TypeContextStringSelection && f.Ref != "" {
			selectFor[f.Ref] = f.ID
		}
	}
	p.ContextFields = contextFields(cfg, c, selectFor)
}

// validate records the vote, then shows the model's answer to it and the next item.
func (s *Server) validate(w http.ResponseWriter, r *http.Request) error {
	if actor(r) == nil {
		s.toLogin(w, r)
		return nil
	}
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	p, cfg, err := s.newValidatePage(r)
	if err != nil {
		return err
	}
	if err := r.ParseForm(); err != nil {
		return dynabench.Errorf(dynabench.EMALFORMED, "the form could not be read")
	}
	label := r.PostFormValue("label")
	mode := dynabench.ModeUser
	if r.PostFormValue("mode") == dynabench.ModeOwner {
		mode = dynabench.ModeOwner
	}
	// Only the fields that apply to the chosen label are sent: the others may still hold text the
	// validator typed before changing their mind.
	var applicable []taskconfig.Field
	for _, f := range cfg.ValidateMetadata {
		if f.ValidatedLabelCondition == "" || f.ValidatedLabelCondition == label {
			applicable = append(applicable, f)
		}
	}
	meta := readFields(r, applicable, "meta.")
	e, err := s.svc.Validate(r.Context(), actor(r), id, service.NewValidation{Label: label, Mode: mode, Metadata: meta})
	if err != nil {
		if !p.Fail(err) {
			return err
		}
		// Show the same item again with the vote and the typed reasons kept, when it is still due.
		p.Verdict = label
		next, c, nerr := s.svc.NextToValidate(r.Context(), actor(r), p.Task.Code, 0)
		if nerr == nil && next.ID == id {
			s.showItem(p, cfg, next, c, readFields(r, cfg.ValidateMetadata, "meta."))
		} else if err := s.nextItem(r, p, cfg, nil); err != nil {
			return err
		}
		return s.render(w, r, statusFor(err), "validate", p)
	}
	p.Last = &lastVote{Label: label, Fooled: e.ModelWrong, Status: e.Status}
	if e.ModelError == "" {
		p.Last.Answer = modelAnswer(cfg, e.ModelOutput)
	}
	if err := s.nextItem(r, p, cfg, nil); err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "validate", p)
}

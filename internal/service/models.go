package service

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"strings"

	"github.com/dynabench-go/dynabench"
)

// TaskModels lists the task's models the actor may see: published ones, and all of them for owners
// and for the models' own registrants.
func (s *Service) TaskModels(ctx context.Context, actor *dynabench.User, code string) ([]*dynabench.Model, error) {
	t, err := s.VisibleTask(ctx, actor, code)
	if err != nil {
		return nil, err
	}
	all, err := s.Store.FindModels(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	owner, err := s.CanOwn(ctx, actor, t)
	if err != nil {
		return nil, err
	}
	out := make([]*dynabench.Model, 0, len(all))
	for _, m := range all {
		if m.Published || owner || (actor != nil && m.UserID == actor.ID) {
			out = append(out, m)
		}
	}
	return out, nil
}

// NewModel is what a model builder registers: an HTTP model the platform will call.
type NewModel struct {
	Name    string
	Kind    string
	URL     string
	Options map[string]any
	Card    string
}

// Model option keys that may name a secret. The secret itself never reaches the database: the
// option names an environment variable or a file on the server, and only owners and admins may
// point at them, within a reserved namespace, so a user cannot make the server send its own
// secrets (say, DYNABENCH_ADMIN_PASSWORD) to a URL of their choosing.
const (
	OptionAPIKeyEnv  = "api_key_env"
	OptionAPIKeyFile = "api_key_file"
)

var (
	modelNameRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$`)
	apiKeyEnvRE  = regexp.MustCompile(`^DYNABENCH_MODEL_KEY_[A-Z0-9_]{1,64}$`)
	secretLikeRE = regexp.MustCompile(`(?i)(api[_-]?key|token|secret|password|authorization)$`)
)

// RegisterModel adds an HTTP model to the task (any user). Built-in models come from training.
func (s *Service) RegisterModel(ctx context.Context, actor *dynabench.User, code string, nm NewModel) (*dynabench.Model, error) {
	if err := requireUser(actor); err != nil {
		return nil, err
	}
	t, err := s.VisibleTask(ctx, actor, code)
	if err != nil {
		return nil, err
	}
	owner, err := s.CanOwn(ctx, actor, t)
	if err != nil {
		return nil, err
	}
	if p := checkNewModel(nm, owner); len(p) > 0 {
		return nil, dynabench.Invalid(p)
	}
	m := &dynabench.Model{TaskID: t.ID, UserID: actor.ID, Name: nm.Name, Kind: nm.Kind, URL: strings.TrimRight(nm.URL, "/"),
		Options: nm.Options, Card: nm.Card}
	if s.CheckModel != nil {
		// Build the adapter once now, so bad options are refused here rather than on every example.
		if err := s.CheckModel(ctx, m); err != nil {
			var de *dynabench.Error
			if errors.As(err, &de) && de.Code == dynabench.EINVALID {
				return nil, de
			}
			return nil, dynabench.FieldErrorf(dynabench.EINVALID, "options", "the adapter refused this model: %v", err)
		}
	}
	if err := s.checkSubmissionQuota(ctx, actor, t); err != nil {
		return nil, err
	}
	// The model and its queued evaluations are written together: a submission is never left unqueued.
	err = s.Store.InTx(ctx, func(tx dynabench.Store) error {
		if err := tx.CreateModel(ctx, m); err != nil {
			return err
		}
		ds, err := tx.FindDatasets(ctx, t.ID)
		if err != nil {
			return err
		}
		return s.queueEvaluations(ctx, tx, t, m, ds)
	})
	if err != nil {
		return nil, err
	}
	s.wakeWorkers()
	return m, nil
}

func checkNewModel(nm NewModel, owner bool) []dynabench.FieldError {
	var p []dynabench.FieldError
	add := func(field, msg string) { p = append(p, dynabench.FieldError{Field: field, Message: msg}) }
	if !modelNameRE.MatchString(nm.Name) {
		add("name", "1 to 100 letters, digits, '_', '.', ':' or '-', starting with a letter or digit")
	}
	switch nm.Kind {
	case dynabench.KindDynalab, dynabench.KindOpenAI, dynabench.KindHF, dynabench.KindKServe:
	case dynabench.KindBuiltin:
		add("kind", "built-in models are made by training: POST /api/v1/tasks/{code}/models/train")
	default:
		add("kind", "one of dynalab, openai, hf, kserve")
	}
	if u, err := url.Parse(nm.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		add("url", "an absolute http or https URL")
	} else if u.User != nil {
		add("url", "no credentials in the URL: use the api_key_env option")
	} else if len(nm.URL) > 2000 {
		add("url", "at most 2000 bytes")
	}
	if len(nm.Card) > 100000 {
		add("card", "at most 100000 bytes")
	}
	if b, err := json.Marshal(nm.Options); err != nil || len(b) > 16<<10 {
		add("options", "a JSON object of at most 16 KiB")
	}
	for k, v := range nm.Options {
		switch {
		case k == OptionAPIKeyEnv:
			name, _ := v.(string)
			if !owner {
				add("options."+k, "only the task's owners can give a model a key")
			} else if !apiKeyEnvRE.MatchString(name) {
				add("options."+k, "the name of an environment variable DYNABENCH_MODEL_KEY_<NAME>")
			}
		case k == OptionAPIKeyFile:
			add("options."+k, "not accepted over the API; use api_key_env")
		case secretLikeRE.MatchString(k):
			add("options."+k, "secrets are never stored: put the key in an environment variable DYNABENCH_MODEL_KEY_<NAME> and name it in api_key_env")
		}
	}
	return p
}

// Model returns a model to anyone when published, else to its registrant, the task's owners and admins.
func (s *Service) Model(ctx context.Context, actor *dynabench.User, id int64) (*dynabench.Model, *dynabench.Task, error) {
	m, err := s.Store.FindModelByID(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	t, err := s.Store.FindTaskByID(ctx, m.TaskID)
	if err != nil {
		return nil, nil, err
	}
	if m.Published || (actor != nil && actor.ID == m.UserID) {
		return m, t, nil
	}
	if ok, err := s.CanOwn(ctx, actor, t); err != nil {
		return nil, nil, err
	} else if !ok {
		return nil, nil, dynabench.Errorf(dynabench.ENOTFOUND, "model not found")
	}
	return m, t, nil
}

// HealthReporter is implemented by model resolvers that watch the calls they make.
type HealthReporter interface {
	ModelHealth(modelID int64) (dynabench.ModelHealth, bool)
}

// ModelHealth returns what the resolver has seen of the model's calls, when it keeps track.
func (s *Service) ModelHealth(modelID int64) (dynabench.ModelHealth, bool) {
	if h, ok := s.Models.(HealthReporter); ok {
		return h.ModelHealth(modelID)
	}
	return dynabench.ModelHealth{}, false
}

package web

import (
	"net/http"

	"github.com/dynabench-go/dynabench"
)

// taskCard is one task on the home page.
type taskCard struct {
	Code, Name, Goal string
	CurrentRound     int
	Collected        int64
	VMER             float64
	Hidden           bool
}

type homePage struct {
	Base
	Tasks []taskCard
}

func (s *Server) home(w http.ResponseWriter, r *http.Request) error {
	tasks, err := s.svc.Tasks(r.Context(), actor(r))
	if err != nil {
		return err
	}
	p := &homePage{}
	p.Title = "Tasks"
	for _, t := range tasks {
		card := taskCard{Code: t.Code, Name: t.Name, CurrentRound: t.CurrentRound, Hidden: t.Settings.Hidden}
		if cfg, err := s.svc.Config(t); err == nil {
			card.Goal = cfg.GoalMessage
		}
		_, rounds, err := s.svc.TaskRounds(r.Context(), actor(r), t.Code)
		if err != nil {
			return err
		}
		total := totals(rounds)
		card.Collected, card.VMER = total.Collected, total.VMER
		p.Tasks = append(p.Tasks, card)
	}
	return s.render(w, r, http.StatusOK, "home", p)
}

// totals sums the rounds' counters.
func totals(rounds []*dynabench.Round) dynabench.RoundStats {
	var t dynabench.RoundStats
	for _, r := range rounds {
		t.Collected += r.Stats.Collected
		t.Fooled += r.Stats.Fooled
		t.VerifiedFooled += r.Stats.VerifiedFooled
		t.Rejected += r.Stats.Rejected
	}
	t.Rates()
	return t
}

// roundRow is one round in the task page's table.
type roundRow struct {
	Number int
	Status string
	Stats  dynabench.RoundStats
	Models []string
}

type taskPage struct {
	Base
	Task           *dynabench.Task
	Goal           string
	Labels         []string
	ContentWarning string
	Rounds         []roundRow
	Chart          *Chart
	Cycle          *CycleChart // nil until a round is released
	Annotators     []dynabench.AnnotatorStats
	Owner          bool
}

func (s *Server) task(w http.ResponseWriter, r *http.Request) error {
	ctx, u := r.Context(), actor(r)
	t, rounds, err := s.svc.TaskRounds(ctx, u, r.PathValue("code"))
	if err != nil {
		return err
	}
	p := &taskPage{Task: t, Chart: roundChart(rounds)}
	p.Title = t.Name
	if cfg, err := s.svc.Config(t); err == nil {
		p.Goal, p.ContentWarning, p.Labels = cfg.GoalMessage, cfg.ContentWarning, cfg.Labels()
	}
	models, err := s.svc.TaskModels(ctx, u, t.Code)
	if err != nil {
		return err
	}
	names := map[int64]string{}
	for _, m := range models {
		names[m.ID] = m.Name
	}
	for _, rd := range rounds {
		row := roundRow{Number: rd.Number, Status: rd.Status, Stats: rd.Stats}
		row.Stats.Rates()
		for _, id := range rd.ModelIDs {
			if n, ok := names[id]; ok {
				row.Models = append(row.Models, n)
			}
		}
		p.Rounds = append(p.Rounds, row)
	}
	cycle, err := s.svc.RoundCycle(ctx, u, t.Code)
	if err != nil {
		return err
	}
	p.Cycle = cycleChart(cycle)
	if p.Annotators, err = s.svc.Annotators(ctx, t.Code, 0, 20); err != nil {
		return err
	}
	if p.Owner, err = s.svc.CanOwn(ctx, u, t); err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "task", p)
}

package simulate

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Context is a context as the loop hands it out.
type Context struct {
	ID     int64
	Fields map[string]any
	Tag    string
}

// Attempt is what a writer submits: the task's input fields (the label among them), the label it claims,
// the label that is true, and the strategy it used.
type Attempt struct {
	Input    map[string]any
	Label    string // the label submitted
	Gold     string // the true label; differs from Label when the writer slipped (Plan.MislabelRate)
	Strategy string
}

// Writer writes adversarial inputs for one task.
type Writer interface {
	// Write returns an attempt against the context in a round (1-based); rng makes it deterministic.
	Write(c Context, round int, rng *rand.Rand) (Attempt, error)
	// Strategies lists the strategies a round may use.
	Strategies(round int) []string
}

// strategy is one trick: from round minRound on, it turns a context text into an input and its label,
// or reports that it does not apply to this context.
type strategy struct {
	name     string
	minRound int
	label    string
	write    func(text string, c Context, rng *rand.Rand) (string, bool)
}

// scripted is a Writer made of strategies.
type scripted struct {
	task       string
	inputField string // the field the text goes in: hypothesis or statement
	labelField string
	strategies []strategy
}

// NewWriter returns the scripted writer for a demo task: "nli" or "sentiment".
func NewWriter(task string) (Writer, error) {
	switch task {
	case "nli":
		return &scripted{task: task, inputField: "hypothesis", labelField: "label", strategies: nliStrategies}, nil
	case "sentiment":
		return &scripted{task: task, inputField: "statement", labelField: "label", strategies: sentimentStrategies}, nil
	}
	return nil, fmt.Errorf("simulate: no scripted writer for task %q (have nli, sentiment)", task)
}

func (s *scripted) Strategies(round int) []string {
	var out []string
	for _, st := range s.strategies {
		if st.minRound <= round {
			out = append(out, st.name)
		}
	}
	return out
}

// Write picks a strategy that applies to the context, favouring those new in this round (weight 2): later
// rounds use more, and harder, tricks.
func (s *scripted) Write(c Context, round int, rng *rand.Rand) (Attempt, error) {
	text, _ := c.Fields["context"].(string)
	if text == "" {
		return Attempt{}, fmt.Errorf("simulate: context %d has no text in field \"context\"", c.ID)
	}
	text = strings.TrimSpace(text)
	var pool []int
	for i, st := range s.strategies {
		if st.minRound > round {
			continue
		}
		pool = append(pool, i)
		if st.minRound == round && round > 1 {
			pool = append(pool, i)
		}
	}
	rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	for _, i := range pool {
		st := s.strategies[i]
		if out, ok := st.write(text, c, rng); ok {
			return Attempt{
				Input: map[string]any{s.inputField: out, s.labelField: st.label},
				Label: st.label, Gold: st.label, Strategy: st.name,
			}, nil
		}
	}
	return Attempt{}, fmt.Errorf("simulate: no strategy applies to context %d", c.ID)
}

func pick(rng *rand.Rand, xs []string) string { return xs[rng.IntN(len(xs))] }

// sentenceBody returns a sentence without its final full stop.
func sentenceBody(s string) string { return strings.TrimRight(strings.TrimSpace(s), ".!") }

// lowerFirst lower-cases the first letter unless the first word looks like a name.
func lowerFirst(s string) string {
	w, _, _ := strings.Cut(s, " ")
	switch w {
	case "A", "An", "The", "Two", "Three", "Four", "Some", "Strong", "Construction", "Researchers", "Last",
		"We", "My", "Our":
		return strings.ToLower(s[:1]) + s[1:]
	}
	return s
}

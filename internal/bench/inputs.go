package bench

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// contextRef is a context as GET /api/v1/tasks/{code}/context hands it out.
type contextRef struct {
	ID      string         `json:"id"`
	Context map[string]any `json:"context"`
}

// payload is the body both targets receive: what an annotator submits.
type payload struct {
	ContextID string         `json:"context_id"`
	Input     map[string]any `json:"input"`
}

// inputs writes valid, varied inputs for a task from its config: text from a small vocabulary,
// a label drawn from the field's label set, an answer span cut from the context.
type inputs struct {
	fields []taskconfig.Field
}

func newInputs(cfg *taskconfig.Config) (*inputs, error) {
	for _, f := range cfg.Input {
		switch f.Type {
		case taskconfig.TypeString, taskconfig.TypeMulticlass, taskconfig.TypeMultilabel, taskconfig.TypeContextStringSelection:
		default:
			return nil, fmt.Errorf("bench: input field %q has type %q, which the load generator cannot fill", f.Name, f.Type)
		}
	}
	return &inputs{fields: cfg.Input}, nil
}

// body returns the JSON body of request seq of client i on context c. The same (i, seq) always
// gives the same body, so both targets can be sent identical work.
func (in *inputs) body(i, seq int, c contextRef) ([]byte, error) {
	rng := rand.New(rand.NewPCG(uint64(i)+1, uint64(seq)+1))
	p := payload{ContextID: c.ID, Input: make(map[string]any, len(in.fields))}
	for _, f := range in.fields {
		p.Input[f.Name] = in.value(rng, f, c)
	}
	return json.Marshal(p)
}

func (in *inputs) value(rng *rand.Rand, f taskconfig.Field, c contextRef) any {
	switch f.Type {
	case taskconfig.TypeMulticlass:
		return f.Labels[rng.IntN(len(f.Labels))]
	case taskconfig.TypeMultilabel:
		return []string{f.Labels[rng.IntN(len(f.Labels))]}
	case taskconfig.TypeContextStringSelection:
		s, _ := c.Context[f.ReferenceName].(string)
		return span(rng, s)
	}
	return sentence(rng)
}

var (
	subjects = []string{"A man", "A woman", "The children", "Two friends", "An old dog", "The driver", "A chef",
		"The teacher", "Nobody", "Everyone", "A tourist", "The band"}
	verbs = []string{"is holding", "is painting", "was watching", "never saw", "is carrying", "loved", "hated",
		"is waiting for", "forgot", "is repairing", "barely noticed", "is selling"}
	objects = []string{"an umbrella", "the bus", "a ladder", "the sea", "a birthday cake", "the movie",
		"a red bicycle", "the old piano", "a bag of apples", "the garden", "a letter", "the concert"}
	tails = []string{"", " in the rain", " at night", " after lunch", " for the third time", " without a word",
		" on the balcony", " with great joy", " reluctantly", " near the station"}
)

// sentence is a short, grammatical, varied sentence (12^3 * 10 variants plus a number).
func sentence(rng *rand.Rand) string {
	var b strings.Builder
	b.WriteString(subjects[rng.IntN(len(subjects))])
	b.WriteByte(' ')
	b.WriteString(verbs[rng.IntN(len(verbs))])
	b.WriteByte(' ')
	b.WriteString(objects[rng.IntN(len(objects))])
	b.WriteString(tails[rng.IntN(len(tails))])
	if rng.IntN(4) == 0 {
		b.WriteString(", " + strconv.Itoa(2+rng.IntN(40)) + " times")
	}
	b.WriteByte('.')
	return b.String()
}

// span cuts one to three whole words out of s: an answer that occurs in its context.
func span(rng *rand.Rand, s string) string {
	words := strings.Fields(s)
	if len(words) == 0 {
		return s
	}
	n := 1 + rng.IntN(min(3, len(words)))
	start := rng.IntN(len(words) - n + 1)
	return strings.Join(words[start:start+n], " ")
}

package training_test

// The retraining loop, end to end and deterministic: a scripted annotator writes round 1 of the
// sentiment and NLI demo tasks against the built-in model trained on the seed set, using the tricks a
// bag-of-n-grams model is known to miss (negation, sarcasm, numbers, contrast, reported opinions,
// high word overlap). Its gold labels come from its templates, and it keeps only the examples that
// fool the model, as the platform does. The examples go into a real store as verified, are read back
// with RoundSources, split 70/30 by key, and a model retrained on seed + round-1-train is compared
// with the seed-only model on round-1-held-out. Run with -v for the numbers.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
	"github.com/dynabench-go/dynabench/internal/training"
)

// candidate is one example the scripted annotator considers writing.
type candidate struct {
	family  string         // the trick it uses
	context map[string]any // the context it is written against
	input   map[string]any // the annotator's input, gold label included
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

var (
	posWords  = []string{"great", "excellent", "wonderful", "delightful", "fantastic", "good", "brilliant", "lovely"}
	negWords  = []string{"terrible", "awful", "boring", "disappointing", "bad", "dreadful", "dull", "poor"}
	problems  = []string{"an hour late", "broken", "cold", "cancelled at the last minute", "sold out", "twice the price"}
	thingsFor = map[string][]string{
		"movies": {"film", "movie"}, "food": {"meal", "soup", "pasta"}, "books": {"novel", "book"},
		"gadgets": {"phone", "laptop", "headphones"}, "hotels": {"hotel room", "hotel"}, "music": {"album", "concert"},
		"service": {"service", "staff"}, "travel": {"trip", "flight"}, "events": {"festival", "show"},
		"games": {"game"}, "health": {"clinic", "treatment"}, "education": {"course", "lecture"}, "shopping": {"shop", "store"},
	}
)

// sentimentCandidates writes n candidates per trick against the demo sentiment contexts.
func sentimentCandidates(t testing.TB, seed uint64, n int) []candidate {
	r := rand.New(rand.NewPCG(seed, 1))
	contexts := demoTask(t, "sentiment").Contexts
	tricks := map[string]func(thing string) (string, string){
		"negated positive": func(x string) (string, string) {
			return fmt.Sprintf(pick(r, []string{"The %s was not %s at all.", "I would not call the %s %s by any means."}), x, pick(r, posWords)), "negative"
		},
		"negated negative": func(x string) (string, string) {
			return fmt.Sprintf("Honestly, the %s was not %s at all, and I would happily go again.", x, pick(r, negWords)), "positive"
		},
		"sarcasm": func(x string) (string, string) {
			return fmt.Sprintf("Oh %s, the %s was %s again. %s", pick(r, []string{"great", "wonderful", "brilliant", "lovely"}), x,
				pick(r, problems), pick(r, []string{"Just perfect.", "Exactly what I wanted.", "Fantastic work, everyone."})), "negative"
		},
		"numbers": func(x string) (string, string) {
			if r.IntN(2) == 0 {
				return fmt.Sprintf("I would give the %s %d out of 10.", x, 1+r.IntN(3)), "negative"
			}
			return fmt.Sprintf("I would give the %s %d out of 10.", x, 8+r.IntN(3)), "positive"
		},
		"contrast": func(x string) (string, string) {
			if r.IntN(2) == 0 {
				return fmt.Sprintf("Everyone said the %s would be %s, but it was %s.", x, pick(r, negWords), pick(r, posWords)), "positive"
			}
			return fmt.Sprintf("Everyone said the %s would be %s, but it was %s.", x, pick(r, posWords), pick(r, negWords)), "negative"
		},
		"reported opinion": func(x string) (string, string) {
			return fmt.Sprintf(pick(r, []string{"The poster calls the %s %s, but I have not tried it yet.",
				"A review I skimmed called the %s %s; I have no opinion of my own yet."}), x, pick(r, append(posWords, negWords...))), "neutral"
		},
	}
	var out []candidate
	for _, family := range slices.Sorted(mapsKeys(tricks)) {
		for range n {
			c := pick(r, contexts)
			things, ok := thingsFor[c.Tag]
			if !ok {
				things = []string{"experience"}
			}
			text, label := tricks[family](pick(r, things))
			out = append(out, candidate{family, c.Context, map[string]any{"statement": text, "label": label}})
		}
	}
	return out
}

var (
	numberWords = []string{"two", "three", "four", "five", "six", "seven", "eight", "nine"}
	people      = []string{"children", "women", "men", "students", "tourists", "workers", "musicians"}
	activities  = []string{"playing football", "eating lunch", "reading books", "singing songs", "painting a wall", "flying kites"}
	places      = []string{"park", "garden", "square", "market", "schoolyard"}
)

// nliCandidates writes n candidates per trick, each against a premise of its own.
func nliCandidates(seed uint64, n int) []candidate {
	r := rand.New(rand.NewPCG(seed, 2))
	type slots struct {
		n                      int // index into numberWords: the count is n+2
		who, doing, where, num string
	}
	tricks := map[string]func(s slots) (string, string){
		"negation": func(s slots) (string, string) {
			return fmt.Sprintf(pick(r, []string{"The %[1]s are not %[2]s.", "No %[1]s are %[2]s in the %[3]s."}), s.who, s.doing, s.where), "contradictory"
		},
		"double negation": func(s slots) (string, string) {
			return fmt.Sprintf("It is not true that nobody is %s in the %s.", s.doing, s.where), "entailed"
		},
		"bigger count": func(s slots) (string, string) {
			m := s.n + 1 + r.IntN(len(numberWords)-s.n)
			return fmt.Sprintf("%s %s are %s in the %s.", capital(countWord(m)), s.who, s.doing, s.where), "contradictory"
		},
		"at least": func(s slots) (string, string) {
			if r.IntN(2) == 0 {
				return fmt.Sprintf("At least %d %s are %s.", 1+r.IntN(s.n+2), s.who, s.doing), "entailed"
			}
			return fmt.Sprintf("More than %d %s are %s.", s.n+2+r.IntN(4), s.who, s.doing), "contradictory"
		},
		"overlap but neutral": func(s slots) (string, string) {
			return fmt.Sprintf("The %s are %s in the %s %s.", s.who, s.doing, s.where,
				pick(r, []string{"because it is a holiday", "for the first time", "to raise money for charity", "before their exams"})), "neutral"
		},
		"no overlap": func(s slots) (string, string) {
			if r.IntN(2) == 0 {
				return fmt.Sprintf("The %s is empty.", s.where), "contradictory"
			}
			return fmt.Sprintf("There are people in the %s.", s.where), "entailed"
		},
	}
	var out []candidate
	for _, family := range slices.Sorted(mapsKeys(tricks)) {
		for range n {
			s := slots{n: r.IntN(len(numberWords) - 1), who: pick(r, people), doing: pick(r, activities), where: pick(r, places)}
			premise := fmt.Sprintf("%s %s are %s in the %s.", capital(numberWords[s.n]), s.who, s.doing, s.where)
			h, label := tricks[family](s)
			out = append(out, candidate{family, map[string]any{"context": premise}, map[string]any{"hypothesis": h, "label": label}})
		}
	}
	return out
}

// countWord is the word for the count whose index into numberWords is i (the count is i+2); past nine,
// the digits.
func countWord(i int) string {
	if i < len(numberWords) {
		return numberWords[i]
	}
	return fmt.Sprint(i + 2)
}

func capital(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// fools reports whether the model's label differs from the candidate's gold label.
func fools(t testing.TB, cfg *taskconfig.Config, p dynabench.Predictor, c candidate) bool {
	out, err := p.Predict(ctx, cfg.ModelInput(c.context, c.input))
	must(t, err)
	return out["label"] != c.input["label"]
}

func accuracy(t testing.TB, p dynabench.Predictor, rows []training.Example) float64 {
	if len(rows) == 0 {
		return 0
	}
	right := 0
	for _, r := range rows {
		out, err := p.Predict(ctx, r.Input)
		must(t, err)
		if out["label"] == r.Label {
			right++
		}
	}
	return float64(right) / float64(len(rows))
}

func foolingRate(t testing.TB, cfg *taskconfig.Config, p dynabench.Predictor, pool []candidate) float64 {
	n := 0
	for _, c := range pool {
		if fools(t, cfg, p, c) {
			n++
		}
	}
	return float64(n) / float64(len(pool))
}

func TestRetrainingLoop(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("trains a dozen models")
	}
	for _, tc := range []struct {
		code  string
		write func(seed uint64) []candidate
	}{
		{"sentiment", func(seed uint64) []candidate { return sentimentCandidates(t, seed, 60) }},
		{"nli", func(seed uint64) []candidate { return nliCandidates(seed, 60) }},
	} {
		t.Run(tc.code, func(t *testing.T) {
			t.Parallel()
			runLoop(t, tc.code, tc.write)
		})
	}
}

func runLoop(t *testing.T, code string, write func(seed uint64) []candidate) {
	cfg, seedSet := seedData(t, code)
	train := func(data training.Dataset) *training.Artifact {
		a, err := training.Train(ctx, cfg, data, training.Options{Task: code, Seed: 1}, nil)
		must(t, err)
		return a
	}
	inLoop := train(seedSet) // the model in the loop of round 1

	// Round 1: the annotator keeps what fools the model; validators verify it (the gold is right).
	e := newStoreEnv(t, code)
	r1 := e.round(t)
	pool := write(1)
	var kept []written
	var families []string
	for _, c := range pool {
		if fools(t, cfg, inLoop.Predictor(), c) {
			kept = append(kept, written{c.context, c.input, dynabench.StatusVerified})
			families = append(families, c.family)
		}
	}
	stored := e.write(t, r1, kept)
	familyOf := map[string]string{}
	for i, ex := range stored {
		familyOf[fmt.Sprintf("example:%d", ex.ID)] = families[i]
	}
	sources, err := training.RoundSources(ctx, e.store, cfg, []*dynabench.Round{r1}, nil)
	must(t, err)
	round1 := sources[0]
	r1Train, r1Held := training.Split(round1.Examples, 0.3)

	retrained := train(training.Dataset{Sources: []training.Source{seedSet.Sources[0], {Name: round1.Name, Examples: r1Train}}})
	_, seedHeld := training.Split(seedSet.Examples(), training.DefaultHeldOut)
	before, after := accuracy(t, inLoop.Predictor(), r1Held), accuracy(t, retrained.Predictor(), r1Held)
	seedBefore, seedAfter := accuracy(t, inLoop.Predictor(), seedHeld), accuracy(t, retrained.Predictor(), seedHeld)
	fresh := write(2) // the same annotator, a new day: fresh slot values, nothing filtered
	foolBefore, foolAfter := foolingRate(t, cfg, inLoop.Predictor(), fresh), foolingRate(t, cfg, retrained.Predictor(), fresh)

	t.Logf("%s: scripted annotator fooled the seed model with %d of %d candidates (MER %.2f); round 1 = %d verified: %d train, %d held out",
		code, len(kept), len(pool), float64(len(kept))/float64(len(pool)), len(round1.Examples), len(r1Train), len(r1Held))
	t.Logf("%s: accuracy on round-1 held-out: seed-only %.3f -> seed+round-1 %.3f", code, before, after)
	t.Logf("%s: accuracy on seed held-out (%d rows): seed-only %.3f -> seed+round-1 %.3f", code, len(seedHeld), seedBefore, seedAfter)
	t.Logf("%s: share of a fresh, unfiltered pool of %d candidates that fools the model: %.3f -> %.3f", code, len(fresh), foolBefore, foolAfter)

	// Unseen tricks: leave one family out of round-1 training and score on all of its round-1 rows.
	for _, family := range slices.Compact(slices.Clone(families)) {
		var keep, test []training.Example
		for _, ex := range round1.Examples {
			if familyOf[ex.Key] == family {
				test = append(test, ex)
			} else if !training.IsHeldOut(ex.Key, 0.3) {
				keep = append(keep, ex)
			}
		}
		m := train(training.Dataset{Sources: []training.Source{seedSet.Sources[0], {Name: "round:1", Examples: keep}}})
		t.Logf("%s: trick %-20q never trained on: %3d rows, accuracy seed-only %.3f -> seed+other tricks %.3f",
			code, family, len(test), accuracy(t, inLoop.Predictor(), test), accuracy(t, m.Predictor(), test))
	}

	if len(r1Held) < 20 {
		t.Fatalf("only %d held-out round-1 rows; the comparison means nothing", len(r1Held))
	}
	if after < before+0.3 {
		t.Errorf("retraining on round 1 lifted held-out round-1 accuracy only from %.3f to %.3f", before, after)
	}
	if seedAfter < seedBefore-0.15 {
		t.Errorf("retraining cost too much on the seed held-out rows: %.3f -> %.3f", seedBefore, seedAfter)
	}
}

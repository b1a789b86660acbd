package builtin_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench/internal/builtin"
)

// toyBios are short biographies with who/when/where/how-many questions; the test half uses unseen people,
// towns, years and numbers, so only answer-type and overlap cues carry over.
func toyBios() (train, test []builtin.TrainingExample) {
	people := []string{"Anna Berg", "Tomas Kell", "Lena Ostrow", "Piet Marsh", "Ruth Alden", "Oskar Vinter",
		"Mira Sol", "Jon Tarrant", "Eva Lund", "Karl Brenner", "Ines Roe", "Felix Dorn"}
	towns := []string{"Harlow", "Kellen", "Porvik", "Tolle", "Morrow", "Sarra", "Lusk", "Brandt", "Vik", "Stel", "Grell", "Ardent"}
	for i, who := range people {
		year, town, books := 1900+7*i, towns[(i*5)%len(towns)], 3+i
		first := strings.Fields(who)[0]
		c := fmt.Sprintf("%s is a writer from the north. %s was born in %d in the town of %s. She has written %d books about the sea and lives near the old harbour.",
			who, first, year, town, books)
		in := func(q string) map[string]any { return map[string]any{"context": c, "question": q} }
		exs := []builtin.TrainingExample{
			{Input: in(fmt.Sprintf("When was %s born?", first)), Label: fmt.Sprint(year)},
			{Input: in(fmt.Sprintf("Where was %s born?", first)), Label: town},
			{Input: in(fmt.Sprintf("How many books has %s written?", first)), Label: fmt.Sprint(books)},
			{Input: in("Who is a writer from the north?"), Label: who},
		}
		if i < 8 {
			train = append(train, exs...)
		} else {
			test = append(test, exs...)
		}
	}
	return train, test
}

func trainToySpan(t testing.TB, seed uint64) *builtin.SpanModel {
	t.Helper()
	train, _ := toyBios()
	m, err := builtin.TrainSpanModel(train, builtin.SpanOptions{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSpanModelDeterministic(t *testing.T) {
	t.Parallel()
	a, b := marshal(t, trainToySpan(t, 5)), marshal(t, trainToySpan(t, 5))
	if !bytes.Equal(a, b) {
		t.Fatal("same data and seed gave different weights")
	}
}

func TestSpanModelLearnsAnswerTypes(t *testing.T) {
	t.Parallel()
	m := trainToySpan(t, 1)
	_, test := toyBios()
	for _, ex := range test {
		out, err := m.Predict(context.Background(), ex.Input)
		if err != nil {
			t.Fatal(err)
		}
		conf := out["conf"].(float64)
		if out["answer"] != ex.Label || conf <= 0 || conf > 1 {
			t.Errorf("%q: got %q (conf %.2f), want %q", ex.Input["question"], out["answer"], conf, ex.Label)
		}
	}
}

func TestSpanModelAnswersAreSubstrings(t *testing.T) {
	t.Parallel()
	m := trainToySpan(t, 1)
	for _, c := range []string{"x", "Ünïcødé names like Zoë Ørsted were born in 1990!", "A.B.C. 1,200... --- \n\n end", "one"} {
		out, err := m.Predict(context.Background(), map[string]any{"context": c, "question": "When was Zoë born?"})
		if err != nil {
			t.Fatal(err)
		}
		if a := out["answer"].(string); a == "" || !strings.Contains(c, a) {
			t.Errorf("answer %q is not in %q", a, c)
		}
	}
}

func TestSpanModelRoundTrip(t *testing.T) {
	t.Parallel()
	m := trainToySpan(t, 2)
	data := marshal(t, m)
	m2, err := builtin.UnmarshalSpanModel(data)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, marshal(t, m2)) {
		t.Error("re-marshalled bytes differ")
	}
	_, test := toyBios()
	for _, ex := range test {
		a, _ := m.Predict(context.Background(), ex.Input)
		b, _ := m2.Predict(context.Background(), ex.Input)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%v before, %v after", a, b)
		}
	}
}

func TestUnmarshalSpanModelGarbage(t *testing.T) {
	t.Parallel()
	train, _ := toyBios()
	m, err := builtin.TrainSpanModel(train[:4], builtin.SpanOptions{Buckets: 64})
	if err != nil {
		t.Fatal(err)
	}
	data := marshal(t, m)
	for n := range len(data) {
		if _, err := builtin.UnmarshalSpanModel(data[:n]); err == nil {
			t.Fatalf("no error for %d of %d bytes", n, len(data))
		}
	}
	for i := range data {
		bad := bytes.Clone(data)
		bad[i] ^= 0x5a
		builtin.UnmarshalSpanModel(bad)
	}
	if _, err := builtin.UnmarshalClassifier(data); err == nil {
		t.Error("a span model decoded as a classifier")
	}
}

func TestSpanModelBadInputs(t *testing.T) {
	t.Parallel()
	m := trainToySpan(t, 1)
	for name, in := range badInputs {
		out, err := m.Predict(context.Background(), in)
		if out != nil {
			t.Errorf("%s: output %v", name, out)
		}
		checkInvalid(t, name, err)
	}
	for _, c := range []string{"", "   ", "... !!! ???", "the of and"} { // nothing to answer with
		_, err := m.Predict(context.Background(), map[string]any{"context": c, "question": "Who?"})
		checkInvalid(t, fmt.Sprintf("context %q", c), err)
	}
}

func TestTrainSpanModelRejectsBadInput(t *testing.T) {
	t.Parallel()
	if _, err := builtin.TrainSpanModel(nil, builtin.SpanOptions{}); err == nil {
		t.Error("no error without examples")
	}
	train, _ := toyBios()
	if _, err := builtin.TrainSpanModel(train, builtin.SpanOptions{MaxSpanTokens: 100}); err == nil {
		t.Error("no error for MaxSpanTokens 100")
	}
	bad := []builtin.TrainingExample{{Input: map[string]any{"context": "Anna was born in 1900."}, Label: "1900"}}
	if _, err := builtin.TrainSpanModel(bad, builtin.SpanOptions{}); err == nil {
		t.Error("no error for an example without a question")
	}
	absent := []builtin.TrainingExample{{Input: map[string]any{"context": "Anna was born in 1900.", "question": "When?"}, Label: "Paris"}}
	if _, err := builtin.TrainSpanModel(absent, builtin.SpanOptions{}); err == nil {
		t.Error("no error when no answer can be found in its context")
	}
}

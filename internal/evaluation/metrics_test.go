package evaluation

import (
	"math"
	"reflect"
	"testing"
)

const eps = 1e-9

func near(a, b float64) bool { return math.Abs(a-b) <= eps }

func TestAccuracy(t *testing.T) {
	got, err := Accuracy([]string{"a", "b", "c", "a"}, []string{"a", "c", "c", "b"})
	if err != nil || !near(got, 0.5) {
		t.Fatalf("Accuracy = %v, %v; want 0.5", got, err)
	}
	if _, err := Accuracy([]string{"a"}, nil); err == nil {
		t.Error("length mismatch: want error")
	}
	if _, err := Accuracy(nil, nil); err != ErrEmpty {
		t.Errorf("empty: err = %v, want ErrEmpty", err)
	}
}

func TestMacroF1(t *testing.T) {
	cases := []struct {
		name             string
		gold, pred, labs []string
		want             float64
	}{
		// a: TP 1 (ex 0), FN 1 (ex 1), FP 1 (ex 3) → 2/(2+1+1) = 1/2
		// b: TP 1 (ex 2), FP 1 (ex 1)              → 2/3
		// c: FN 1 (ex 3)                            → 0
		// d: never gold nor predicted              → excluded
		// macro = (1/2 + 2/3 + 0)/3 = 7/18
		{"hand", []string{"a", "a", "b", "c"}, []string{"a", "b", "b", "a"}, []string{"a", "b", "c", "d"}, 7.0 / 18},
		// b's gold example predicted as out-of-set "z": b has FN 1 → 0; a → 1.
		{"out of set pred", []string{"a", "b"}, []string{"a", "z"}, []string{"a", "b"}, 0.5},
		// a: FN 1 (gold a, pred x), FP 1 (gold x, pred a) → 0.
		{"out of set gold", []string{"a", "x"}, []string{"x", "a"}, []string{"a"}, 0},
		{"perfect", []string{"a", "b"}, []string{"a", "b"}, []string{"a", "b", "c"}, 1},
	}
	for _, c := range cases {
		got, err := MacroF1(c.gold, c.pred, c.labs)
		if err != nil || !near(got, c.want) {
			t.Errorf("%s: MacroF1 = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	if _, err := MacroF1([]string{"a"}, []string{"a"}, []string{"a", "a"}); err == nil {
		t.Error("duplicate label: want error")
	}
}

func TestMacroF1Counts(t *testing.T) {
	// Multiplicities must equal explicitly duplicating the examples.
	lp, _ := EncodeLabels([]string{"a", "a", "b", "c", "b"}, []string{"a", "b", "b", "a", "c"}, []string{"a", "b", "c"})
	counts := []float64{2, 0, 1, 3, 1}
	var idx []int
	for i, c := range counts {
		for range int(c) {
			idx = append(idx, i)
		}
	}
	want := lp.Subset(idx).MacroF1()
	got := lp.macroF1(counts, make([]float64, 9))
	if !near(got, want) {
		t.Fatalf("weighted macro-F1 %v, duplicated %v", got, want)
	}
}

func TestSquad(t *testing.T) {
	golds := [][]string{{"the Cat", "dog"}, {"cat", "dog"}, {}, {}, {"Paris"}}
	pred := []string{"cat", "big dog", "", "something", "London"}
	em, err := SquadEMScores(golds, pred)
	if err != nil {
		t.Fatal(err)
	}
	// "cat" = normalised "the Cat"; no gold answer = unanswerable, so ""
	// matches and "something" does not.
	if want := []float64{1, 0, 1, 0, 0}; !reflect.DeepEqual(em, want) {
		t.Errorf("EM scores %v, want %v", em, want)
	}
	f1, _ := SquadF1Scores(golds, pred)
	// "big dog" vs "dog": P = 1/2, R = 1 → F1 = 2/3 (max over answers; vs
	// "cat" it is 0).
	want := []float64{1, 2.0 / 3, 1, 0, 0}
	for i := range want {
		if !near(f1[i], want[i]) {
			t.Errorf("F1[%d] = %v, want %v", i, f1[i], want[i])
		}
	}
	if m, _ := SquadF1(golds, pred); !near(m, (1+2.0/3+1)/5) {
		t.Errorf("SquadF1 = %v", m)
	}
	if m, _ := SquadEM(golds, pred); !near(m, 0.4) {
		t.Errorf("SquadEM = %v", m)
	}
}

func TestByTag(t *testing.T) {
	tags := [][]string{{"x"}, {"x", "y"}, nil, {"y", "y"}}
	groups := GroupByTag(tags)
	if want := map[string][]int{"x": {0, 1}, "y": {1, 3}}; !reflect.DeepEqual(groups, want) {
		t.Fatalf("GroupByTag = %v, want %v", groups, want)
	}
	acc := []float64{1, 0, 1, 1}
	by := ByTag(tags, func(idx []int) float64 { return MeanOver(acc, idx) })
	if !near(by["x"], 0.5) || !near(by["y"], 0.5) || len(by) != 2 {
		t.Errorf("ByTag = %v", by)
	}
	if got := Tags(by); !reflect.DeepEqual(got, []string{"x", "y"}) {
		t.Errorf("Tags = %v", got)
	}
	lp, _ := EncodeLabels([]string{"a", "b", "a", "b"}, []string{"a", "a", "a", "b"}, []string{"a", "b"})
	f1 := ByTag(tags, func(idx []int) float64 { return lp.Subset(idx).MacroF1() })
	// x: examples 0,1: gold a,b pred a,a → a: TP1 FP1 → 2/3; b: FN1 → 0 → 1/3.
	if !near(f1["x"], 1.0/3) {
		t.Errorf("macro-F1 by tag x = %v, want 1/3", f1["x"])
	}
}

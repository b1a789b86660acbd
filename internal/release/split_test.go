package release

import (
	"errors"
	"math"
	"strconv"
	"testing"
)

func TestSplitIsStableAndKeyed(t *testing.T) {
	t.Parallel()
	key, other := []byte("task key"), []byte("other key")
	differ := 0
	for i := range 1000 {
		id := strconv.Itoa(i)
		a, err := Split(id, key, DefaultRatios)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := Split(id, key, DefaultRatios); a != b {
			t.Fatalf("id %s: %s then %s", id, a, b)
		}
		if b, _ := Split(id, other, DefaultRatios); a != b {
			differ++
		}
	}
	if differ < 100 {
		t.Fatalf("another key moved only %d of 1000 ids: the key is not used", differ)
	}
	// Pinned values: the hash is documented, so it must not change silently.
	for id, want := range map[string]string{"1": Train, "9": Dev, "22": Test, "47": Test} {
		if got, _ := Split(id, key, DefaultRatios); got != want {
			t.Errorf("Split(%q) = %s, want %s", id, got, want)
		}
	}
}

func TestSplitRatiosOn100kIDs(t *testing.T) {
	t.Parallel()
	for _, r := range []Ratios{DefaultRatios, {0.6, 0.2, 0.2}, {1, 0, 0}, {0, 0, 1}, {0.5, 0.5, 0}} {
		counts := map[string]int{}
		const n = 100_000
		for i := range n {
			s, err := Split("ex-"+strconv.Itoa(i), []byte("k"), r)
			if err != nil {
				t.Fatal(err)
			}
			counts[s]++
		}
		for s, want := range map[string]float64{Train: r.Train, Dev: r.Dev, Test: r.Test} {
			got := float64(counts[s]) / n
			// 5 standard deviations of a binomial share at n = 100k is at most 0.0079.
			if math.Abs(got-want) > 0.008 || (want == 0 && counts[s] > 0) {
				t.Errorf("ratios %+v: %s share %.4f, want %.2f", r, s, got, want)
			}
		}
	}
}

func TestAddingExamplesNeverMovesOldOnes(t *testing.T) {
	t.Parallel()
	key := []byte("k")
	before := map[string]string{}
	for i := range 5000 {
		id := strconv.Itoa(i)
		before[id], _ = Split(id, key, DefaultRatios)
	}
	// A release of the first 5000 and a release of 20000 agree on the first 5000: Split sees one id.
	for i := range 20000 {
		id := strconv.Itoa(i)
		s, _ := Split(id, key, DefaultRatios)
		if old, ok := before[id]; ok && old != s {
			t.Fatalf("id %s moved from %s to %s", id, old, s)
		}
	}
}

func TestSplitRejectsBadRatios(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		r     Ratios
		field string
	}{
		{Ratios{0.8, 0.1, 0.2}, "ratios"},
		{Ratios{0.5, 0.5, 0.5}, "ratios"},
		{Ratios{1.2, -0.1, -0.1}, "ratios.train"},
		{Ratios{0.9, -0.1, 0.2}, "ratios.dev"},
		{Ratios{0.5, 0.5, math.NaN()}, "ratios.test"},
		{Ratios{}, "ratios"},
	} {
		_, err := Split("1", nil, c.r)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: got %v, want a FieldError on %s", c.r, err, c.field)
		}
	}
	if _, err := Split("", nil, DefaultRatios); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty id: %v", err)
	}
}

package evaluation

import (
	"math/rand/v2"
	"testing"
)

func TestFastPathsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 63, 64, 65, 200} {
		scores := make([]float64, n)
		lp := LabelPairs{Gold: make([]int32, n), Pred: make([]int32, n), NumLabels: 4}
		for i := range scores {
			scores[i] = float64(rng.IntN(2))
			lp.Gold[i], lp.Pred[i] = int32(rng.IntN(5)-1), int32(rng.IntN(5)-1)
		}
		bs, ok := packBinary(scores)
		if !ok {
			t.Fatal("packBinary refused 0/1 scores")
		}
		lm := newLabelMasks(&lp)
		var planes [][]uint64
		for trial := 0; trial < 20; trial++ {
			ci, cf := make([]int32, n), make([]float64, n)
			for range n {
				e := rng.IntN(n)
				ci[e]++
				cf[e]++
			}
			if trial == 0 {
				clear(ci)
				clear(cf)
			}
			planes = countPlanes(ci, planes)
			if got, want := float64(popDot(planes, bs)), dot(cf, scores); got != want {
				t.Fatalf("n=%d popDot %v, dot %v", n, got, want)
			}
			if got, want := lm.macroF1(planes), lp.macroF1(cf, make([]float64, 12)); got != want {
				t.Fatalf("n=%d macroF1 bits %v, direct %v", n, got, want)
			}
		}
	}
	if _, ok := packBinary([]float64{0, 0.5}); ok {
		t.Error("packBinary accepted 0.5")
	}
}

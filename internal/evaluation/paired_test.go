package evaluation

import (
	"math"
	"testing"
)

func TestMcNemarExact(t *testing.T) {
	cases := []struct {
		b, c int
		want float64
	}{
		// 2·(C(12,0)+C(12,1)+C(12,2))/2^12 = 2·(1+12+66)/4096 = 158/4096
		{10, 2, 158.0 / 4096},
		{2, 10, 158.0 / 4096},
		// n = 6: 2·(C(6,0)+C(6,1))/2^6 = 2·7/64 = 14/64
		{5, 1, 14.0 / 64},
		// n = 3: 2·C(3,0)/2^3 = 2/8
		{3, 0, 0.25},
		// b = c = 3: 2·(1+6+15+20)/64 = 84/64 > 1 → 1
		{3, 3, 1},
		{0, 0, 1},
	}
	for _, c := range cases {
		got, err := McNemarExact(c.b, c.c)
		if err != nil || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("McNemarExact(%d,%d) = %v, %v; want %v", c.b, c.c, got, err, c.want)
		}
	}
	// Large counts stay finite: b=600, c=400 is very significant.
	if p, _ := McNemarExact(600, 400); !(p > 0 && p < 1e-9) {
		t.Errorf("McNemarExact(600,400) = %v", p)
	}
	if _, err := McNemarExact(-1, 2); err == nil {
		t.Error("negative: want error")
	}
}

func TestMcNemar(t *testing.T) {
	a := []bool{true, true, true, false, false, true}
	b := []bool{true, false, false, true, false, false}
	// b: A right B wrong at 1, 2, 5 → 3; c: A wrong B right at 3 → 1.
	// p = 2·(C(4,0)+C(4,1))/16 = 10/16.
	r, err := McNemar(a, b)
	if err != nil || r.B != 3 || r.C != 1 || math.Abs(r.P-10.0/16) > 1e-12 {
		t.Errorf("McNemar = %+v, %v", r, err)
	}
	if _, err := McNemar(a, b[:2]); err == nil {
		t.Error("length mismatch: want error")
	}
}

func TestPairedBootstrap(t *testing.T) {
	a := []float64{1, 1, 1, 1, 1, 1, 1, 1}
	zero := make([]float64, len(a))
	// Every resampled difference is exactly 1: |1 − 1| ≥ 1 never holds,
	// P = 1/(B+1).
	r, err := PairedBootstrap(a, zero, 999, 5)
	if err != nil || r.Diff != 1 || r.P != 1.0/1000 || r.CI != (Interval{1, 1}) {
		t.Errorf("PairedBootstrap = %+v, %v", r, err)
	}
	// Identical models: δ = 0 and |δ*| ≥ 0 always, P = 1.
	r, _ = PairedBootstrap(a, a, 100, 5)
	if r.Diff != 0 || r.P != 1 {
		t.Errorf("identical: %+v", r)
	}
	// A noisy, small difference is not significant.
	x := []float64{1, 0, 1, 0, 1, 0, 1, 1, 0, 1}
	y := []float64{1, 1, 0, 0, 1, 0, 1, 0, 1, 1}
	r, _ = PairedBootstrap(x, y, 1000, 9)
	if r.P < 0.2 || !(r.CI[0] < 0 && r.CI[1] > 0) {
		t.Errorf("noisy: %+v", r)
	}
	r2, _ := PairedBootstrap(x, y, 1000, 9)
	if r2 != r {
		t.Error("not deterministic")
	}
}

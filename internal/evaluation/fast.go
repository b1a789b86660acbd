package evaluation

import "math/bits"

// Fast paths for the bootstrap. A resample is given as per-example
// multiplicities; binary score vectors (accuracy, EM) and label pairs
// (macro-F1) are packed into bitsets, and the multiplicities into bit
// planes (plane b holds bit b of every count), so that
// Σ_e count_e·s_e = Σ_b 2^b·popcount(plane_b & s). All sums are whole
// numbers, so the results equal the plain float computations exactly.

// packBinary packs s into a bitset if every score is 0 or 1.
func packBinary(s []float64) ([]uint64, bool) {
	out := make([]uint64, (len(s)+63)/64)
	for i, x := range s {
		switch x {
		case 1:
			out[i/64] |= 1 << (i % 64)
		case 0:
		default:
			return nil, false
		}
	}
	return out, true
}

// countPlanes fills planes with the bit planes of counts and returns the
// planes in use.
func countPlanes(counts []int32, planes [][]uint64) [][]uint64 {
	maxc := int32(0)
	for _, c := range counts {
		maxc = max(maxc, c)
	}
	nb := bits.Len32(uint32(maxc))
	for len(planes) < nb {
		planes = append(planes, make([]uint64, (len(counts)+63)/64))
	}
	planes = planes[:nb]
	for _, p := range planes {
		clear(p)
	}
	for i, c := range counts {
		for b := 0; c != 0; b, c = b+1, c>>1 {
			if c&1 != 0 {
				planes[b][i/64] |= 1 << (i % 64)
			}
		}
	}
	return planes
}

// popDot is Σ_e count_e·[e ∈ mask] given the count planes.
func popDot(planes [][]uint64, mask []uint64) int {
	total := 0
	for b, p := range planes {
		p = p[:len(mask)]
		c := 0
		for w, m := range mask {
			c += bits.OnesCount64(p[w] & m)
		}
		total += c << b
	}
	return total
}

// labelMasks holds, per label l of a LabelPairs, the examples where l is
// gold, where it is predicted, and where it is both.
type labelMasks struct {
	gold, pred, correct [][]uint64
}

func newLabelMasks(lp *LabelPairs) labelMasks {
	L, words := lp.NumLabels, (lp.Len()+63)/64
	lm := labelMasks{make([][]uint64, L), make([][]uint64, L), make([][]uint64, L)}
	for l := 0; l < L; l++ {
		lm.gold[l], lm.pred[l], lm.correct[l] = make([]uint64, words), make([]uint64, words), make([]uint64, words)
	}
	for i, g := range lp.Gold {
		p, bit := lp.Pred[i], uint64(1)<<(i%64)
		if g >= 0 {
			lm.gold[g][i/64] |= bit
		}
		if p >= 0 {
			lm.pred[p][i/64] |= bit
		}
		if g >= 0 && g == p {
			lm.correct[g][i/64] |= bit
		}
	}
	return lm
}

// macroF1 is LabelPairs.macroF1 under the given count planes:
// per label 2·TP/(2·TP+FP+FN) = 2·TP/(#gold + #pred).
func (lm labelMasks) macroF1(planes [][]uint64) float64 {
	sum, k := 0.0, 0
	for l := range lm.gold {
		d := popDot(planes, lm.gold[l]) + popDot(planes, lm.pred[l])
		if d == 0 {
			continue
		}
		sum += 2 * float64(popDot(planes, lm.correct[l])) / float64(d)
		k++
	}
	if k == 0 {
		return 0
	}
	return sum / float64(k)
}

package builtin

import (
	"cmp"
	"math"
	"slices"
)

// feat is one non-zero entry of a sparse feature vector.
type feat struct {
	idx uint32
	val float64
}

// vecBuilder assembles a sparse vector from groups of hashed indicator features. Each group is merged (a
// repeated feature counts) and optionally scaled to unit length, so a long text's thousands of character
// n-grams do not drown out its handful of pair cues.
type vecBuilder struct {
	buckets uint64
	raw     []uint32
	out     []feat
}

func newVecBuilder(buckets int) *vecBuilder { return &vecBuilder{buckets: uint64(buckets)} }

// add counts one occurrence of the feature with hash key in the open group.
func (b *vecBuilder) add(key uint64) { b.raw = append(b.raw, uint32(key%b.buckets)) }

// closeGroup moves the open group into the vector, scaled to length norm if norm > 0.
func (b *vecBuilder) closeGroup(norm float64) {
	if len(b.raw) == 0 {
		return
	}
	slices.Sort(b.raw)
	start := len(b.out)
	for _, idx := range b.raw {
		if n := len(b.out); n > start && b.out[n-1].idx == idx {
			b.out[n-1].val++
			continue
		}
		b.out = append(b.out, feat{idx, 1})
	}
	b.raw = b.raw[:0]
	if norm > 0 {
		scale(b.out[start:], norm)
	}
}

func scale(fs []feat, norm float64) {
	var ss float64
	for _, f := range fs {
		ss += f.val * f.val
	}
	inv := norm / math.Sqrt(ss)
	for i := range fs {
		fs[i].val *= inv
	}
}

// finish returns the vector sorted by index with colliding entries (from different groups) summed.
func (b *vecBuilder) finish() []feat {
	b.closeGroup(0)
	slices.SortStableFunc(b.out, func(x, y feat) int { return cmp.Compare(x.idx, y.idx) })
	out := b.out[:0]
	for _, f := range b.out {
		if n := len(out); n > 0 && out[n-1].idx == f.idx {
			out[n-1].val += f.val
			continue
		}
		out = append(out, f)
	}
	return out
}

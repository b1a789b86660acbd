package builtin

import "math"

// adagrad is the optimiser both models train with: per-weight step sizes that shrink with the squared
// gradients seen so far, so rare n-grams still move while frequent ones settle. L2 regularisation is applied
// to the weights an example touches, the usual sparse approximation.
type adagrad struct {
	w, sumSq []float64
	rate, l2 float64
}

func newAdagrad(n int, rate, l2 float64) *adagrad {
	return &adagrad{w: make([]float64, n), sumSq: make([]float64, n), rate: rate, l2: l2}
}

// step applies the loss gradient g to weight i.
func (a *adagrad) step(i int, g float64) {
	g += a.l2 * a.w[i]
	if g == 0 {
		return
	}
	a.sumSq[i] += g * g
	a.w[i] -= a.rate * g / math.Sqrt(a.sumSq[i])
}

// softmax turns scores into probabilities in place.
func softmax(s []float64) {
	m := math.Inf(-1)
	for _, v := range s {
		m = max(m, v)
	}
	var sum float64
	for i, v := range s {
		s[i] = math.Exp(v - m)
		sum += s[i]
	}
	for i := range s {
		s[i] /= sum
	}
}

// argmax returns the first index of the largest value.
func argmax(s []float64) int {
	best := 0
	for i, v := range s {
		if v > s[best] {
			best = i
		}
	}
	return best
}

package evaluation

import "testing"

// BenchmarkLeaderboard100x10: 100 models × 10 datasets × 4 metrics (two
// resampled per-example means, one macro-F1 from label pairs, one fixed
// value), 500 examples per dataset, 1,000 paired bootstrap resamples.
func BenchmarkLeaderboard100x10(b *testing.B) {
	in := synth(100, 10, 500, 1)
	b.ResetTimer()
	for b.Loop() {
		if _, err := ComputeLeaderboard(in, BootstrapOptions{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLeaderboard100x10AllResampled: the same with all four metrics
// per-example score vectors (the worst case).
func BenchmarkLeaderboard100x10AllResampled(b *testing.B) {
	in := synth(100, 10, 500, 1)
	for i := range in.Samples {
		for d := range in.Samples[i] {
			s := in.Samples[i][d]
			s[1] = &Sample{Scores: s[0].Scores}
			s[3] = &Sample{Scores: s[2].Scores}
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := ComputeLeaderboard(in, BootstrapOptions{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

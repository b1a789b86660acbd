package training_test

// Training cost and prediction latency of the built-in models, on synthetic data generated
// deterministically. Run, e.g.:
//
//	go test -run '^$' -bench 'Train' -benchtime 1x ./internal/training/
//	go test -run '^$' -bench 'Predict' ./internal/training/
//
// Besides ns/op, B/op and allocs/op, the training benchmarks report peak-heap-MB (the largest live
// heap seen by a 5 ms sampler during one training), model-MB (the artifact file) and rows/s; the
// prediction benchmarks report p50-µs and p99-µs per call.

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
	"github.com/dynabench-go/dynabench/internal/training"
)

// syntheticWords is a vocabulary of pronounceable pseudo-words.
func syntheticWords(r *rand.Rand, n int) []string {
	syll := []string{"ka", "lo", "mi", "ne", "tu", "ra", "shi", "po", "vel", "dan", "mor", "gi", "set", "ul", "bra", "ion"}
	words := make([]string, n)
	for i := range words {
		var b strings.Builder
		for range 2 + r.IntN(2) {
			b.WriteString(syll[r.IntN(len(syll))])
		}
		words[i] = b.String()
	}
	return words
}

// syntheticSentiment returns n labelled statements for the sentiment config: 12 to 20 words each, a
// third of them drawn from 60 words indicative of the label, and 10% of labels flipped at random.
func syntheticSentiment(n int) []training.Example {
	r := rand.New(rand.NewPCG(42, uint64(n)))
	vocab := syntheticWords(r, 5000)
	labels := []string{"positive", "negative", "neutral"}
	cue := map[string][]string{}
	for i, l := range labels {
		cue[l] = vocab[i*60 : (i+1)*60]
	}
	rows := make([]training.Example, n)
	for i := range rows {
		label := labels[r.IntN(3)]
		words := make([]string, 12+r.IntN(9))
		for j := range words {
			if r.IntN(3) == 0 {
				words[j] = cue[label][r.IntN(60)]
			} else {
				words[j] = vocab[180+r.IntN(len(vocab)-180)]
			}
		}
		if r.IntN(10) == 0 {
			label = labels[r.IntN(3)]
		}
		rows[i] = training.Example{Key: fmt.Sprintf("syn:%d", i), Input: map[string]any{"statement": strings.Join(words, " ") + "."}, Label: label}
	}
	return rows
}

// syntheticQA returns n questions about synthetic five-sentence passages, each answerable by a span.
func syntheticQA(n int) []training.Example {
	r := rand.New(rand.NewPCG(43, uint64(n)))
	names := syntheticWords(r, 400)
	rows := make([]training.Example, n)
	for i := range rows {
		who, town, river := capital(names[r.IntN(400)]), capital(names[r.IntN(400)]), capital(names[r.IntN(400)])
		year, size := 1800+r.IntN(200), 10+r.IntN(900)
		passage := fmt.Sprintf("%s is a town on the %s River. It was founded in %d by %s. The town covers %d square kilometres. "+
			"Its market is held every Saturday. Most people there work in farming.", town, river, year, who, size)
		q, a := [][2]string{
			{fmt.Sprintf("Who founded %s?", town), who},
			{fmt.Sprintf("When was %s founded?", town), fmt.Sprint(year)},
			{fmt.Sprintf("Which river is %s on?", town), "the " + river + " River"},
			{fmt.Sprintf("How large is %s?", town), fmt.Sprintf("%d square kilometres", size)},
		}[r.IntN(4)][0], ""
		switch {
		case strings.HasPrefix(q, "Who"):
			a = who
		case strings.HasPrefix(q, "When"):
			a = fmt.Sprint(year)
		case strings.HasPrefix(q, "Which"):
			a = "the " + river + " River"
		default:
			a = fmt.Sprintf("%d square kilometres", size)
		}
		rows[i] = training.Example{Key: fmt.Sprintf("syn:%d", i), Input: map[string]any{"context": passage, "question": q}, Label: a}
	}
	return rows
}

// peakHeap samples the heap until stop is called and returns the largest value seen, in bytes.
func peakHeap() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	read := func() {
		metrics.Read(sample)
		if v := sample[0].Value.Uint64(); v > peak.Load() {
			peak.Store(v)
		}
	}
	go func() {
		defer close(finished)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			read()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		read()
		return peak.Load()
	}
}

func benchTrain(b *testing.B, code string, rows []training.Example) {
	cfg := parseConfig(b, demoTask(b, code).Config)
	data := training.Dataset{Sources: []training.Source{{Name: "synthetic", Examples: rows}}}
	var peak uint64
	var size int
	var a *training.Artifact
	b.ReportAllocs()
	for b.Loop() {
		runtime.GC()
		stop := peakHeap()
		var err error
		a, err = training.Train(ctx, cfg, data, training.Options{Task: code, Seed: 1}, nil)
		if err != nil {
			b.Fatal(err)
		}
		peak = max(peak, stop())
		file, _ := a.MarshalBinary()
		size = len(file)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(size)/(1<<20), "model-MB")
	b.ReportMetric(float64(len(rows))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.Logf("%d rows: held-out scores %v", len(rows), a.Manifest.HeldOutScores)
}

func BenchmarkTrainClassifier(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) { benchTrain(b, "sentiment", syntheticSentiment(n)) })
	}
}

func BenchmarkTrainSpan(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) { benchTrain(b, "qa", syntheticQA(n)) })
	}
}

// benchPredict times each call of call and reports the median and 99th percentile.
func benchPredict(b *testing.B, call func() error) {
	var lat []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if err := call(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
}

// loaded trains a model on a demo seed set and loads it back from its artifact file, as a server would.
func loaded(b *testing.B, code string) (dynabench.Predictor, *taskconfig.Config, []map[string]any) {
	cfg, data := seedData(b, code)
	a, err := training.Train(ctx, cfg, data, training.Options{Task: code, Seed: 1}, nil)
	must(b, err)
	file, err := a.MarshalBinary()
	must(b, err)
	p, _, err := training.Load(file)
	must(b, err)
	var inputs []map[string]any
	for _, ex := range data.Examples()[:32] {
		inputs = append(inputs, ex.Input)
	}
	return p, cfg, inputs
}

func BenchmarkPredict(b *testing.B) {
	for _, code := range []string{"sentiment", "nli", "qa"} {
		p, _, inputs := loaded(b, code)
		b.Run(code+"/single", func(b *testing.B) {
			i := 0
			benchPredict(b, func() error {
				i++
				_, err := p.Predict(ctx, inputs[i%len(inputs)])
				return err
			})
		})
		b.Run(code+"/batch=32", func(b *testing.B) {
			benchPredict(b, func() error {
				_, err := p.PredictBatch(ctx, inputs)
				return err
			})
		})
	}
}

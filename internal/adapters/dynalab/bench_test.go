package dynalab_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters/dynalab"
	"github.com/dynabench-go/dynabench/internal/adapters/httpx"
)

// The benchmarks compare the adapter with a bare net/http POST doing the same work (encode the
// request, read the answer, decode the JSON) against one local server, in the same run: the
// difference is the adapter's overhead (deadline, breaker, slot, checks, answer validation).
// Adapter and Raw run one after the other; Paired alternates one adapter call and one raw call per
// iteration and reports both times and the overhead, which stays meaningful on a busy machine.

const batchSize = 32

func benchServer(b *testing.B) *httptest.Server {
	one := []byte(`{"label":"neutral","prob":{"entailed":0.1,"neutral":0.8,"contradictory":0.1}}`)
	var many bytes.Buffer
	many.WriteByte('[')
	for i := range batchSize {
		if i > 0 {
			many.WriteByte(',')
		}
		many.Write(one)
	}
	many.WriteByte(']')
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == dynalab.BatchPath {
			_, _ = w.Write(many.Bytes())
			return
		}
		_, _ = w.Write(one)
	}))
	b.Cleanup(srv.Close)
	return srv
}

func benchInput(i int) map[string]any {
	return map[string]any{"context": "A man is playing a guitar on a stage in front of a crowd.",
		"hypothesis": fmt.Sprintf("A person performs music number %d.", i)}
}

func rawClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: t}
}

// rawPost is what a caller without the adapter would write: POST JSON, read, decode into out.
func rawPost(ctx context.Context, c *http.Client, url string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return json.Unmarshal(answer, out)
}

func benchPredictor(b *testing.B, url string) *dynalab.Predictor {
	p, err := dynalab.New(&dynabench.Model{ID: 1, Kind: dynabench.KindDynalab, URL: url}, nli, httpx.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// paired times adapter and raw calls alternately (swapping which goes first every iteration, so
// neither gains from going first) and reports adapter-ns, raw-ns and overhead-%.
func paired(b *testing.B, adapter, raw func() error) {
	var ta, tr time.Duration
	timed := func(f func() error) time.Duration {
		t0 := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			ta += timed(adapter)
			tr += timed(raw)
		} else {
			tr += timed(raw)
			ta += timed(adapter)
		}
		i++
	}
	n := float64(b.N)
	b.ReportMetric(float64(ta.Nanoseconds())/n, "adapter-ns/op")
	b.ReportMetric(float64(tr.Nanoseconds())/n, "raw-ns/op")
	b.ReportMetric(100*(float64(ta)/float64(tr)-1), "overhead-%")
}

func BenchmarkDynalabSingle(b *testing.B) {
	srv := benchServer(b)
	ctx := context.Background()
	in := benchInput(1)
	b.Run("Adapter", func(b *testing.B) {
		p := benchPredictor(b, srv.URL)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Predict(ctx, in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Raw", func(b *testing.B) {
		c := rawClient()
		b.ReportAllocs()
		for b.Loop() {
			var out map[string]any
			if err := rawPost(ctx, c, srv.URL+dynalab.SinglePath, in, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Paired", func(b *testing.B) {
		p, c := benchPredictor(b, srv.URL), rawClient()
		paired(b, func() error { _, err := p.Predict(ctx, in); return err }, func() error {
			var out map[string]any
			return rawPost(ctx, c, srv.URL+dynalab.SinglePath, in, &out)
		})
	})
}

func BenchmarkDynalabBatch(b *testing.B) {
	srv := benchServer(b)
	ctx := context.Background()
	inputs := make([]map[string]any, batchSize)
	for i := range inputs {
		inputs[i] = benchInput(i)
	}
	b.Run("Adapter", func(b *testing.B) {
		p := benchPredictor(b, srv.URL)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.PredictBatch(ctx, inputs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Raw", func(b *testing.B) {
		c := rawClient()
		b.ReportAllocs()
		for b.Loop() {
			var out []map[string]any
			if err := rawPost(ctx, c, srv.URL+dynalab.BatchPath, map[string]any{"dataset_samples": inputs}, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Paired", func(b *testing.B) {
		p, c := benchPredictor(b, srv.URL), rawClient()
		paired(b, func() error { _, err := p.PredictBatch(ctx, inputs); return err }, func() error {
			var out []map[string]any
			return rawPost(ctx, c, srv.URL+dynalab.BatchPath, map[string]any{"dataset_samples": inputs}, &out)
		})
	})
}

package training_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/training"
)

// smallArtifact is a quick classifier artifact with a small hash space, so fuzzing is fast.
func smallArtifact(t testing.TB, code string) *training.Artifact {
	t.Helper()
	cfg, data := seedData(t, code)
	a, err := training.Train(ctx, cfg, data, training.Options{Task: code, Buckets: 64, Epochs: 2, Now: fixedNow}, nil)
	must(t, err)
	return a
}

// envelope builds an artifact file from its parts, to forge bad ones.
func envelope(version uint64, kind string, manifest, model []byte) []byte {
	buf := []byte("dynabench/training.Artifact\n")
	buf = binary.AppendUvarint(buf, version)
	for _, p := range [][]byte{[]byte(kind), manifest, model} {
		buf = binary.AppendUvarint(buf, uint64(len(p)))
		buf = append(buf, p...)
	}
	return buf
}

func TestLoadRejects(t *testing.T) {
	t.Parallel()
	a := smallArtifact(t, "sentiment")
	good, err := a.MarshalBinary()
	must(t, err)
	manifest, _ := json.Marshal(a.Manifest)
	withManifest := func(edit func(*training.Manifest)) []byte {
		m := a.Manifest
		edit(&m)
		b, _ := json.Marshal(m)
		return envelope(1, m.Kind, b, a.Model)
	}
	flipped := bytes.Clone(a.Model)
	flipped[len(flipped)-1] ^= 1
	junk := func() []byte { // the manifest vouches for bytes that are no built-in model
		m := a.Manifest
		sum := sha256.Sum256([]byte("junk"))
		m.ModelSHA256 = hex.EncodeToString(sum[:])
		b, _ := json.Marshal(m)
		return envelope(1, m.Kind, b, []byte("junk"))
	}()
	for name, data := range map[string][]byte{
		"empty":             nil,
		"not an artifact":   []byte("hello"),
		"header only":       []byte("dynabench/training.Artifact\n"),
		"truncated":         good[:len(good)-1],
		"trailing":          append(bytes.Clone(good), 0),
		"version 2":         envelope(2, "classifier", manifest, a.Model),
		"unknown kind":      withManifest(func(m *training.Manifest) { m.Kind = "tree" }),
		"kind mismatch":     envelope(1, "span", manifest, a.Model),
		"bad manifest":      envelope(1, "classifier", []byte("{"), a.Model),
		"flipped model":     envelope(1, "classifier", manifest, flipped),
		"model not builtin": junk,
		"huge length":       append([]byte("dynabench/training.Artifact\n\x01"), binary.AppendUvarint(nil, 1<<62)...),
	} {
		p, m, err := training.Load(data)
		if err == nil || p != nil || m != nil || !dynabench.IsCode(err, dynabench.EINVALID) {
			t.Errorf("%s: Load = %v, %v, %v; want an EINVALID error", name, p, m, err)
		}
	}
	if _, _, err := training.Load(good); err != nil {
		t.Fatalf("the good artifact: %v", err)
	}
}

// FuzzLoad: no input makes Load panic, and whatever it accepts is a model that answers. Run
// `go test -fuzz FuzzLoad ./internal/training/` to search beyond the seeds.
func FuzzLoad(f *testing.F) {
	for _, code := range []string{"sentiment", "qa"} {
		a := smallArtifact(f, code)
		good, err := a.MarshalBinary()
		must(f, err)
		f.Add(good)
		f.Add(good[:len(good)/2])
		f.Add(bytes.Replace(good, []byte(`"kind"`), []byte(`"kinb"`), 1))
	}
	f.Add([]byte("dynabench/training.Artifact\n\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, m, err := training.Load(data)
		if err != nil {
			if !strings.Contains(err.Error(), "not a valid model artifact") {
				t.Fatalf("error %v does not say what is wrong", err)
			}
			return
		}
		if m == nil || p == nil {
			t.Fatal("nil model without an error")
		}
		p.Predict(ctx, map[string]any{"statement": "fine", "context": "a b c.", "question": "what?"})
	})
}

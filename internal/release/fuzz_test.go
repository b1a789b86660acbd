package release

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// fuzzRead checks a reader's contract on any input: no panic; either items with a uid and fields, or an
// error that names its place (an *ImportError, ErrMalformed or ErrTooLarge).
func fuzzRead(f *testing.F, seed string, read func([]byte) (*Batch, error)) {
	if b, err := os.ReadFile("testdata/" + seed); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := read(data)
		if err != nil {
			var ie *ImportError
			if !errors.As(err, &ie) || !(errors.Is(err, ErrMalformed) || errors.Is(err, ErrTooLarge)) {
				t.Fatalf("error without a place: %v", err)
			}
			return
		}
		for _, it := range b.Items {
			if it.UID == "" || len(it.Fields) == 0 {
				t.Fatalf("item without uid or fields: %+v", it)
			}
		}
	})
}

var fuzzLimits = Limits{Line: 4 << 10, Field: 1 << 10, Items: 100, Bytes: 64 << 10}

func FuzzReadANLI(f *testing.F) {
	fuzzRead(f, "anli.jsonl", func(b []byte) (*Batch, error) {
		return ReadANLI(bytes.NewReader(b), ImportOptions{Limits: fuzzLimits})
	})
}

func FuzzReadDynaSent(f *testing.F) {
	fuzzRead(f, "dynasent.jsonl", func(b []byte) (*Batch, error) {
		return ReadDynaSent(bytes.NewReader(b), ImportOptions{Limits: fuzzLimits, SkipUnlabelled: true})
	})
}

func FuzzReadSQuAD(f *testing.F) {
	f.Add(mustRead(f, "squad_flat.jsonl"))
	fuzzRead(f, "squad_v2.json", func(b []byte) (*Batch, error) {
		return ReadSQuAD(bytes.NewReader(b), ImportOptions{Limits: fuzzLimits})
	})
}

// FuzzFindCanary checks that a canary planted anywhere in any text is found.
func FuzzFindCanary(f *testing.F) {
	f.Add([]byte("some training text"), uint16(3))
	c := Canary([]byte("k"), "nli", 1, "1")
	f.Fuzz(func(t *testing.T, text []byte, at uint16) {
		i := int(at) % (len(text) + 1)
		planted := append(append(append([]byte{}, text[:i]...), c...), text[i:]...)
		got, err := FindCanary(bytes.NewReader(planted), c)
		if err != nil || len(got) != 1 {
			t.Fatalf("planted at %d: %v %v", i, got, err)
		}
	})
}

func mustRead(f *testing.F, name string) []byte {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

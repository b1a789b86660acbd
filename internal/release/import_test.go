package release

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func open(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestReadANLI(t *testing.T) {
	t.Parallel()
	b, err := ReadANLI(open(t, "anli.jsonl"), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Items) != 3 {
		t.Fatalf("%d items", len(b.Items))
	}
	it := b.Items[0]
	if it.UID != "a1" || it.Fields["context"] == nil || it.Fields["hypothesis"] == nil ||
		it.Fields["label"] != "entailed" || it.Metadata["reason"] != "counts" {
		t.Errorf("item 0: %+v", it)
	}
	if b.Items[1].Fields["label"] != "neutral" || b.Items[2].Fields["label"] != "contradictory" ||
		b.Items[2].Tags[0] != "size" {
		t.Errorf("items: %+v", b.Items)
	}
	// A mapping renames fields and labels.
	b, err = ReadANLI(open(t, "anli.jsonl"), ImportOptions{Mapping: Mapping{
		Fields: map[string]string{"premise": "premise", "reason": "explanation"},
		Labels: map[string]string{"e": "entailment"}}})
	if err != nil || b.Items[0].Fields["premise"] == nil || b.Items[0].Fields["label"] != "entailment" ||
		b.Items[0].Fields["explanation"] != "counts" {
		t.Fatalf("mapped: %v %+v", err, b.Items[0])
	}
}

func TestReadDynaSent(t *testing.T) {
	t.Parallel()
	_, err := ReadDynaSent(open(t, "dynasent.jsonl"), ImportOptions{})
	var ie *ImportError
	if !errors.As(err, &ie) || ie.Line != 2 || ie.Field != "gold_label" {
		t.Fatalf("null gold label: %v", err)
	}
	b, err := ReadDynaSent(open(t, "dynasent.jsonl"), ImportOptions{SkipUnlabelled: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Items) != 2 || b.Skipped["no label"] != 1 {
		t.Fatalf("%+v", b)
	}
	it := b.Items[0]
	if it.UID != "r1-0000001" || it.Fields["statement"] == nil || it.Fields["label"] != "positive" ||
		it.Metadata["label_distribution"] == nil {
		t.Errorf("item: %+v", it)
	}
}

func TestReadSQuAD(t *testing.T) {
	t.Parallel()
	b, err := ReadSQuAD(open(t, "squad_v2.json"), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Items) != 2 || b.Skipped["unanswerable"] != 1 {
		t.Fatalf("%+v", b)
	}
	if it := b.Items[0]; it.UID != "q1" || it.Fields["answer"] != "September 4, 1981" ||
		it.Metadata["title"] != "Beyoncé" || !strings.HasPrefix(it.Fields["context"].(string), "Beyoncé") {
		t.Errorf("item: %+v", it)
	}
	b, err = ReadSQuAD(open(t, "squad_flat.jsonl"), ImportOptions{})
	if err != nil || len(b.Items) != 2 || b.Items[0].Fields["answer"] != "on the mat" || b.Items[1].UID != "f2" {
		t.Fatalf("flat: %v %+v", err, b)
	}
}

func TestImportErrorsNameLineAndField(t *testing.T) {
	t.Parallel()
	anli := func(s string) error { _, err := ReadANLI(strings.NewReader(s), ImportOptions{}); return err }
	squad := func(s string) error { _, err := ReadSQuAD(strings.NewReader(s), ImportOptions{}); return err }
	ok := `{"uid":"1","premise":"p","hypothesis":"h","label":"e"}` + "\n"
	for _, c := range []struct {
		name  string
		err   error
		line  int
		field string
		kind  error
	}{
		{"not json", anli(ok + "{oops\n"), 2, "", ErrMalformed},
		{"array", anli("[1,2]"), 1, "", ErrMalformed},
		{"missing premise", anli(`{"uid":"1","hypothesis":"h","label":"e"}`), 1, "premise", ErrMalformed},
		{"number premise", anli(`{"premise":3,"hypothesis":"h","label":"e"}`), 1, "premise", ErrMalformed},
		{"missing label", anli(`{"premise":"p","hypothesis":"h"}`), 1, "label", ErrMalformed},
		{"unknown label", anli(ok + ok + `{"premise":"p","hypothesis":"h","label":"x"}`), 3, "label", ErrMalformed},
		{"bad tags", anli(`{"premise":"p","hypothesis":"h","label":"e","tags":"t"}`), 1, "tags", ErrMalformed},
		{"bad utf8", anli("{\"premise\":\"\xff\",\"hypothesis\":\"h\",\"label\":\"e\"}"), 1, "", ErrMalformed},
		{"long line", anli(ok + `{"premise":"` + strings.Repeat("a", 1<<20) + `"}`), 2, "", ErrTooLarge},
		{"long field", anli(`{"premise":"` + strings.Repeat("a", 70<<10) + `","hypothesis":"h","label":"e"}`), 1, "premise", ErrTooLarge},
		{"squad bad start", squad(`{"context":"abc","question":"q","answers":{"text":["b"],"answer_start":[0]}}`), 1, "answers[0].answer_start", ErrMalformed},
		{"squad ragged", squad(`{"context":"abc","question":"q","answers":{"text":["b"],"answer_start":[]}}`), 1, "answers", ErrMalformed},
		{"squad no question", squad(`{"context":"abc","answers":[]}`), 1, "question", ErrMalformed},
		{"nested bad start", squad(`{"data":[{"paragraphs":[{"context":"abc","qas":[{"id":"x","question":"q","answers":[{"text":"c","answer_start":9}]}]}]}]}`), 0, "answers[0].answer_start", ErrMalformed},
	} {
		var ie *ImportError
		if !errors.As(c.err, &ie) || ie.Line != c.line || ie.Field != c.field || !errors.Is(c.err, c.kind) {
			t.Errorf("%s: got %v (%+v), want line %d field %q", c.name, c.err, ie, c.line, c.field)
		}
	}
	var ie *ImportError
	if err := squad(`{"data":[{"paragraphs":[{"context":"abc","qas":[{"id":"x","question":"q","answers":[{"text":"c","answer_start":9}]}]}]}]}`); !errors.As(err, &ie) || ie.Path != "data[0].paragraphs[0].qas[0]" {
		t.Errorf("nested path: %v", err)
	}
	_, err := ReadANLI(strings.NewReader(ok), ImportOptions{Mapping: Mapping{Fields: map[string]string{"premise": "hypothesis"}}})
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("clashing mapping: %v", err)
	}
	_, err = ReadANLI(strings.NewReader(ok+ok), ImportOptions{Limits: Limits{Items: 1}})
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("item limit: %v", err)
	}
}

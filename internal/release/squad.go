package release

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// squadScheme: the task fields a SQuAD question becomes. "answer" is the first answer's text; every
// answer, with its answer_start, is kept in Metadata["answers"], and the article title in
// Metadata["title"].
var squadScheme = scheme{fields: map[string]string{"context": "context", "question": "question", "answer": "answer"}}

// ReadSQuAD reads extractive QA data in either published shape, told apart by content:
//
//   - nested SQuAD v1.1/v2.0 JSON (also AdversarialQA's): {"data": [{"title", "paragraphs": [{"context",
//     "qas": [{"id", "question", "answers": [{"text", "answer_start"}], "is_impossible"}]}]}]};
//   - flat JSONL, one question per line (Hugging Face's squad shape): {"id", "context", "question",
//     "answers": {"text": [...], "answer_start": [...]}}, answers also accepted as a list of objects.
//
// Defaults: context → context, question → question, answer → answer (the demo QA task's names).
// Unanswerable questions (SQuAD v2's is_impossible, or no answers) are skipped, counted as "unanswerable".
// Every answer_start is checked: the answer text must sit at that character (code point) offset.
func ReadSQuAD(r io.Reader, o ImportOptions) (*Batch, error) {
	fields, _, err := squadScheme.resolve(o.Mapping)
	if err != nil {
		return nil, err
	}
	lim := o.limits()
	data, err := io.ReadAll(io.LimitReader(r, lim.Bytes+1))
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	if int64(len(data)) > lim.Bytes {
		return nil, where{}.tooLarge("", "file larger than %d bytes", lim.Bytes)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	b := &Batch{Skipped: map[string]int{}}
	if nested(data) {
		return b, readNestedSQuAD(data, b, fields, lim)
	}
	err = eachLine(bytes.NewReader(data), lim, func(w where, obj map[string]any) error {
		return addFlatSQuAD(w, obj, b, fields, lim)
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// nested reports whether data is one JSON document with a "data" list, rather than JSONL.
func nested(data []byte) bool {
	var probe struct {
		Data json.RawMessage `json:"data"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if dec.Decode(&probe) != nil || len(probe.Data) == 0 {
		return false
	}
	return !dec.More() // a single document
}

type squadDoc struct {
	Data []struct {
		Title      string `json:"title"`
		Paragraphs []struct {
			Context string    `json:"context"`
			QAs     []squadQA `json:"qas"`
		} `json:"paragraphs"`
	} `json:"data"`
}

type squadQA struct {
	ID           string        `json:"id"`
	Question     string        `json:"question"`
	Answers      []squadAnswer `json:"answers"`
	IsImpossible bool          `json:"is_impossible"`
}

type squadAnswer struct {
	Text        string `json:"text"`
	AnswerStart int    `json:"answer_start"`
}

func readNestedSQuAD(data []byte, b *Batch, fields map[string]string, lim Limits) error {
	if !utf8.Valid(data) {
		return where{}.fail("", "not valid UTF-8")
	}
	var doc squadDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return where{}.fail("", "not SQuAD JSON: %s", jsonProblem(err))
	}
	for i, art := range doc.Data {
		for j, p := range art.Paragraphs {
			for k, qa := range p.QAs {
				w := where{path: fmt.Sprintf("data[%d].paragraphs[%d].qas[%d]", i, j, k)}
				if err := addSQuAD(w, qa, p.Context, art.Title, b, fields, lim); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func addFlatSQuAD(w where, obj map[string]any, b *Batch, fields map[string]string, lim Limits) error {
	for _, f := range []string{"context", "question"} {
		if err := requireText(w, obj, f, lim); err != nil {
			return err
		}
	}
	qa := squadQA{Question: obj["question"].(string)}
	for _, k := range []string{"id", "uid"} {
		if v, ok := obj[k]; ok && v != nil {
			id, err := scalarText(w, v, k)
			if err != nil {
				return err
			}
			qa.ID = id
			break
		}
	}
	if v, ok := obj["is_impossible"].(bool); ok {
		qa.IsImpossible = v
	}
	answers, err := flatAnswers(w, obj["answers"])
	if err != nil {
		return err
	}
	qa.Answers = answers
	title, _ := obj["title"].(string)
	return addSQuAD(w, qa, obj["context"].(string), title, b, fields, lim)
}

// flatAnswers reads answers as {"text": [...], "answer_start": [...]} or [{"text", "answer_start"}].
func flatAnswers(w where, v any) ([]squadAnswer, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, w.fail("answers", "%v", err)
	}
	switch v.(type) {
	case nil:
		return nil, nil
	case []any:
		var as []squadAnswer
		if err := json.Unmarshal(raw, &as); err != nil {
			return nil, w.fail("answers", "must be a list of {text, answer_start}: %s", jsonProblem(err))
		}
		return as, nil
	case map[string]any:
		var cols struct {
			Text  []string `json:"text"`
			Start []int    `json:"answer_start"`
		}
		if err := json.Unmarshal(raw, &cols); err != nil {
			return nil, w.fail("answers", "must be {text: [...], answer_start: [...]}: %s", jsonProblem(err))
		}
		if len(cols.Text) != len(cols.Start) {
			return nil, w.fail("answers", "%d texts but %d answer_starts", len(cols.Text), len(cols.Start))
		}
		as := make([]squadAnswer, len(cols.Text))
		for i := range as {
			as[i] = squadAnswer{Text: cols.Text[i], AnswerStart: cols.Start[i]}
		}
		return as, nil
	}
	return nil, w.fail("answers", "must be a list or an object, is %s", typeName(v))
}

// addSQuAD checks one question and appends it, or counts it as skipped.
func addSQuAD(w where, qa squadQA, ctx, title string, b *Batch, fields map[string]string, lim Limits) error {
	switch {
	case ctx == "":
		return w.fail("context", "is empty")
	case qa.Question == "":
		return w.fail("question", "is empty")
	case len(ctx) > lim.Field:
		return w.tooLarge("context", "longer than %d bytes", lim.Field)
	case len(qa.Question) > lim.Field:
		return w.tooLarge("question", "longer than %d bytes", lim.Field)
	}
	if qa.IsImpossible || len(qa.Answers) == 0 {
		b.Skipped["unanswerable"]++
		return nil
	}
	answers := make([]any, len(qa.Answers))
	for i, a := range qa.Answers {
		if err := checkSpan(w, ctx, a, i); err != nil {
			return err
		}
		answers[i] = map[string]any{"text": a.Text, "answer_start": a.AnswerStart}
	}
	uid := qa.ID
	if uid == "" {
		uid = w.path
		if w.line > 0 {
			uid = "line-" + strconv.Itoa(w.line)
		}
	}
	it := Item{UID: uid, Fields: map[string]any{}, Metadata: map[string]any{"answers": answers}}
	if title != "" {
		it.Metadata["title"] = title
	}
	for src, v := range map[string]any{"context": ctx, "question": qa.Question, "answer": qa.Answers[0].Text} {
		if dst, ok := fields[src]; ok {
			it.Fields[dst] = v
		}
	}
	if len(b.Items) == lim.Items {
		return w.tooLarge("", "more than %d items", lim.Items)
	}
	b.Items = append(b.Items, it)
	return nil
}

// checkSpan checks that an answer's text sits in the context at its answer_start, counted in code points
// as Python counts them.
func checkSpan(w where, ctx string, a squadAnswer, i int) error {
	field := fmt.Sprintf("answers[%d]", i)
	if a.Text == "" {
		return w.fail(field+".text", "is empty")
	}
	if a.AnswerStart < 0 || a.AnswerStart >= utf8.RuneCountInString(ctx) {
		return w.fail(field+".answer_start", "%d is outside the context", a.AnswerStart)
	}
	off := 0
	for n := 0; n < a.AnswerStart; n++ {
		_, size := utf8.DecodeRuneInString(ctx[off:])
		off += size
	}
	if !bytes.HasPrefix([]byte(ctx[off:]), []byte(a.Text)) {
		return w.fail(field+".answer_start", "the context at %d does not read %q", a.AnswerStart, a.Text)
	}
	return nil
}

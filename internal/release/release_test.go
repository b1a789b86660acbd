package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var testSecret = []byte("0123456789abcdef-install-secret")

func yes() *bool { b := true; return &b }

// nliRecords builds n verified NLI records written by user 7+i%3 and validated by users 100 and 101.
func nliRecords(n int) []Record {
	labels := []string{"entailed", "neutral", "contradictory"}
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{
			ID: int64(1000 + i), Round: 1, ContextID: int64(i % 4),
			Context:     map[string]any{"context": fmt.Sprintf("Premise %d, with \"quotes\", commas\nand a newline.", i%4)},
			Input:       map[string]any{"hypothesis": fmt.Sprintf("=Hypothesis %d", i), "label": labels[i%3]},
			ModelName:   "builtin-logreg-v1",
			ModelOutput: map[string]any{"label": labels[(i+1)%3], "prob": map[string]any{"entailed": 0.5}},
			ModelWrong:  yes(), Tag: "people", Tags: []string{"negation"},
			Metadata: map[string]any{"example_explanation": "why", "annotator_id": "A1WORKER"},
			Creator:  Person{UserID: int64(7 + i%3)},
			Validations: []Validation{
				{Validator: Person{UserID: 100}, Label: "correct", Mode: "user"},
				{Validator: Person{WorkerID: "A2WORKER"}, Label: "correct", Mode: "user",
					Metadata: map[string]any{"validator_example_explanation": "fine", "annotator_id": "A2WORKER"}},
			},
			CreatedAt: time.Date(2026, 5, 1, 12, 0, i, 0, time.UTC),
		}
	}
	return recs
}

func testRelease(t testing.TB) Release {
	anon, err := NewAnonymizer(testSecret, "nli")
	if err != nil {
		t.Fatal(err)
	}
	return Release{
		Task: "nli", Round: 1, Version: "1", CreatedAt: time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC),
		Config: []byte("config: yaml"), ConfigVersion: 3, Models: []ModelRef{{ID: 1, Name: "builtin-logreg-v1"}},
		SplitKey: DeriveKey(testSecret, "split", "nli"), CanaryKey: DeriveKey(testSecret, "canary", "nli"),
		Anon: anon, License: "cc-by-4.0",
		Schema: Schema{Context: []string{"context"}, Input: []string{"hypothesis", "label"},
			Output: []string{"label"}, Label: "label"},
		Info: CardInfo{Name: "Natural Language Inference", TaskCategories: []string{"text-classification"},
			TaskIDs: []string{"natural-language-inference"}, Language: []string{"en"}},
		Collection: Collection{Collected: 300, Fooled: 120, VerifiedFooled: 100, Annotators: 3, Validators: 2,
			MatchingValidates: 2},
	}
}

func TestWriteReleaseFolder(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "nli-r1-v1")
	var calls, last int
	rel := testRelease(t)
	rel.Progress = func(done, total int) { calls++; last = done; _ = total }
	recs := nliRecords(200)
	m, err := WriteRelease(dir, rel, recs)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 200 || last != 200 {
		t.Errorf("progress called %d times, last %d", calls, last)
	}
	if m.Examples != 200 || m.Split(Train).Examples+m.Split(Dev).Examples+m.Split(Test).Examples != 200 {
		t.Errorf("counts: %+v", m.Splits)
	}
	if m.Split(Test).Examples == 0 || m.Split(Train).Labels["entailed"] == 0 {
		t.Errorf("splits: %+v", m.Splits)
	}
	// Every listed file exists with its size and hash; manifest.json matches the returned manifest.
	for _, f := range m.Files {
		b, err := os.ReadFile(filepath.Join(dir, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if int64(len(b)) != f.Size || hex.EncodeToString(sum[:]) != f.SHA256 {
			t.Errorf("%s: size or hash differs from the manifest", f.Path)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, ManifestFile))
	onDisk, err := ReadManifest(b)
	if err != nil || onDisk.Canary != m.Canary || len(onDisk.Files) != 7 {
		t.Fatalf("manifest on disk: %v %+v", err, onDisk)
	}
	// No user id or worker id anywhere; the canary in every file but the manifest's own list.
	for _, f := range m.Files {
		b, _ := os.ReadFile(filepath.Join(dir, f.Path))
		if bytes.Contains(b, []byte("A1WORKER")) || bytes.Contains(b, []byte("A2WORKER")) {
			t.Errorf("%s leaks a worker id", f.Path)
		}
		if f.Size > 0 && !bytes.Contains(b, []byte(m.Canary)) {
			t.Errorf("%s has no canary", f.Path)
		}
	}
	// The split files are what the manifest counts, and each row says its split.
	for _, s := range Splits {
		rows := readJSONL(t, filepath.Join(dir, dataFile(s)))
		if len(rows) != m.Split(s).Examples {
			t.Errorf("%s: %d rows, manifest says %d", s, len(rows), m.Split(s).Examples)
		}
		for _, r := range rows {
			if r["split"] != s || r["hypothesis"] == nil || r["context"] == nil || r["label"] == nil {
				t.Fatalf("%s row: %v", s, r)
			}
		}
	}
	// No temporary folder is left next to the release.
	if ents, _ := os.ReadDir(filepath.Dir(dir)); len(ents) != 1 {
		t.Errorf("parent holds %d entries, want 1", len(ents))
	}
}

func TestWriteReleaseIsReproducible(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	recs := nliRecords(50)
	m1, err := WriteRelease(filepath.Join(base, "a"), testRelease(t), recs)
	if err != nil {
		t.Fatal(err)
	}
	// The same records in another order give the same bytes.
	rev := make([]Record, len(recs))
	for i := range recs {
		rev[len(recs)-1-i] = recs[i]
	}
	m2, err := WriteRelease(filepath.Join(base, "b"), testRelease(t), rev)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := m1.Digest()
	d2, _ := m2.Digest()
	if d1 != d2 {
		t.Fatal("same records, different release digests")
	}
	// Adding records keeps every old record in its split.
	m3, err := WriteRelease(filepath.Join(base, "c"), testRelease(t), nliRecords(80))
	if err != nil {
		t.Fatal(err)
	}
	old := splitsOf(t, filepath.Join(base, "a"))
	for uid, s := range splitsOf(t, filepath.Join(base, "c")) {
		if o, ok := old[uid]; ok && o != s {
			t.Errorf("%s moved from %s to %s", uid, o, s)
		}
	}
	_ = m3
}

func splitsOf(t *testing.T, dir string) map[string]string {
	out := map[string]string{}
	for _, r := range readJSONL(t, filepath.Join(dir, FullJSONLFile)) {
		out[r["uid"].(string)] = r["split"].(string)
	}
	return out
}

func TestWriteReleaseErrors(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	if _, err := WriteRelease(filepath.Join(base, "empty"), testRelease(t), nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty: %v", err)
	}
	if _, err := WriteRelease(filepath.Join(base, "x"), testRelease(t), nliRecords(3)); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteRelease(filepath.Join(base, "x"), testRelease(t), nliRecords(3)); !errors.Is(err, ErrExists) {
		t.Errorf("existing: %v", err)
	}
	for field, edit := range map[string]func(*Release){
		"task":       func(r *Release) { r.Task = "../etc" },
		"version":    func(r *Release) { r.Version = "" },
		"ratios":     func(r *Release) { r.Ratios = Ratios{0.5, 0.1, 0.1} },
		"split_key":  func(r *Release) { r.SplitKey = nil },
		"anonymizer": func(r *Release) { r.Anon = nil },
		"created_at": func(r *Release) { r.CreatedAt = time.Time{} },
	} {
		rel := testRelease(t)
		edit(&rel)
		_, err := WriteRelease(filepath.Join(base, "bad-"+field), rel, nliRecords(3))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: got %v", field, err)
		}
	}
	dup := nliRecords(3)
	dup[2].ID = dup[0].ID
	if _, err := WriteRelease(filepath.Join(base, "dup"), testRelease(t), dup); !errors.Is(err, ErrInvalid) {
		t.Errorf("duplicate ids: %v", err)
	}
	if ents, _ := os.ReadDir(base); len(ents) != 1 {
		t.Errorf("failed releases left %d entries, want only x", len(ents)-1)
	}
}

// A record that cannot be encoded, last in order, fails the release after the others were written:
// nothing is left behind.
func TestFailedReleaseLeavesNothing(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	recs := nliRecords(100)
	recs[99].Input["score"] = math.NaN()
	_, err := WriteRelease(filepath.Join(base, "r"), testRelease(t), recs)
	if err == nil || !strings.Contains(err.Error(), "example 1099") {
		t.Fatalf("got %v, want an error naming example 1099", err)
	}
	if ents, _ := os.ReadDir(base); len(ents) != 0 {
		t.Fatalf("a failed release left %v", ents[0].Name())
	}
}

func readJSONL(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, m)
	}
	return out
}

func TestDynabenchJSONLShape(t *testing.T) {
	t.Parallel()
	rel := testRelease(t)
	var buf bytes.Buffer
	o := ExportOptions{Task: "nli", Schema: rel.Schema, Anon: rel.Anon, Canary: "C"}
	if err := Export(&buf, FormatJSONL, nliRecords(1), o, nil); err != nil {
		t.Fatal(err)
	}
	var ex map[string]any
	if err := json.Unmarshal(buf.Bytes(), &ex); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "cid", "tag", "input_json", "output_json", "metadata_json",
		"model_endpoint_name", "model_wrong", "retracted", "flagged", "generated_datetime", "total_verified",
		"verified_incorrect", "verified_flagged", "context", "anon_uid", "validations"} {
		if _, ok := ex[k]; !ok {
			t.Errorf("no %q in %s", k, buf.String())
		}
	}
	var input map[string]any
	if err := json.Unmarshal([]byte(ex["input_json"].(string)), &input); err != nil || input["label"] != "entailed" {
		t.Errorf("input_json %v: %v", ex["input_json"], err)
	}
	if strings.Contains(ex["metadata_json"].(string), "annotator_id") {
		t.Error("metadata_json keeps annotator_id")
	}
	vs := ex["validations"].([]any)
	v0, v1 := vs[0].([]any), vs[1].([]any)
	if len(v0) != 3 || v0[0] != "correct" || v0[1] != "user" || len(v1) != 4 || v0[2] == v1[2] {
		t.Errorf("validations %v", vs)
	}
	if uid := ex["anon_uid"].(string); len(uid) != 32 || uid == v0[2] {
		t.Errorf("anon_uid %q", uid)
	}
	// A validator's id differs from the same person's creator id, and is stable.
	if rel.Anon.Creator(Person{UserID: 100}) == v0[2] || rel.Anon.Validator(Person{UserID: 100}) != v0[2] {
		t.Error("validator ids are not role-bound")
	}
	other, _ := NewAnonymizer(testSecret, "sentiment")
	if other.Creator(Person{UserID: 7}) == rel.Anon.Creator(Person{UserID: 7}) {
		t.Error("anon ids link across tasks")
	}
}

func TestCSVExport(t *testing.T) {
	t.Parallel()
	rel := testRelease(t)
	recs := nliRecords(3)
	recs[1].Input["surprise"] = "kept"
	var buf bytes.Buffer
	o := ExportOptions{Task: "nli", Schema: rel.Schema, Anon: rel.Anon}
	if err := Export(&buf, FormatCSV, recs, o, nil); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := rows[0]
	col := func(name string) int {
		for i, h := range head {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %s in %v", name, head)
		return -1
	}
	if len(rows) != 4 || rows[1][col("context.context")] != "Premise 0, with \"quotes\", commas\nand a newline." {
		t.Fatalf("rows: %q", rows)
	}
	if rows[1][col("input.hypothesis")] != "'=Hypothesis 0" {
		t.Errorf("formula not defused: %q", rows[1][col("input.hypothesis")])
	}
	if !strings.Contains(rows[2][col("extra")], `"input.surprise":"kept"`) || rows[1][col("validations_correct")] != "2" {
		t.Errorf("row 2: %q", rows[2])
	}
	if strings.Contains(buf.String(), "WORKER") {
		t.Error("CSV leaks a worker id")
	}
}

func TestExportNeedsAnonymizer(t *testing.T) {
	t.Parallel()
	err := Export(&bytes.Buffer{}, FormatJSONL, nliRecords(1), ExportOptions{}, nil)
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("got %v", err)
	}
	if _, err := NewEncoder(&bytes.Buffer{}, "xml", ExportOptions{Anon: testRelease(t).Anon}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("unknown format: %v", err)
	}
	if _, err := NewAnonymizer([]byte("short"), "nli"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("short secret: %v", err)
	}
}

func TestCardFrontMatter(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "r")
	m, err := WriteRelease(dir, testRelease(t), nliRecords(30))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, CardFile))
	card := string(b)
	for _, want := range []string{"---\nlicense: \"cc-by-4.0\"\n", "task_categories:\n- \"text-classification\"\n",
		"size_categories:\n- \"n<1K\"\n", "configs:\n- config_name: default\n  data_files:\n  - split: train\n    path: \"data/train.jsonl\"\n",
		m.Canary} {
		if !strings.Contains(card, want) {
			t.Errorf("card lacks %q:\n%s", want, card)
		}
	}
	ds, _ := os.ReadFile(filepath.Join(dir, DatasheetFile))
	for _, sec := range []string{"## Motivation", "## Composition", "## Collection process", "## Preprocessing",
		"## Uses", "## Distribution", "## Maintenance", "vMER 33.3%", fileHash(m, "data/train.jsonl")} {
		if !strings.Contains(string(ds), sec) {
			t.Errorf("datasheet lacks %q", sec)
		}
	}
}

func TestCanary(t *testing.T) {
	t.Parallel()
	key := DeriveKey(testSecret, "canary", "nli")
	c := Canary(key, "nli", 1, "1")
	if c != Canary(key, "nli", 1, "1") || c == Canary(key, "nli", 2, "1") || c == Canary(key, "nli", 1, "2") {
		t.Fatal("canary not deterministic per release")
	}
	if !strings.HasPrefix(c, CanaryPrefix) || !guidShaped(c[len(CanaryPrefix):]) || c[len(CanaryPrefix)+14] != '8' {
		t.Fatalf("canary %q", c)
	}
	other := Canary(key, "nli", 2, "1")
	// A canary spanning a 64 KiB read boundary, lower-cased, among junk, is found; so is nothing.
	junk := strings.Repeat("x", 64<<10-30)
	text := junk + strings.ToLower(c) + "\n" + junk + c + " DYNABENCH CANARY GUID not-a-guid"
	got, err := FindCanary(strings.NewReader(text), c, other)
	if err != nil || len(got) != 1 || got[0] != c {
		t.Fatalf("FindCanary = %v, %v", got, err)
	}
	got, _ = FindCanary(strings.NewReader(text))
	if len(got) != 1 || got[0] != c {
		t.Fatalf("FindCanary (any) = %v", got)
	}
	if got, _ := FindCanary(strings.NewReader(junk), c); len(got) != 0 {
		t.Fatalf("found %v in junk", got)
	}
}

func fileHash(m *Manifest, path string) string {
	for _, f := range m.Files {
		if f.Path == path {
			return f.SHA256
		}
	}
	return "no such file " + path
}

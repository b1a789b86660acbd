package release

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"
)

// Release is everything WriteRelease needs besides the records.
type Release struct {
	Task      string    // task code
	Round     int       // round number, ≥ 1; 0 for an import that is not a round
	Version   string    // release version, e.g. "1" or "1.1"; letters, digits, '.', '_', '-'
	CreatedAt time.Time // injected, so that a release can be rebuilt byte for byte
	// Config is the task config the examples were collected under; ConfigVersion its version number.
	Config        []byte
	ConfigVersion int
	Models        []ModelRef
	Ratios        Ratios // zero: DefaultRatios
	SplitKey      []byte // DeriveKey(secret, "split", task); required
	CanaryKey     []byte // DeriveKey(secret, "canary", task); required
	Anon          *Anonymizer
	Schema        Schema
	License       string // SPDX-like id as the Hub takes it, e.g. cc-by-4.0; default "unknown"
	Collection    Collection
	Info          CardInfo
	// Datasheet is the owner's edited datasheet; empty: generated.
	Datasheet string
	Progress  Progress
}

// File names in a release folder.
const (
	ManifestFile  = "manifest.json"
	CardFile      = "README.md"
	DatasheetFile = "DATASHEET.md"
	FullJSONLFile = "full/examples.jsonl"
	FullCSVFile   = "full/examples.csv"
)

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func (r *Release) validate() error {
	switch {
	case !namePattern.MatchString(r.Task):
		return invalid("task", "%q is not a task code", r.Task)
	case r.Round < 0:
		return invalid("round", "must be ≥ 0, is %d", r.Round)
	case !namePattern.MatchString(r.Version):
		return invalid("version", "%q: use 1-64 letters, digits, '.', '_' or '-'", r.Version)
	case r.CreatedAt.IsZero():
		return invalid("created_at", "is required")
	case len(r.SplitKey) == 0:
		return invalid("split_key", "is required")
	case len(r.CanaryKey) == 0:
		return invalid("canary_key", "is required")
	case r.Anon == nil:
		return invalid("anonymizer", "is required: exports never carry user ids")
	}
	return r.Ratios.Validate()
}

// WriteRelease writes a release folder at dir and returns its manifest. dir must not exist; its parent
// must. The folder holds:
//
//	README.md            dataset card (YAML front matter for the Hugging Face Hub)
//	DATASHEET.md         datasheet
//	data/{split}.jsonl   Hugging Face datasets rows per split (empty splits as empty files)
//	full/examples.jsonl  every record in Dynabench's export shape, with its split
//	full/examples.csv    the same as CSV
//	manifest.json        the Manifest; its sha256 is the release's Digest
//
// It is written in a temporary folder next to dir, every file and folder synced, then renamed into place:
// on any error nothing is left at dir and the temporary folder is removed. Records are written in (ID, UID) order, so equal inputs give equal bytes.
// Errors: ErrEmpty, ErrExists, *FieldError (ErrInvalid), or the failing record or file.
func WriteRelease(dir string, rel Release, recs []Record) (m *Manifest, err error) {
	if rel.Ratios == (Ratios{}) {
		rel.Ratios = DefaultRatios
	}
	rel.License = cmp.Or(rel.License, "unknown")
	if err := rel.validate(); err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, ErrEmpty
	}
	if _, err := os.Lstat(dir); err == nil {
		return nil, fmt.Errorf("%w: %s", ErrExists, dir)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("release: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if m, err = writeInto(tmp, &rel, recs); err != nil {
		return nil, err
	}
	if err = os.Chmod(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	if _, err = os.Lstat(dir); err == nil { // someone else released meanwhile
		return nil, fmt.Errorf("%w: %s", ErrExists, dir)
	}
	if err = os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	if err := syncDir(filepath.Dir(dir)); err != nil {
		return m, fmt.Errorf("release: written, but syncing its parent folder failed: %w", err)
	}
	return m, nil
}

// writeInto writes the release's files into dir, which exists and is empty.
func writeInto(dir string, rel *Release, recs []Record) (*Manifest, error) {
	m := &Manifest{
		Format: ManifestFormat, Task: rel.Task, Round: rel.Round, Version: rel.Version,
		CreatedAt: rel.CreatedAt.UTC(), ConfigVersion: rel.ConfigVersion, Models: rel.Models,
		Ratios: rel.Ratios, License: rel.License, Collection: rel.Collection,
		Canary: Canary(rel.CanaryKey, rel.Task, rel.Round, rel.Version),
	}
	if len(rel.Config) > 0 {
		sum := sha256.Sum256(rel.Config)
		m.ConfigSHA256 = hex.EncodeToString(sum[:])
	}
	for _, sub := range []string{"data", "full"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("release: %w", err)
		}
	}
	if err := writeData(dir, rel, m, recs); err != nil {
		return nil, err
	}
	ds := rel.Datasheet
	if ds == "" {
		ds = Datasheet(m, rel.Info) // lists the data files' hashes
	}
	for _, f := range []struct{ name, text string }{{CardFile, Card(m, rel.Info)}, {DatasheetFile, ds}} {
		e, err := writeFile(dir, f.name, []byte(f.text))
		if err != nil {
			return nil, err
		}
		m.Files = append(m.Files, e)
	}
	slices.SortFunc(m.Files, func(a, b FileEntry) int { return cmp.Compare(a.Path, b.Path) })
	b, err := m.encode()
	if err != nil {
		return nil, err
	}
	if _, err := writeFile(dir, ManifestFile, b); err != nil {
		return nil, err
	}
	for _, sub := range []string{"data", "full", "."} {
		if err := syncDir(filepath.Join(dir, sub)); err != nil {
			return nil, fmt.Errorf("release: %w", err)
		}
	}
	return m, nil
}

// writeData streams the records into the split files and the full export, counting as it goes.
func writeData(dir string, rel *Release, m *Manifest, recs []Record) error {
	o := ExportOptions{Task: rel.Task, Schema: rel.Schema, Anon: rel.Anon, Canary: m.Canary}
	outs := map[string]*output{}
	encs := map[string]Encoder{}
	defer func() {
		for _, out := range outs {
			out.f.Close() // a second Close after a successful one is harmless
		}
	}()
	for _, name := range append(slices.Clone(Splits), FullJSONLFile, FullCSVFile) {
		path, format := name, FormatJSONL
		switch name {
		case FullCSVFile:
			format = FormatCSV
		case FullJSONLFile:
		default:
			path, format = dataFile(name), FormatHF
		}
		out, err := create(dir, path)
		if err != nil {
			return err
		}
		outs[name] = out
		encs[name], _ = NewEncoder(out, format, o) // options validated with the release
	}
	stats := map[string]*SplitStats{}
	for _, s := range Splits {
		stats[s] = &SplitStats{Name: s}
	}
	seen := make(map[string]bool, len(recs))
	for n, i := range order(recs) {
		r := recs[i] // a copy: the caller's record keeps its Split
		id := r.PublicID()
		if seen[id] {
			return invalid("records", "example id %q appears twice", id)
		}
		seen[id] = true
		r.Split = splitOf(id, rel.SplitKey, rel.Ratios)
		for _, enc := range []Encoder{encs[r.Split], encs[FullJSONLFile], encs[FullCSVFile]} {
			if err := enc.Encode(&r); err != nil {
				return err
			}
		}
		count(stats[r.Split], &r, rel.Schema.Label)
		if rel.Progress != nil {
			rel.Progress(n+1, len(recs))
		}
	}
	for _, name := range append(slices.Clone(Splits), FullJSONLFile, FullCSVFile) {
		if err := encs[name].Close(); err != nil {
			return fmt.Errorf("release: %s: %w", outs[name].path, err)
		}
		e, err := outs[name].finish()
		if err != nil {
			return err
		}
		m.Files = append(m.Files, e)
	}
	for _, s := range Splits {
		m.Splits = append(m.Splits, *stats[s])
		m.Examples += stats[s].Examples
	}
	return nil
}

// order returns the indexes of recs sorted by (ID, UID).
func order(recs []Record) []int {
	idx := make([]int, len(recs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(recs[a].ID, recs[b].ID), cmp.Compare(recs[a].UID, recs[b].UID))
	})
	return idx
}

func count(s *SplitStats, r *Record, labelField string) {
	s.Examples++
	if r.ModelWrong != nil && *r.ModelWrong {
		s.Fooled++
	}
	if l, ok := r.Input[labelField].(string); ok && labelField != "" {
		if s.Labels == nil {
			s.Labels = map[string]int{}
		}
		s.Labels[l]++
	}
}

// output is a file being written, hashed and counted on the way.
type output struct {
	path string
	f    *os.File
	h    hash.Hash
	n    int64
}

func create(dir, path string) (*output, error) {
	f, err := os.OpenFile(filepath.Join(dir, filepath.FromSlash(path)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	return &output{path: path, f: f, h: sha256.New()}, nil
}

func (o *output) Write(p []byte) (int, error) {
	n, err := o.f.Write(p)
	o.h.Write(p[:n])
	o.n += int64(n)
	return n, err
}

// finish syncs and closes the file and returns its entry.
func (o *output) finish() (FileEntry, error) {
	err := o.f.Sync()
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return FileEntry{}, fmt.Errorf("release: %s: %w", o.path, err)
	}
	return FileEntry{Path: o.path, Size: o.n, SHA256: hex.EncodeToString(o.h.Sum(nil))}, nil
}

func writeFile(dir, path string, b []byte) (FileEntry, error) {
	out, err := create(dir, path)
	if err != nil {
		return FileEntry{}, err
	}
	if _, err := out.Write(b); err != nil {
		out.f.Close()
		return FileEntry{}, fmt.Errorf("release: %s: %w", path, err)
	}
	return out.finish()
}

func syncDir(path string) error {
	d, err := os.Open(path)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

var _ io.Writer = (*output)(nil)

package release

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// csvFixed are the leading columns of a CSV export, in order.
var csvFixed = []string{
	"uid", "id", "task", "round", "split", "context_id", "tag", "tags", "anon_uid", "model_name",
	"model_wrong", "flagged", "created_at", "validations_correct", "validations_incorrect",
	"validations_flagged", "validations",
}

// csvEncoder writes a header and one row per record: the fixed columns, then "context.<f>", "input.<f>" and
// "output.<f>" for the Schema's fields in its order, then "metadata" (JSON), "extra" (JSON of any field
// the Schema does not name, so nothing is lost) and "canary". Strings are written as they are, except that
// one starting with =, +, -, @, tab or CR gets a leading apostrophe, so that a spreadsheet does not run an
// annotator's text as a formula (OWASP "CSV injection"; the JSONL export is the lossless one); other values
// are JSON; nil is the empty cell. Quoting is encoding/csv's (RFC 4180).
type csvEncoder struct {
	cw     *csv.Writer
	o      ExportOptions
	header bool
}

func newCSVEncoder(w io.Writer, o ExportOptions) *csvEncoder {
	return &csvEncoder{cw: csv.NewWriter(w), o: o}
}

// Columns returns the CSV header for a schema.
func Columns(s Schema) []string {
	cols := slices.Clone(csvFixed)
	for _, sec := range []struct {
		name   string
		fields []string
	}{{"context", s.Context}, {"input", s.Input}, {"output", s.Output}} {
		for _, f := range sec.fields {
			cols = append(cols, sec.name+"."+f)
		}
	}
	return append(cols, "metadata", "extra", "canary")
}

func (e *csvEncoder) Encode(r *Record) error {
	if !e.header {
		e.header = true
		if err := e.cw.Write(Columns(e.o.Schema)); err != nil {
			return err
		}
	}
	row, err := e.row(r)
	if err != nil {
		return recordError(r, err)
	}
	return e.cw.Write(row)
}

func (e *csvEncoder) Close() error {
	e.cw.Flush()
	return e.cw.Error()
}

func (e *csvEncoder) row(r *Record) ([]string, error) {
	var counts [3]int
	vs := make([]string, 0, len(r.Validations))
	for _, v := range r.Validations {
		vs = append(vs, v.Label+":"+v.Mode+":"+e.o.Anon.Validator(v.Validator))
		if i := slices.Index([]string{"correct", "incorrect", "flagged"}, v.Label); i >= 0 && v.Mode != "owner" {
			counts[i]++
		}
	}
	row := []string{
		r.PublicID(), strconv.FormatInt(r.ID, 10), e.o.Task, strconv.Itoa(r.Round), r.Split,
		strconv.FormatInt(r.ContextID, 10), r.Tag, strings.Join(r.Tags, "|"), e.o.Anon.Creator(r.Creator),
		r.ModelName, boolCell(r.ModelWrong), strconv.FormatBool(r.Flagged), timeText(r.CreatedAt),
		strconv.Itoa(counts[0]), strconv.Itoa(counts[1]), strconv.Itoa(counts[2]), strings.Join(vs, " "),
	}
	extra := map[string]any{}
	for _, sec := range []struct {
		name   string
		fields []string
		m      map[string]any
	}{{"context", e.o.Schema.Context, r.Context}, {"input", e.o.Schema.Input, r.Input},
		{"output", e.o.Schema.Output, r.ModelOutput}} {
		for _, f := range sec.fields {
			c, err := cell(sec.m[f])
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", sec.name, f, err)
			}
			row = append(row, c)
		}
		for k, v := range sec.m {
			if !slices.Contains(sec.fields, k) {
				extra[sec.name+"."+k] = v
			}
		}
	}
	md, err := cell(scrub(r.Metadata))
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	ex := ""
	if len(extra) > 0 {
		if ex, err = cell(extra); err != nil {
			return nil, fmt.Errorf("extra: %w", err)
		}
	}
	return append(row, md, ex, e.o.Canary), nil
}

func boolCell(b *bool) string {
	if b == nil {
		return ""
	}
	return strconv.FormatBool(*b)
}

// cell renders a value: strings as they are, nil and empty maps as "", anything else as JSON.
func cell(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return defuse(v), nil
	case map[string]any:
		if len(v) == 0 {
			return "", nil
		}
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// defuse prefixes text a spreadsheet would read as a formula with an apostrophe.
func defuse(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

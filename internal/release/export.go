package release

import (
	"fmt"
	"io"
)

// Format names an export format.
type Format string

// Export formats.
const (
	// FormatJSONL is Dynabench's round export, one example per line (see dynabenchRow).
	FormatJSONL Format = "jsonl"
	// FormatCSV is one example per row, with columns from the Schema (see NewCSVEncoder).
	FormatCSV Format = "csv"
	// FormatHF is flat rows for Hugging Face datasets, as in a release's data/{split}.jsonl (see hfRow).
	FormatHF Format = "hf"
)

// ExportOptions configure the encoders.
type ExportOptions struct {
	Task   string      // the task code, written into CSV and HF rows
	Schema Schema      // field names; CSV columns come from it
	Anon   *Anonymizer // required: makes anon_uid and validator ids
	Canary string      // written into every record when set
}

func (o ExportOptions) validate() error {
	if o.Anon == nil || len(o.Anon.key) == 0 {
		return invalid("anonymizer", "is required (from NewAnonymizer): exports never carry user ids")
	}
	return nil
}

// Encoder writes records one at a time to a stream. Close flushes what is buffered; it does not close
// the underlying writer.
type Encoder interface {
	Encode(r *Record) error
	Close() error
}

// NewEncoder returns the encoder for a format.
func NewEncoder(w io.Writer, f Format, o ExportOptions) (Encoder, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	switch f {
	case FormatJSONL:
		return newJSONEncoder(w, o, dynabenchRow), nil
	case FormatHF:
		return newJSONEncoder(w, o, hfRow), nil
	case FormatCSV:
		return newCSVEncoder(w, o), nil
	}
	return nil, invalid("format", "unknown format %q (want jsonl, csv or hf)", f)
}

// Progress is told how many of total records are written, after each one.
type Progress func(done, total int)

// Export writes records in a format to w, reporting progress.
func Export(w io.Writer, f Format, recs []Record, o ExportOptions, progress Progress) error {
	enc, err := NewEncoder(w, f, o)
	if err != nil {
		return err
	}
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return err
		}
		if progress != nil {
			progress(i+1, len(recs))
		}
	}
	return enc.Close()
}

// recordError names the record an encoding error came from.
func recordError(r *Record, err error) error {
	return fmt.Errorf("release: example %s: %w", r.PublicID(), err)
}

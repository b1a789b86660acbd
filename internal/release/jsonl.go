package release

import (
	"bufio"
	"encoding/json"
	"io"
	"time"
)

// jsonEncoder writes one JSON object per line.
type jsonEncoder struct {
	bw  *bufio.Writer
	o   ExportOptions
	row func(*Record, ExportOptions) (any, error)
}

func newJSONEncoder(w io.Writer, o ExportOptions, row func(*Record, ExportOptions) (any, error)) *jsonEncoder {
	return &jsonEncoder{bw: bufio.NewWriterSize(w, 64<<10), o: o, row: row}
}

func (e *jsonEncoder) Encode(r *Record) error {
	v, err := e.row(r, e.o)
	if err != nil {
		return recordError(r, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return recordError(r, err)
	}
	e.bw.Write(b)
	return e.bw.WriteByte('\n')
}

func (e *jsonEncoder) Close() error { return e.bw.Flush() }

// dynabenchExample is one element of Dynabench's round export (api/common/helpers.py
// get_round_data_for_export): the example's columns except uid and split, its context row, anon_uid and
// validations as [label, mode, anon validator id, metadata?]. As in Dynabench, input_json, output_json,
// metadata_json and context_json are JSON text, so scripts written for Dynabench exports read it
// unchanged. Fields after "validations" are ours.
type dynabenchExample struct {
	ID                int64            `json:"id"`
	CID               int64            `json:"cid"`
	Tag               *string          `json:"tag"`
	InputJSON         string           `json:"input_json"`
	OutputJSON        string           `json:"output_json"`
	MetadataJSON      string           `json:"metadata_json"`
	ModelEndpointName string           `json:"model_endpoint_name"`
	ModelWrong        *bool            `json:"model_wrong"`
	Retracted         bool             `json:"retracted"`
	Flagged           bool             `json:"flagged"`
	GeneratedDatetime string           `json:"generated_datetime"`
	TotalVerified     int              `json:"total_verified"`
	VerifiedCorrect   int              `json:"verified_correct"`
	VerifiedIncorrect int              `json:"verified_incorrect"`
	VerifiedFlagged   int              `json:"verified_flagged"`
	Context           dynabenchContext `json:"context"`
	AnonUID           string           `json:"anon_uid"`
	Validations       [][]any          `json:"validations"`
	UID               string           `json:"uid"`
	RID               int              `json:"rid"`
	Split             string           `json:"split,omitempty"`
	Tags              []string         `json:"tags,omitempty"`
	Canary            string           `json:"canary,omitempty"`
}

// dynabenchContext is Dynabench's context row, as far as a released example needs it.
type dynabenchContext struct {
	ID          int64   `json:"id"`
	ContextJSON string  `json:"context_json"`
	Tag         *string `json:"tag"`
}

func dynabenchRow(r *Record, o ExportOptions) (any, error) {
	var err error
	text := func(m map[string]any) string {
		if err != nil {
			return ""
		}
		if m == nil {
			m = map[string]any{}
		}
		var b []byte
		b, err = json.Marshal(m)
		return string(b)
	}
	var tag *string
	if r.Tag != "" {
		tag = &r.Tag
	}
	ex := dynabenchExample{
		ID: r.ID, CID: r.ContextID, Tag: tag,
		InputJSON: text(r.Input), OutputJSON: text(r.ModelOutput), MetadataJSON: text(scrub(r.Metadata)),
		ModelEndpointName: r.ModelName, ModelWrong: r.ModelWrong, Retracted: r.Retracted, Flagged: r.Flagged,
		GeneratedDatetime: timeText(r.CreatedAt),
		Context:           dynabenchContext{ID: r.ContextID, ContextJSON: text(r.Context), Tag: tag},
		AnonUID:           o.Anon.Creator(r.Creator),
		Validations:       make([][]any, 0, len(r.Validations)),
		UID:               r.PublicID(), RID: r.Round, Split: r.Split, Tags: r.Tags, Canary: o.Canary,
	}
	for _, v := range r.Validations {
		item := []any{v.Label, v.Mode, o.Anon.Validator(v.Validator)}
		if md := scrub(v.Metadata); len(md) > 0 {
			item = append(item, md)
		}
		ex.Validations = append(ex.Validations, item)
		if v.Mode != "owner" {
			ex.TotalVerified++
			switch v.Label {
			case "correct":
				ex.VerifiedCorrect++
			case "incorrect":
				ex.VerifiedIncorrect++
			case "flagged":
				ex.VerifiedFlagged++
			}
		}
	}
	return ex, err
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

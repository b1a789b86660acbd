package release

// hfReserved are the keys of an HF row that are not task fields.
var hfReserved = map[string]bool{
	"uid": true, "round": true, "split": true, "tags": true, "model_name": true, "model_output": true,
	"model_wrong": true, "anon_uid": true, "validations": true, "canary": true,
}

// hfValidation is one validation in an HF row.
type hfValidation struct {
	Validator string `json:"validator"`
	Label     string `json:"label"`
	Mode      string `json:"mode"`
}

// hfRow is a record as a flat row for Hugging Face datasets: the task's context and input fields at the
// top level (the target among them), then uid, round, split, tags, model_name, model_output,
// model_wrong, anon_uid, validations [{validator, label, mode}] and canary. A context field whose name an
// input field also has is written as "context_<name>"; a task field named like one of ours gets the
// prefix "context_" or "input_". Keys are sorted (encoding/json), so rows are byte-stable.
func hfRow(r *Record, o ExportOptions) (any, error) {
	row := map[string]any{
		"uid": r.PublicID(), "round": r.Round, "model_name": r.ModelName, "model_output": r.ModelOutput,
		"model_wrong": r.ModelWrong, "anon_uid": o.Anon.Creator(r.Creator),
	}
	if r.Split != "" {
		row["split"] = r.Split
	}
	tags := r.Tags
	if tags == nil {
		tags = []string{}
	}
	row["tags"] = tags
	if o.Canary != "" {
		row["canary"] = o.Canary
	}
	vs := make([]hfValidation, 0, len(r.Validations))
	for _, v := range r.Validations {
		vs = append(vs, hfValidation{Validator: o.Anon.Validator(v.Validator), Label: v.Label, Mode: v.Mode})
	}
	row["validations"] = vs
	for k, v := range r.Input {
		if hfReserved[k] {
			k = "input_" + k
		}
		row[k] = v
	}
	for k, v := range r.Context {
		if _, taken := r.Input[k]; taken || hfReserved[k] {
			k = "context_" + k
		}
		row[k] = v
	}
	return row, nil
}

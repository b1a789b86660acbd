package taskconfig

import "fmt"

// Problem is one thing wrong with a config or with a value checked against
// it. Path names the offending value the way a task owner would find it in
// the document ("output[1].reference_name", "input.label"); it is empty when
// the problem concerns the whole document.
type Problem struct {
	Path    string `json:"field"`
	Message string `json:"message"`
}

// String renders the problem as "path: message".
func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// Report collects what Parse found. Problems make a config unusable for a
// task; Warnings (such as unknown keys, which are kept) do not.
type Report struct {
	Problems []Problem
	Warnings []Problem
}

// OK reports whether the config has no problems. Warnings are allowed.
func (r *Report) OK() bool {
	return r == nil || len(r.Problems) == 0
}

func (r *Report) problem(path, format string, args ...any) {
	r.Problems = append(r.Problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (r *Report) warn(path, format string, args ...any) {
	r.Warnings = append(r.Warnings, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// problems is a small accumulator for the Check methods, which return a
// plain slice rather than a Report.
type problems []Problem

func (ps *problems) add(path, format string, args ...any) {
	*ps = append(*ps, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// joinPath appends a mapping key to a path.
func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// indexPath appends a list index to a path.
func indexPath(parent string, i int) string {
	return fmt.Sprintf("%s[%d]", parent, i)
}

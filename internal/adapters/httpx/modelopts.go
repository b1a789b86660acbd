package httpx

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/dynabench-go/dynabench"
)

// Opts reads a model's options (JSON-shaped, as stored), remembering which keys were asked for so
// that a misspelt option is reported instead of silently ignored, and collecting every problem so a
// model owner can fix them all at once. Problems name the field as the API does: "options.timeout_ms".
type Opts struct {
	m        map[string]any
	known    map[string]bool
	problems []dynabench.FieldError
}

// NewOpts reads m, which may be nil.
func NewOpts(m map[string]any) *Opts { return &Opts{m: m, known: map[string]bool{}} }

// Problem records a problem with a field, given by its full path ("url", "options.model").
func (o *Opts) Problem(field, format string, args ...any) {
	o.problems = append(o.problems, dynabench.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

func (o *Opts) bad(key, format string, args ...any) { o.Problem("options."+key, format, args...) }

// Raw returns the value of key, marking it known; ok is false when it is absent or null.
func (o *Opts) Raw(key string) (any, bool) {
	o.known[key] = true
	v, ok := o.m[key]
	return v, ok && v != nil
}

// Has reports whether key is set (and marks it known).
func (o *Opts) Has(key string) bool { _, ok := o.Raw(key); return ok }

// Int reads a whole number in [lo, hi], def when absent.
func (o *Opts) Int(key string, def, lo, hi int) int {
	v, ok := o.Raw(key)
	if !ok {
		return def
	}
	f, isNum := number(v)
	if !isNum || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		o.bad(key, "must be a whole number from %d to %d", lo, hi)
		return def
	}
	return int(f)
}

// Float reads a number in [lo, hi], def when absent.
func (o *Opts) Float(key string, def, lo, hi float64) float64 {
	v, ok := o.Raw(key)
	if !ok {
		return def
	}
	f, isNum := number(v)
	if !isNum || math.IsNaN(f) || f < lo || f > hi {
		o.bad(key, "must be a number from %g to %g", lo, hi)
		return def
	}
	return f
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// Bool reads true or false, def when absent.
func (o *Opts) Bool(key string, def bool) bool {
	v, ok := o.Raw(key)
	if !ok {
		return def
	}
	b, isBool := v.(bool)
	if !isBool {
		o.bad(key, "must be true or false")
		return def
	}
	return b
}

// String reads a string, def when absent. A present string must not be blank.
func (o *Opts) String(key, def string) string {
	v, ok := o.Raw(key)
	if !ok {
		return def
	}
	s, isString := v.(string)
	if !isString || strings.TrimSpace(s) == "" {
		o.bad(key, "must be a non-empty string")
		return def
	}
	return s
}

// Strings reads a non-empty list of non-empty strings; nil when absent.
func (o *Opts) Strings(key string) []string {
	v, ok := o.Raw(key)
	if !ok {
		return nil
	}
	list, isList := v.([]any)
	if s, isStrings := v.([]string); isStrings {
		list = make([]any, len(s))
		for i := range s {
			list[i] = s[i]
		}
		isList = true
	}
	if !isList || len(list) == 0 {
		o.bad(key, "must be a non-empty list of strings")
		return nil
	}
	out := make([]string, 0, len(list))
	for i, item := range list {
		s, isString := item.(string)
		if !isString || strings.TrimSpace(s) == "" {
			o.Problem(fmt.Sprintf("options.%s[%d]", key, i), "must be a non-empty string")
			return nil
		}
		out = append(out, s)
	}
	return out
}

// StringMap reads an object whose values are strings (possibly empty); nil when absent.
func (o *Opts) StringMap(key string) map[string]string {
	v, ok := o.Raw(key)
	if !ok {
		return nil
	}
	m, isMap := v.(map[string]any)
	if s, isStrings := v.(map[string]string); isStrings {
		m = make(map[string]any, len(s))
		for k, x := range s {
			m[k] = x
		}
		isMap = true
	}
	if !isMap {
		o.bad(key, "must be an object mapping strings to strings")
		return nil
	}
	out := make(map[string]string, len(m))
	for k, item := range m {
		s, isString := item.(string)
		if !isString {
			o.bad(key+"."+k, "must be a string")
			return nil
		}
		out[k] = s
	}
	return out
}

// Err reports every problem, and every option nobody asked for, as one EINVALID error (nil if none).
func (o *Opts) Err() error {
	problems := slices.Clone(o.problems)
	var unknown []string
	for k := range o.m {
		if !o.known[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		known := make([]string, 0, len(o.known))
		for k := range o.known {
			known = append(known, k)
		}
		sort.Strings(known)
		for _, k := range unknown {
			problems = append(problems, dynabench.FieldError{Field: "options." + k,
				Message: fmt.Sprintf("unknown option (this kind of model takes %s)", strings.Join(known, ", "))})
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return dynabench.Invalid(problems)
}

package taskconfig

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// The helpers below accept every Go type a decoder may hand us: YAML gives
// int, int64, uint64 and float64; encoding/json gives float64 or
// json.Number; Go callers may pass anything. None of them panics.

// scalarText renders a scalar as text: a string as it is, a number in its
// shortest form, a bool as true/false. It fails for nil, lists and maps.
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case json.Number:
		return x.String(), true
	}
	if f, ok := toFloat(v); ok {
		return strconv.FormatFloat(f, 'f', -1, 64), true
	}
	return "", false
}

// toFloat converts any numeric value to float64. Strings are not numbers.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	}
	return 0, false
}

// toUnit converts v to a number in [0, 1], allowing the rounding slack
// Dynabench allows (1e-4) and clamping it away.
func toUnit(v any) (float64, bool) {
	const eps = 1e-4
	f, ok := toFloat(v)
	if !ok || math.IsNaN(f) || f < -eps || f > 1+eps {
		return 0, false
	}
	return math.Min(math.Max(f, 0), 1), true
}

// toBool accepts a bool, or the YAML 1.1 spellings PyYAML (and therefore
// Dynabench) reads as bools, since configs were written against PyYAML.
func toBool(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		switch strings.ToLower(x) {
		case "true", "yes", "on", "y":
			return true, true
		case "false", "no", "off", "n":
			return false, true
		}
	}
	return false, false
}

// asMap views v as a mapping with string keys.
func asMap(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return x, true
	case map[string]float64:
		m := make(map[string]any, len(x))
		for k, f := range x {
			m[k] = f
		}
		return m, true
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, s := range x {
			m[k] = s
		}
		return m, true
	}
	return nil, false
}

// asList views v as a list.
func asList(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case []string:
		l := make([]any, len(x))
		for i, s := range x {
			l[i] = s
		}
		return l, true
	}
	return nil, false
}

// isEmpty reports whether an answer counts as not given: nil, a blank
// string, an empty list or an empty mapping.
func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	if s, ok := v.(string); ok {
		return strings.TrimSpace(s) == ""
	}
	if l, ok := asList(v); ok {
		return len(l) == 0
	}
	if m, ok := asMap(v); ok {
		return len(m) == 0
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Package dynabench holds the domain of the platform: tasks, rounds, contexts, examples, validations,
// users and models, the errors the rules return, and the small interfaces that storage, models and the
// HTTP layer implement. It imports no technology; sub-packages do.
package dynabench

import (
	"errors"
	"fmt"
)

// Error codes. Each maps to one HTTP status in the API layer (see internal/api).
const (
	EINVALID      = "invalid"       // well-formed but breaks a rule (422)
	EMALFORMED    = "malformed"     // cannot be parsed (400)
	EUNAUTHORIZED = "unauthorized"  // no or bad credentials (401)
	EFORBIDDEN    = "forbidden"     // authenticated, not allowed (403)
	ENOTFOUND     = "not_found"     // (404)
	ECONFLICT     = "conflict"      // duplicate or already done (409)
	ETOOLARGE     = "too_large"     // (413)
	ERATELIMIT    = "rate_limited"  // (429)
	EMODEL        = "model_failed"  // the model endpoint failed (502)
	EMODELTIMEOUT = "model_timeout" // the model endpoint timed out (504)
	EUNAVAILABLE  = "unavailable"   // a dependency (the database) is down (503)
	EINTERNAL     = "internal"      // anything else (500); never shown in detail
)

// Error is the one error type the rules return to callers. Message is safe to show to users.
type Error struct {
	Code    string
	Message string
	// Field names the one input field at fault, as a path ("input.label", "output[1].reference_name").
	Field string
	// Details lists every problem when there are several (config validation, multi-field input).
	Details []FieldError
}

// FieldError is one problem with one field.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %s", e.Code, e.Field, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Errorf returns an *Error with the code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// FieldErrorf returns an *Error about one field.
func FieldErrorf(code, field, format string, args ...any) *Error {
	return &Error{Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns an EINVALID error listing every problem; the first one is the headline.
func Invalid(problems []FieldError) *Error {
	if len(problems) == 0 {
		return nil
	}
	e := &Error{Code: EINVALID, Field: problems[0].Field, Message: problems[0].Message, Details: problems}
	if len(problems) > 1 {
		e.Message = fmt.Sprintf("%s (and %d more problems)", problems[0].Message, len(problems)-1)
	}
	return e
}

// ErrorCode returns the code of err if it is (or wraps) an *Error, EINTERNAL otherwise.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// IsCode reports whether err carries the code.
func IsCode(err error, code string) bool { return err != nil && ErrorCode(err) == code }

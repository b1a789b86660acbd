package release

import (
	"errors"
	"fmt"
)

// Sentinel errors, for callers to map onto API statuses with errors.Is.
var (
	// ErrEmpty: there is nothing to release (422).
	ErrEmpty = errors.New("release: no examples to release")
	// ErrExists: the release folder already exists; releases are immutable (409).
	ErrExists = errors.New("release: already exists")
	// ErrInvalid: an option or argument is wrong; the error is a *FieldError naming it (422).
	ErrInvalid = errors.New("release: invalid argument")
	// ErrMalformed: an imported file has a bad line; the error is an *ImportError naming it (422).
	ErrMalformed = errors.New("release: malformed input")
	// ErrTooLarge: an imported line, field or file is over its limit; also an *ImportError (413/422).
	ErrTooLarge = errors.New("release: input too large")
)

// FieldError says which option or argument is wrong and why. It matches ErrInvalid.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return fmt.Sprintf("release: %s: %s", e.Field, e.Msg) }

// Is makes errors.Is(err, ErrInvalid) true.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }

func invalid(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/dynabench-go/dynabench"
)

// Form carries a form's problems back into its page: one message per field path, next to the
// field, and a general message for the rest. The page keeps what the user typed.
type Form struct {
	Errors  map[string]string
	Error   string
	Success string
}

// Fail records a user-facing error (a *dynabench.Error other than an internal one) on the form
// and reports whether it did; other errors are for the error page.
func (f *Form) Fail(err error) bool {
	var de *dynabench.Error
	if !errors.As(err, &de) || statusFor(err) >= 500 && de.Code != dynabench.EMODEL && de.Code != dynabench.EMODELTIMEOUT {
		return false
	}
	if f.Errors == nil {
		f.Errors = map[string]string{}
	}
	problems := de.Details
	if len(problems) == 0 {
		problems = []dynabench.FieldError{{Field: de.Field, Message: de.Message}}
	}
	for _, p := range problems {
		if p.Field == "" {
			f.Error = p.Message
		} else if _, dup := f.Errors[p.Field]; !dup {
			f.Errors[p.Field] = p.Message
		}
	}
	if f.Error == "" {
		f.Error = "Please fix the problems marked below."
		if len(problems) == 1 && de.Field != "" {
			f.Error = de.Field + ": " + de.Message
		}
	}
	return true
}

// Err returns the message for one field ("" when it has none).
func (f *Form) Err(field string) string { return f.Errors[field] }

// statusFor is the HTTP status of an error.
func statusFor(err error) int {
	if st, ok := statusOf[dynabench.ErrorCode(err)]; ok {
		return st
	}
	return http.StatusInternalServerError
}

// formInt reads an integer form value; def when it is empty or not a number.
func formInt(r *http.Request, name string, def int) int {
	v, err := strconv.Atoi(r.FormValue(name))
	if err != nil {
		return def
	}
	return v
}

// pathID reads an id path segment; a malformed id names nothing.
func pathID(r *http.Request, name string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, dynabench.Errorf(dynabench.ENOTFOUND, "not found")
	}
	return id, nil
}

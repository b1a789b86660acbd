package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/validation"

	"github.com/dynabench-go/dynabench"
)

// statusOf maps each error code to its HTTP status (API.md "Errors").
var statusOf = map[string]int{
	dynabench.EMALFORMED:    http.StatusBadRequest,
	dynabench.EUNAUTHORIZED: http.StatusUnauthorized,
	dynabench.EFORBIDDEN:    http.StatusForbidden,
	dynabench.ENOTFOUND:     http.StatusNotFound,
	dynabench.ECONFLICT:     http.StatusConflict,
	dynabench.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	dynabench.EINVALID:      http.StatusUnprocessableEntity,
	dynabench.ERATELIMIT:    http.StatusTooManyRequests,
	dynabench.EMODEL:        http.StatusBadGateway,
	dynabench.EMODELTIMEOUT: http.StatusGatewayTimeout,
	dynabench.EUNAVAILABLE:  http.StatusServiceUnavailable,
	dynabench.EINTERNAL:     http.StatusInternalServerError,
}

// codeOf is the reverse, for errors huma raises itself (bad JSON, validation, body too large).
var codeOf = map[int]string{
	http.StatusBadRequest:            dynabench.EMALFORMED,
	http.StatusUnauthorized:          dynabench.EUNAUTHORIZED,
	http.StatusForbidden:             dynabench.EFORBIDDEN,
	http.StatusNotFound:              dynabench.ENOTFOUND,
	http.StatusMethodNotAllowed:      "method_not_allowed",
	http.StatusConflict:              dynabench.ECONFLICT,
	http.StatusRequestEntityTooLarge: dynabench.ETOOLARGE,
	http.StatusUnsupportedMediaType:  "unsupported_media_type",
	http.StatusUnprocessableEntity:   dynabench.EINVALID,
	http.StatusTooManyRequests:       dynabench.ERATELIMIT,
	http.StatusRequestTimeout:        "timeout",
	http.StatusServiceUnavailable:    dynabench.EUNAVAILABLE,
}

// ErrorBody is every error response: {"error": {"code", "message", "field"?, "details"?}}.
type ErrorBody struct {
	Err ErrorObject `json:"error"`
	// status is not serialised; huma reads it through GetStatus.
	status int
}

// ErrorObject describes what went wrong.
type ErrorObject struct {
	Code    string                 `json:"code" doc:"Machine-readable error code" example:"invalid"`
	Message string                 `json:"message" doc:"Human-readable explanation, safe to show"`
	Field   string                 `json:"field,omitempty" doc:"The input field at fault, as a path"`
	Details []dynabench.FieldError `json:"details,omitempty" doc:"Every problem, when there are several"`
}

func (e *ErrorBody) Error() string  { return e.Err.Message }
func (e *ErrorBody) GetStatus() int { return e.status }

// ContentType keeps errors as plain JSON (huma would otherwise say application/problem+json).
func (e *ErrorBody) ContentType(string) string { return "application/json" }

func init() {
	// huma raises its own errors (malformed JSON, schema validation, oversized bodies) through this
	// hook; route them into our error shape. huma's details carry the offending value, which may be
	// a password or a megabyte of text: it is dropped.
	huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
		code, ok := codeOf[status]
		if !ok {
			code = dynabench.EINTERNAL
			if status < 500 {
				code = strings.ReplaceAll(strings.ToLower(http.StatusText(status)), " ", "_")
			}
		}
		body := &ErrorBody{status: status, Err: ErrorObject{Code: code, Message: msg}}
		for _, err := range errs {
			var d *huma.ErrorDetail
			if errors.As(err, &d) {
				field := strings.TrimPrefix(strings.TrimPrefix(d.Location, "body."), "body")
				// A missing property is reported at its parent; name the property itself.
				var name string
				if n, _ := fmt.Sscanf(d.Message, validation.MsgExpectedRequiredProperty, &name); n == 1 {
					field = strings.TrimPrefix(field+"."+name, ".")
				}
				body.Err.Details = append(body.Err.Details, dynabench.FieldError{Field: field, Message: d.Message})
			}
		}
		if status == http.StatusUnsupportedMediaType {
			// curl -d sends application/x-www-form-urlencoded unless told otherwise.
			body.Err.Message = "send JSON with the header 'Content-Type: application/json' (" + msg + ")"
			body.Err.Field, body.Err.Details = "Content-Type", nil
			return body
		}
		if len(body.Err.Details) > 0 {
			if status == http.StatusBadRequest && body.Err.Details[0].Field == "" {
				body.Err.Details[0].Field = "body"
			}
			first := body.Err.Details[0]
			body.Err.Field = first.Field
			if status == http.StatusBadRequest {
				body.Err.Message = "malformed JSON: " + cleanJSONMessage(first.Message)
			} else {
				body.Err.Message = first.Message
			}
			if body.Err.Field == "" && status == http.StatusBadRequest {
				body.Err.Field = "body"
			}
		}
		return body
	}
}

func cleanJSONMessage(m string) string {
	m = strings.TrimPrefix(m, "json: ")
	if len(m) > 200 {
		m = m[:200]
	}
	return m
}

// StatusClientClosed is the status logged for a request whose client hung up before the answer.
const StatusClientClosed = 499

// toHTTPError turns a rule's error into the response error; unknown errors become a bare 500 and
// one log line, never the internal text.
func toHTTPError(ctx context.Context, log *slog.Logger, err error) error {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		// The client hung up and its request's context was cancelled under the store: no server
		// fault, nobody reads the answer, and no "internal error" line (nginx's 499 in the log).
		return &ErrorBody{status: StatusClientClosed, Err: ErrorObject{Code: "client_closed", Message: "the client closed the request"}}
	}
	var de *dynabench.Error
	if !errors.As(err, &de) {
		log.ErrorContext(ctx, "internal error", "err", err, "request_id", requestID(ctx))
		return &ErrorBody{status: 500, Err: ErrorObject{Code: dynabench.EINTERNAL, Message: "internal error; it has been logged"}}
	}
	status, ok := statusOf[de.Code]
	if !ok || status == 500 {
		log.ErrorContext(ctx, "internal error", "err", err, "request_id", requestID(ctx))
		return &ErrorBody{status: 500, Err: ErrorObject{Code: dynabench.EINTERNAL, Message: "internal error; it has been logged"}}
	}
	return &ErrorBody{status: status, Err: ErrorObject{Code: de.Code, Message: de.Message, Field: de.Field, Details: de.Details}}
}

// writeError writes an error outside huma (middleware, raw handlers).
func writeError(w http.ResponseWriter, status int, code, field, msg string) {
	writeJSON(w, status, ErrorBody{Err: ErrorObject{Code: code, Message: msg, Field: field}})
}

package builtin

import (
	"context"
	"fmt"

	"github.com/dynabench-go/dynabench"
)

// maxFieldBytes bounds one text field: the models are linear in it, and no task input is near this long.
const maxFieldBytes = 100_000

// invalid is the error for an input the model cannot read.
func invalid(format string, args ...any) error {
	return &dynabench.ModelError{Kind: dynabench.ModelInvalidAnswer, Err: fmt.Errorf(format, args...)}
}

// textField returns input[name] as a string.
func textField(input map[string]any, name string) (string, error) {
	v, ok := input[name]
	if !ok {
		return "", invalid("input has no %q field", name)
	}
	s, ok := v.(string)
	if !ok {
		return "", invalid("input field %q is %T, want a string", name, v)
	}
	if len(s) > maxFieldBytes {
		return "", invalid("input field %q is %d bytes, longer than %d", name, len(s), maxFieldBytes)
	}
	return s, nil
}

// ctxErr returns ctx's error as a model error, or nil while ctx is live.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return dynabench.AsModelError(err)
	}
	return nil
}

// predictAll runs predict over inputs in order, stopping at the first error or when ctx ends.
func predictAll(ctx context.Context, inputs []map[string]any,
	predict func(context.Context, map[string]any) (map[string]any, error)) ([]map[string]any, error) {
	out := make([]map[string]any, len(inputs))
	for i, in := range inputs {
		o, err := predict(ctx, in)
		if err != nil {
			me := dynabench.AsModelError(err)
			return nil, &dynabench.ModelError{Kind: me.Kind, Err: fmt.Errorf("input %d: %w", i, me.Err)}
		}
		out[i] = o
	}
	return out, nil
}

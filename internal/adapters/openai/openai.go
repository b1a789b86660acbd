// Package openai calls any OpenAI-compatible chat-completions server (vLLM, llama.cpp, Ollama, TGI,
// hosted APIs) as a model of a classification or extractive QA task.
//
// The model's URL is the API base ("http://host:8000/v1"; a URL already ending in /chat/completions
// is used as is). Each call sends one chat: a system message and a prompt rendered from a template
// per task kind (see DefaultPrompt), at temperature 0 by default. The reply is parsed strictly:
//
//   - classification: the reply is the label (ignoring case, space, quotes, final punctuation),
//     else the one label it mentions as a whole word; anything else is an invalid answer.
//   - extractive QA: the reply must be found in the context (ignoring case and differences in white
//     space); the answer is the context's own text of it. Anything else is an invalid answer.
//
// Probabilities: with option "logprobs": true the request asks for logprobs with top_logprobs=5, and
// the first answer token's alternatives are mapped onto the labels (a token counts for the one label
// it begins) and normalised. When the server sends no logprobs, or no alternative maps to a label,
// the answer has no prob field (never a made-up one-hot): the label stands alone, and the platform
// accepts an answer without prob. For QA, conf is the probability of the whole reply (the product of
// its tokens' probabilities) and is likewise left out without logprobs.
//
// Options: model (required), temperature (0 to 2, default 0), max_tokens (default 64), logprobs
// (default false), prompt (a template overriding the default: {field} is replaced by the input
// field's text, {labels} by the labels joined with ", "), system (the system message; "" sends
// none), and the common ones of package httpx (api_key_env / api_key_file send a Bearer token).
package openai

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters/httpx"
	"github.com/dynabench-go/dynabench/internal/adapters/spec"
)

// Default system messages per task kind.
const (
	DefaultClassificationSystem = "You are a careful annotator. Reply with the label only, nothing else."
	DefaultQASystem             = "You answer questions about a passage by copying the shortest span of the passage " +
		"that answers them. Reply with that span only, nothing else."
)

// DefaultMaxTokens bounds a reply unless max_tokens says otherwise: labels and spans are short.
const DefaultMaxTokens = 64

// Predictor calls one chat-completions model.
type Predictor struct {
	c           *httpx.Client
	spec        spec.Spec
	path        string
	model       string
	temperature float64
	maxTokens   int
	logprobs    bool
	system      string
	prompt      string
	fields      []string // the fields the prompt may name
}

// New builds the predictor for m; option problems are an EINVALID error naming each field.
func New(m *dynabench.Model, sp spec.Spec, d httpx.Options) (*Predictor, error) {
	o := httpx.NewOpts(m.Options)
	p := &Predictor{
		spec:        sp,
		path:        "/chat/completions",
		model:       o.String("model", ""),
		temperature: o.Float("temperature", 0, 0, 2),
		maxTokens:   o.Int("max_tokens", DefaultMaxTokens, 1, 1<<20),
		logprobs:    o.Bool("logprobs", false),
	}
	if p.model == "" && !o.Has("model") {
		o.Problem("options.model", "required: the model name the server knows")
	}
	if u, err := url.Parse(m.URL); err == nil && strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/chat/completions") {
		p.path = ""
	}
	p.setPrompt(o)
	p.c = httpx.NewClient(m, o, d)
	if err := o.Err(); err != nil {
		return nil, err
	}
	return p, nil
}

// setPrompt reads the prompt and system options, defaulting per task kind.
func (p *Predictor) setPrompt(o *httpx.Opts) {
	switch p.spec.Kind {
	case spec.Classification:
		p.fields, p.system = p.spec.TextFields, DefaultClassificationSystem
	case spec.ExtractiveQA:
		p.fields, p.system = []string{p.spec.ContextField, p.spec.QuestionField}, DefaultQASystem
		if p.spec.ContextField == "" || p.spec.QuestionField == "" {
			o.Problem("kind", "this QA task has no question field to ask about")
		}
	default:
		o.Problem("kind", "an openai model can serve classification and extractive QA tasks only")
		return
	}
	if v, ok := o.Raw("system"); ok {
		s, isString := v.(string)
		if !isString {
			o.Problem("options.system", "must be a string")
		}
		p.system = s
	}
	p.prompt = DefaultPrompt(p.spec)
	if tmpl := o.String("prompt", ""); tmpl != "" {
		if !usesAField(tmpl, p.fields) {
			o.Problem("options.prompt", "uses none of the task's fields (%s)", placeholders(p.fields))
		}
		p.prompt = tmpl
	}
}

// DefaultPrompt is the prompt template for a task: its fields one per line, then the instruction.
func DefaultPrompt(sp spec.Spec) string {
	var b strings.Builder
	if sp.Kind == spec.ExtractiveQA {
		fmt.Fprintf(&b, "%s: {%s}\n%s: {%s}\n\n", sp.ContextField, sp.ContextField, sp.QuestionField, sp.QuestionField)
		b.WriteString("Answer with a short span copied from the " + sp.ContextField + ".")
		return b.String()
	}
	for _, f := range sp.TextFields {
		fmt.Fprintf(&b, "%s: {%s}\n", f, f)
	}
	b.WriteString("\nAnswer with exactly one of: {labels}")
	return b.String()
}

func usesAField(tmpl string, fields []string) bool {
	for _, f := range fields {
		if f != "" && strings.Contains(tmpl, "{"+f+"}") {
			return true
		}
	}
	return false
}

func placeholders(fields []string) string {
	s := make([]string, 0, len(fields))
	for _, f := range fields {
		if f != "" {
			s = append(s, "{"+f+"}")
		}
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

// render fills the template in one pass, so text an annotator wrote is never expanded itself.
func (p *Predictor) render(input map[string]any) string {
	pairs := []string{"{labels}", strings.Join(p.spec.Labels, ", ")}
	for _, f := range p.fields {
		if f != "" {
			pairs = append(pairs, "{"+f+"}", spec.Text(input[f]))
		}
	}
	return strings.NewReplacer(pairs...).Replace(p.prompt)
}

// Health reports the endpoint's call statistics and breaker state.
func (p *Predictor) Health() httpx.Health { return p.c.Health() }

// Predict implements dynabench.Predictor.
func (p *Predictor) Predict(ctx context.Context, input map[string]any) (map[string]any, error) {
	var out map[string]any
	err := p.c.Do(ctx, httpx.Request{Path: p.path, Body: p.request(input), Decode: func(body []byte) error {
		reply, tokens, err := decode(body)
		if err != nil {
			return err
		}
		out, err = p.answer(input, reply, tokens)
		return err
	}})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// PredictBatch implements dynabench.Predictor: chat completions have no batch call, so the inputs
// are sent one per call, concurrently within the model's concurrency limit.
func (p *Predictor) PredictBatch(ctx context.Context, inputs []map[string]any) ([]map[string]any, error) {
	out := make([]map[string]any, len(inputs))
	err := httpx.FanOut(ctx, len(inputs), p.c.MaxConcurrent(), func(ctx context.Context, i int) error {
		o, err := p.Predict(ctx, inputs[i])
		if err != nil {
			return spec.Within(fmt.Sprintf("sample %d", i), err)
		}
		out[i] = o
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (p *Predictor) answer(input map[string]any, reply string, tokens []tokenLogprob) (map[string]any, error) {
	if p.spec.Kind == spec.ExtractiveQA {
		ctxText, _ := input[p.spec.ContextField].(string)
		span, ok := findSpan(ctxText, reply)
		if !ok {
			return nil, spec.Invalidf("reply %s is not a span of the %s", spec.Quote(strings.TrimSpace(reply)), p.spec.ContextField)
		}
		out := map[string]any{p.spec.AnswerField: span}
		if conf, ok := sequenceProb(tokens); ok && p.spec.ConfField != "" {
			out[p.spec.ConfField] = conf
		}
		return out, nil
	}
	label, err := parseLabel(p.spec, reply)
	if err != nil {
		return nil, err
	}
	out := map[string]any{p.spec.LabelField: label}
	if probs := labelProbs(p.spec, tokens); probs != nil && p.spec.ProbField != "" {
		out[p.spec.ProbField] = spec.ProbValue(probs)
	}
	return out, nil
}

package openai

import (
	"encoding/json"
	"strings"

	"github.com/dynabench-go/dynabench/internal/adapters/spec"
)

// The chat-completions wire format: only the fields this adapter sends or reads.

type chatRequest struct {
	Model       string    `json:"model"`
	Messages    []message `json:"messages"`
	Temperature float64   `json:"temperature"`
	MaxTokens   int       `json:"max_tokens,omitempty"`
	Logprobs    bool      `json:"logprobs,omitempty"`
	TopLogprobs int       `json:"top_logprobs,omitempty"`
	Stream      bool      `json:"stream"`
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
		Logprobs *struct {
			Content []tokenLogprob `json:"content"`
		} `json:"logprobs"`
	} `json:"choices"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

type tokenLogprob struct {
	Token       string  `json:"token"`
	Logprob     float64 `json:"logprob"`
	TopLogprobs []struct {
		Token   string  `json:"token"`
		Logprob float64 `json:"logprob"`
	} `json:"top_logprobs"`
}

// topLogprobs is how many alternatives a logprobs request asks for per token.
const topLogprobs = 5

func (p *Predictor) request(input map[string]any) chatRequest {
	r := chatRequest{Model: p.model, Temperature: p.temperature, MaxTokens: p.maxTokens}
	if p.system != "" {
		r.Messages = append(r.Messages, message{Role: "system", Content: p.system})
	}
	r.Messages = append(r.Messages, message{Role: "user", Content: p.render(input)})
	if p.logprobs {
		r.Logprobs, r.TopLogprobs = true, topLogprobs
	}
	return r
}

// decode reads the first choice's text and token logprobs. Content may be a string or a list of
// parts ({"type": "text", "text": ...}), as some servers send.
func decode(body []byte) (string, []tokenLogprob, error) {
	var r chatResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return "", nil, spec.Invalidf("malformed chat completion: %v", err)
	}
	if len(r.Choices) == 0 {
		if r.Error != nil {
			return "", nil, spec.Invalidf("the server answered an error: %s", spec.Quote(r.Error.Message))
		}
		return "", nil, spec.Invalidf("the chat completion has no choices")
	}
	c := r.Choices[0]
	reply, err := content(c.Message.Content)
	if err != nil {
		return "", nil, err
	}
	var tokens []tokenLogprob
	if c.Logprobs != nil {
		tokens = c.Logprobs.Content
	}
	return reply, tokens, nil
}

func content(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", spec.Invalidf("the reply has no content")
	}
	var s *string
	if err := json.Unmarshal(raw, &s); err == nil {
		if s == nil {
			return "", spec.Invalidf("the reply has no content")
		}
		return *s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", spec.Invalidf("the reply's content is neither text nor a list of parts")
	}
	var b strings.Builder
	for _, part := range parts {
		if part.Type == "text" || part.Type == "" {
			b.WriteString(part.Text)
		}
	}
	return b.String(), nil
}

package host

import (
	"errors"
	"fmt"
	"strings"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/engine/chat"
	"github.com/picolm/picolm-wasm/engine/grammar"
)

// ParamError is a bad request blamed on one field of the JS API's request
// (Param, in OpenAI's naming: "tools[0].function.parameters", or run()'s
// option: "jsonSchema", "grammar"). It wraps ErrBadParams (or another
// error). Msg, when set, is the whole message (the Cloudflare Worker's for
// the same request); otherwise the message is Err's.
type ParamError struct {
	Param string
	Msg   string
	Err   error
}

func (e *ParamError) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	return e.Err.Error()
}
func (e *ParamError) Unwrap() error { return e.Err }

func badParam(param, format string, args ...any) error {
	return &ParamError{Param: param, Msg: fmt.Sprintf(format, args...), Err: ErrBadParams}
}

// Param is the field a bad request is blamed on ("" when none is).
func Param(err error) string {
	var pe *ParamError
	if errors.As(err, &pe) {
		return pe.Param
	}
	return ""
}

// MaxTools is the most tools a request may have (OpenAI's limit, as the
// Cloudflare Worker's).
const MaxTools = 128

// LogprobAlt is one of a token's top_logprobs, in OpenAI's shape.
type LogprobAlt struct {
	Token   string
	Logprob float64
	Bytes   []int
}

// Logprob is a generated token's entry of logprobs.content: the token, its
// log-probability under the model's own distribution (engine.Logprobs) and
// the most likely tokens at that step.
type Logprob struct {
	LogprobAlt
	Top []LogprobAlt
}

// toolGrammar checks r's tools and returns the grammar of its calls: nil
// when the reply cannot call any (no tools, tool_choice "none", or "auto"
// with no tools), as the Cloudflare Worker decides it. A tool set and choice
// seen before (w.grams: kept only once every check passed) is not checked
// or compiled again.
func (w *Worker) toolGrammar(r *GenerateRequest) (*grammar.GBNF, error) {
	if len(r.Tools) > MaxTools {
		return nil, badParam("tools", "at most %d tools are allowed (got %d)", MaxTools, len(r.Tools))
	}
	c := r.ToolChoice
	var key strings.Builder
	fmt.Fprintf(&key, "tools\x00%s\x00%v\x00%s", c.Mode, c.Parallel, c.Function)
	for _, t := range r.Tools {
		key.WriteString("\x00" + t.Name + "\x00" + string(t.Parameters))
	}
	g, ok := w.grams.Lookup(key.String())
	if !ok {
		seen := map[string]bool{}
		for i, t := range r.Tools {
			if seen[t.Name] {
				return nil, badParam(fmt.Sprintf("tools[%d].function.name", i), "two tools are named %q", t.Name)
			}
			seen[t.Name] = true
			if err := chat.CheckTool(t); err != nil {
				return nil, badParam(fmt.Sprintf("tools[%d].function.parameters", i), "tools[%d].function.parameters cannot be used: %s", i, strings.TrimPrefix(err.Error(), chat.ErrTools.Error()+": "))
			}
		}
		calls, err := c.Calls(r.Tools)
		switch {
		case errors.Is(err, chat.ErrUnknownFunction):
			return nil, badParam("tool_choice.function.name", "%s", strings.TrimPrefix(err.Error(), chat.ErrUnknownFunction.Error()+": "))
		case err != nil:
			return nil, badParam("tool_choice", "%s", strings.TrimPrefix(err.Error(), chat.ErrNeedsTools.Error()+": "))
		case !calls: // "none", or "auto" with no tools
			return nil, nil
		}
	}
	if r.JSON || r.Grammar != "" || r.JSONSchema != "" {
		return nil, badParam("response_format", "response_format json_object or json_schema, or a grammar, cannot constrain a reply that may call tools: send tool_choice \"none\" with them")
	}
	if ok {
		return g, nil
	}
	g, err := chat.ToolGrammar(r.Tools, c)
	if err != nil {
		return nil, badParam("tools", "the tools cannot be called: %v", err)
	}
	w.grams.Put(key.String(), g)
	return g, nil
}

// logprob fills w.lps[i], growing it as needed, with the entry of token
// id from lp as the engine filled it. Entries and their Top slices are
// reused from token to token, and token texts come from w.tokenTexts: no
// allocation once the buffers have grown.
func (w *Worker) logprob(i, id int, lp *engine.Logprobs) {
	if i == len(w.lps) {
		w.lps = append(w.lps, Logprob{})
	}
	e := &w.lps[i]
	e.LogprobAlt = w.tokenText(id)
	e.Logprob = finiteLogprob(lp.Logprob)
	e.Top = e.Top[:0]
	for _, t := range lp.Top {
		a := w.tokenText(t.ID)
		a.Logprob = finiteLogprob(t.Logprob)
		e.Top = append(e.Top, a)
	}
}

// tokenText is token id's text and bytes (engine.Model.TokenText), kept
// for the model's lifetime once met.
func (w *Worker) tokenText(id int) LogprobAlt {
	if w.tokenTexts == nil {
		w.tokenTexts = make([]LogprobAlt, w.model.Config.VocabSize)
	}
	t := &w.tokenTexts[id]
	if t.Bytes == nil {
		t.Token, t.Bytes = w.model.TokenText(id)
		if t.Bytes == nil {
			t.Bytes = []int{}
		}
	}
	return *t
}

// finiteLogprob is a log probability JSON can hold: -Inf (a probability
// that underflowed) becomes OpenAI's floor, -9999, as the Worker writes it.
func finiteLogprob(l float32) float64 {
	if !(l >= -9999) {
		return -9999
	}
	return float64(l)
}

// EmbedInput is one input of an embeddings request: text (tokenized with
// BOS first, as a prompt) or token ids.
type EmbedInput struct {
	Text   string
	Tokens []int
	IsText bool
}

// Embedding is one input's vector and its token count.
type Embedding struct {
	Vector []float32 // [dim], unit L2 norm
	Tokens int
}

// MaxEmbedInputs is the most inputs one embeddings request may have
// (OpenAI's limit, as the Worker's).
const MaxEmbedInputs = 2048

// Embed embeds each input on its own with engine.Session.Embed (the model's
// pooling of the final norm's output, L2-normalised), as the Cloudflare
// Worker's /v1/embeddings does. A model that makes no embeddings gets an
// error wrapping engine.ErrNoEmbedding (Code: embeddings_not_supported).
func (w *Worker) Embed(inputs []EmbedInput) ([]Embedding, error) {
	if w.model == nil {
		return nil, ErrNoModel
	}
	if !w.running.CompareAndSwap(false, true) {
		return nil, ErrBusy
	}
	defer w.running.Store(false)
	if p, err := w.model.Pooling(); err != nil {
		return nil, &ParamError{Param: "model", Err: fmt.Errorf("the model cannot make embeddings: %w (pooling %s)", err, p)}
	}
	if len(inputs) == 0 {
		return nil, badParam("input", "input is an empty array")
	}
	if len(inputs) > MaxEmbedInputs {
		return nil, badParam("input", "at most %d inputs are allowed (got %d)", MaxEmbedInputs, len(inputs))
	}
	toks := make([][]int, len(inputs))
	for i, in := range inputs {
		param := "input"
		if len(inputs) > 1 {
			param = fmt.Sprintf("input[%d]", i)
		}
		t := in.Tokens
		if in.IsText {
			if in.Text == "" {
				return nil, badParam(param, "%s is an empty string", param)
			}
			t = w.model.Tokenizer.Encode(in.Text, true)
		}
		if len(t) == 0 {
			return nil, badParam(param, "%s is empty", param)
		}
		if len(t) > w.sess.Context() {
			return nil, &ParamError{Param: param, Err: fmt.Errorf("%w: %s is %d tokens; the context holds %d", engine.ErrContext, param, len(t), w.sess.Context())}
		}
		for _, id := range t {
			if id < 0 || id >= w.model.Config.VocabSize {
				return nil, badParam(param, "%s: token id %d is outside the vocabulary (0 to %d)", param, id, w.model.Config.VocabSize-1)
			}
		}
		toks[i] = t
	}
	out := make([]Embedding, len(inputs))
	for i, t := range toks {
		v := make([]float32, w.model.Config.Dim)
		if err := w.sess.Embed(t, v); err != nil {
			w.sess.Rewind(0)
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
		out[i] = Embedding{Vector: v, Tokens: len(t)}
	}
	return out, nil
}

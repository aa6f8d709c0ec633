package engine

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/picolm/picolm-wasm/engine/grammar"
	"github.com/picolm/picolm-wasm/engine/sample"
)

// GenerateOptions are the knobs of one generation.
type GenerateOptions struct {
	MaxTokens int           // tokens to generate at most; <= 0 means until the context is full
	Sampling  sample.Params // temperature 0 is greedy
	JSON      bool          // constrain the output to one complete JSON value
}

// StopReason says why generation ended.
type StopReason string

const (
	StopEOS       StopReason = "eos"        // the model emitted an end-of-generation token
	StopMaxTokens StopReason = "max_tokens" // MaxTokens were generated
	StopContext   StopReason = "context"    // the KV cache is full
	StopJSON      StopReason = "json"       // the JSON value closed
	StopCaller    StopReason = "stopped"    // the callback asked to stop
)

// Stats describe one generation.
type Stats struct {
	PromptTokens int           // tokens in the prompt
	CachedTokens int           // prompt tokens whose state was already in the KV cache
	Generated    int           // tokens generated
	Prefill      time.Duration // time spent on the uncached prompt tokens
	Decode       time.Duration // time spent generating
	Stop         StopReason
}

// Emit receives each generated token and the text it completes (only whole
// UTF-8 characters; possibly empty). Returning false stops generation.
type Emit func(id int, text []byte) bool

// ErrEmptyPrompt is returned when there is no token to start from.
var ErrEmptyPrompt = errors.New("empty prompt: at least one token (BOS) is needed")

// ErrJSONBudget is returned (wrapped), before any token is generated, when
// JSON output is asked for and no complete JSON value fits in the tokens that
// may be generated (MaxTokens, or the room left in the context).
var ErrJSONBudget = errors.New("no complete JSON value fits")

// Generate continues from prompt. Cached positions that match a prefix of
// prompt are reused (at least the last prompt token is always run to get
// logits), then tokens are sampled and passed to emit until a stop condition.
func (s *Session) Generate(prompt []int, o GenerateOptions, emit Emit) (Stats, error) {
	st := Stats{PromptTokens: len(prompt)}
	if len(prompt) == 0 {
		return st, ErrEmptyPrompt
	}
	if len(prompt) > s.ctx {
		return st, fmt.Errorf("%w: the prompt has %d tokens, the context holds %d", ErrContext, len(prompt), s.ctx)
	}

	// Reuse the cached prefix; always recompute the last prompt token.
	keep := commonPrefix(s.tokens, prompt)
	keep = min(keep, len(prompt)-1)
	s.Rewind(keep)
	st.CachedTokens = keep

	t0 := time.Now()
	logits, err := s.Prefill(prompt[keep:])
	if err != nil {
		return st, err
	}
	st.Prefill = time.Since(t0)

	t1 := time.Now()
	err = s.decode(logits, o, emit, &st)
	st.Decode = time.Since(t1)
	return st, err
}

// decode samples tokens from logits onwards until a stop condition.
func (s *Session) decode(logits []float32, o GenerateOptions, emit Emit, st *Stats) error {
	var err error
	tk := s.m.Tokenizer
	sampler := sample.New(s.m.Config.VocabSize, o.Sampling)
	dec := tk.NewDecoder()
	text := make([]byte, 0, 256)
	var g *grammar.Grammar
	var gs grammar.State
	if o.JSON {
		g = s.m.jsonGrammar()
		gs = g.Start()
	}
	maxTokens := o.MaxTokens
	if maxTokens <= 0 {
		maxTokens = s.ctx
	}
	if g != nil {
		if err := jsonFits(g, &gs, min(maxTokens, s.ctx-len(s.tokens))); err != nil {
			return err
		}
	}
	for {
		room := min(maxTokens-st.Generated, s.ctx-len(s.tokens))
		if room <= 0 {
			st.Stop = StopMaxTokens
			if st.Generated < maxTokens {
				st.Stop = StopContext
			}
			break
		}
		if g != nil {
			g.Mask(&gs, logits, room)
		}
		id := sampler.Sample(logits)
		if g != nil {
			if err := g.Accept(&gs, id); err != nil {
				return fmt.Errorf("json grammar: %w", err)
			}
		}
		if tk.IsEOG(id) {
			st.Stop = StopEOS
			break
		}
		st.Generated++
		text = dec.Append(text[:0], id)
		if !emit(id, text) {
			st.Stop = StopCaller
			break
		}
		if g != nil && gs.Done() {
			st.Stop = StopJSON
			break
		}
		if logits, err = s.Forward(id); err != nil {
			return err
		}
	}
	if rest := dec.Flush(text[:0]); len(rest) > 0 {
		emit(-1, rest)
	}
	return nil
}

// jsonFits checks that a complete JSON value can be generated from gs in
// room tokens.
func jsonFits(g *grammar.Grammar, gs *grammar.State, room int) error {
	c := g.ClosingCost(gs)
	switch {
	case c >= grammar.Unclosable:
		return fmt.Errorf("%w: this vocabulary has no tokens that make one", ErrJSONBudget)
	case c > room:
		unit := "tokens"
		if c == 1 {
			unit = "token"
		}
		return fmt.Errorf("%w: the shortest takes %d %s with this vocabulary, and %d may be generated", ErrJSONBudget, c, unit, max(room, 0))
	}
	return nil
}

func commonPrefix(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// jsonGrammar is the model's JSON grammar, compiled over its vocabulary on
// first use and shared by every session.
type jsonGrammar struct {
	once sync.Once
	g    *grammar.Grammar
}

func (m *Model) jsonGrammar() *grammar.Grammar {
	m.grammar.once.Do(func() {
		tk := m.Tokenizer
		pieces := make([][]byte, tk.VocabSize())
		for id := range pieces {
			if !tk.IsControl(id) {
				pieces[id] = tk.Piece(id)
			}
		}
		m.grammar.g = grammar.NewJSON(pieces, tk.EOS())
	})
	return m.grammar.g
}

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
	// Grammar, when set, constrains the output to a sentence of this GBNF grammar (compiled once with
	// grammar.ParseGBNF, or from a JSON Schema with grammar.FromJSONSchema; each session matches it with
	// its own matcher). It cannot be combined with JSON.
	Grammar *grammar.GBNF
	// Logprobs, when set, is filled before each call of emit for a sampled
	// token with its log-probability and the most likely alternatives
	// (NewLogprobs), from the raw logits.
	Logprobs *Logprobs
}

// StopReason says why generation ended.
type StopReason string

const (
	StopEOS       StopReason = "eos"        // the model emitted an end-of-generation token
	StopMaxTokens StopReason = "max_tokens" // MaxTokens were generated
	StopContext   StopReason = "context"    // the KV cache is full
	StopJSON      StopReason = "json"       // the JSON value closed
	StopGrammar   StopReason = "grammar"    // the output is complete and the grammar allows nothing more
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

// ErrGrammarBudget is returned (wrapped), before any token is generated, when
// a grammar is asked for and no complete sentence of it fits in the tokens
// that may be generated.
var ErrGrammarBudget = errors.New("no complete output of the grammar fits")

// ErrGrammarStuck is returned (wrapped) when the grammar allows no token of
// the vocabulary before its output is complete (a character the vocabulary
// cannot spell). The tokens generated so far have been emitted.
var ErrGrammarStuck = errors.New("the grammar allows no token of this vocabulary")

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
	var gm *grammar.Matcher
	if o.Grammar != nil {
		if o.JSON {
			return errors.New("JSON and Grammar cannot both constrain one generation")
		}
		gm = s.matcher(o.Grammar)
		if err := grammarFits(gm, min(maxTokens, s.ctx-len(s.tokens))); err != nil {
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
		if o.Logprobs != nil {
			o.Logprobs.observe(logits) // before any mask changes them
		}
		if g != nil {
			g.Mask(&gs, logits, room)
		}
		if gm != nil && !gm.Mask(logits, room) {
			err = fmt.Errorf("%w: after %d tokens, nothing can follow and the output is not complete", ErrGrammarStuck, st.Generated)
			break
		}
		id := sampler.Sample(logits)
		if g != nil {
			if err := g.Accept(&gs, id); err != nil {
				return fmt.Errorf("json grammar: %w", err)
			}
		}
		if gm != nil {
			if err := gm.Accept(id); err != nil {
				return fmt.Errorf("grammar: %w", err)
			}
		}
		if tk.IsEOG(id) {
			st.Stop = StopEOS
			break
		}
		st.Generated++
		if o.Logprobs != nil {
			o.Logprobs.set(logits[id]) // a sampled token was not masked: its logit is the raw one
		}
		text = dec.Append(text[:0], id)
		if !emit(id, text) {
			st.Stop = StopCaller
			break
		}
		if g != nil && gs.Done() {
			st.Stop = StopJSON
			break
		}
		if gm != nil && gm.Done() {
			st.Stop = StopGrammar
			break
		}
		if logits, err = s.Forward(id); err != nil {
			return err
		}
	}
	if rest := dec.Flush(text[:0]); len(rest) > 0 {
		emit(-1, rest)
	}
	return err
}

// matcher returns the session's matcher of g at its start, made on first use
// and kept (with its buffers) while the session generates under g.
func (s *Session) matcher(g *grammar.GBNF) *grammar.Matcher {
	if s.gm == nil || s.gm.Grammar() != g {
		s.gm = grammar.NewMatcher(g, s.m.vocab())
	} else {
		s.gm.Reset()
	}
	return s.gm
}

// grammarFits checks that a complete sentence of the grammar can be generated
// in room tokens.
func grammarFits(gm *grammar.Matcher, room int) error {
	c := gm.ClosingCost()
	switch {
	case c >= grammar.Unclosable:
		return fmt.Errorf("%w: this vocabulary has no tokens that spell one", ErrGrammarBudget)
	case c > room:
		return fmt.Errorf("%w: the shortest takes %d tokens with this vocabulary, and %d may be generated", ErrGrammarBudget, c, max(room, 0))
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

// jsonGrammar is the model's vocabulary compiled for grammars, and its JSON
// grammar, made on first use and shared by every session.
type jsonGrammar struct {
	once sync.Once
	v    *grammar.Vocab
	g    *grammar.Grammar
}

func (m *Model) jsonGrammar() *grammar.Grammar {
	m.vocab()
	return m.grammar.g
}

// vocab is the model's vocabulary compiled for grammars (GBNF matchers and
// the JSON automaton share it).
func (m *Model) vocab() *grammar.Vocab {
	m.grammar.once.Do(func() {
		tk := m.Tokenizer
		pieces := make([][]byte, tk.VocabSize())
		for id := range pieces {
			if !tk.IsControl(id) {
				pieces[id] = tk.Piece(id)
			}
		}
		m.grammar.v = grammar.NewVocab(pieces, tk.EOS())
		m.grammar.g = m.grammar.v.JSON()
	})
	return m.grammar.v
}

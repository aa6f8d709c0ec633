// Package grammar constrains generation: token by token, it decides which tokens of the vocabulary may
// come next. Two engines walk the same vocabulary trie (Vocab, trie.go): the JSON pushdown automaton of
// this file and pda.go (JSON mode), and GBNF grammars (gbnf.go: llama.cpp's syntax, compiled once;
// matcher.go: a Matcher per generation; jsonschema.go: JSON Schema to GBNF). JSON mode keeps the automaton:
// BenchmarkMaskJSONModes measures it against the same language as GBNF, and TestJSONGrammarAgreesWithPDA
// holds the two to the same documents and masks.
//
// The JSON automaton constrains generation to JSON (RFC 8259): a pushdown automaton over bytes.
//
// What is accepted: one JSON value (RFC 8259) with the full grammar: objects, arrays, strings with every
// escape including \uXXXX, numbers -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, true, false, null and
// whitespace. Mask asks for an object or an array at the top level, as picoLM's --json does, while one fits
// the token budget; a bare number, string or literal only when the budget is too small for either (a
// budget of 1 with no "{}" or "[]" token gets a digit). Three limits make generation always end well:
//   - nesting deeper than MaxDepth is rejected;
//   - at most MaxWhitespace consecutive whitespace bytes;
//   - strings must be valid UTF-8 (RFC 8259 §8.1), so an incomplete multi-byte sequence is finished before
//     the string can close. No whitespace is accepted after the top-level value: once it closes only the
//     end-of-generation token is allowed.
//
// A token is allowed only if every one of its bytes is accepted in turn, so a token may span several JSON
// parts (`":`, `},{"`). Mask also keeps a budget: given how many tokens may still be generated, it allows
// only tokens after which the document can still be closed in time, so the output is always complete JSON
// even when the token limit cuts generation short. The closing cost it uses (ClosingCost) is the number of
// tokens of one way to close that exists in the vocabulary: at the start, the cheapest first token (one
// token when a digit, "{}" or a one-token literal exists) and then one single-byte token per byte of the
// shortest closing text. If even the start costs more than the whole budget, no complete value fits:
// ClosingCost says so before generation begins.
//
// Cost: the vocabulary is compiled once into a trie (tokens sorted by their bytes; a subtree is a contiguous
// range of that order). Mask walks the trie with the automaton, copying the 16-byte State down the tree and
// pruning at the first rejected byte, so a rejected subtree costs one write per token in it. Inside a
// string, subtrees whose tokens are all plain string text (no quote, backslash or control byte, complete
// UTF-8) are decided without descending.
package grammar

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"unicode/utf8"
)

// ErrRejected is returned (wrapped) by Accept for a token the grammar does not allow.
var ErrRejected = errors.New("grammar: token not allowed")

// Unclosable is the closing cost of a state this vocabulary has no tokens to close (see ClosingCost).
const Unclosable = 1 << 30

const infCost = Unclosable

// Grammar is the JSON grammar compiled for one vocabulary. It is read-only after NewJSON and safe for
// concurrent use; each generation keeps its own State.
type Grammar struct {
	*trie
	// The closing costs of the two start modes: the fewest tokens of a whole value (startCost) and of a
	// whole object or array (objCost), each first token followed by single-byte tokens; infCost if none.
	startCost, objCost int
}

// NewJSON compiles the JSON grammar for a vocabulary: pieces[id] is the bytes token id emits (empty for
// control tokens, which are never allowed) and eos the end-of-generation token (allowed only once the
// top-level value is complete; pass -1 if there is none). pieces is retained, not copied.
func NewJSON(pieces [][]byte, eos int) *Grammar { return NewVocab(pieces, eos).JSON() }

// JSON compiles the JSON grammar over v (sharing its trie).
func (v *Vocab) JSON() *Grammar {
	g := &Grammar{trie: v.t}
	// The start's costs: one token, then what is left after it. Whitespace first never makes it cheaper
	// (the states are counted at the whitespace cap, so the first token is one allowed after any run).
	g.startCost = g.firstTokenCost(State{mode: mStart, ws: MaxWhitespace})
	g.objCost = g.firstTokenCost(State{mode: mStartObj, ws: MaxWhitespace})
	return g
}

// firstTokenCost is 1 + the lowest closing cost reachable with one token from st, or infCost.
func (g *Grammar) firstTokenCost(st State) int {
	c := g.minCost(0, st)
	if c >= infCost {
		return infCost
	}
	return 1 + c
}

// plainText reports whether b, inside a string, leaves the automaton's state unchanged: complete UTF-8
// with no quote, backslash or control byte.
func plainText(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return utf8.Valid(b)
}

// Start returns the state before any output.
func (g *Grammar) Start() State { return start() }

// ClosingCost returns how many tokens the shortest completion from st needs: at the start, the fewest
// tokens of a whole value; after it, one single-byte token per byte of the shortest closing text (finish the
// current token, then close every open container). It is 0 once the output is Complete, and Unclosable
// if the vocabulary lacks the tokens the closing needs. A generation whose budget is smaller than
// ClosingCost(Start()) cannot end in a complete value.
func (g *Grammar) ClosingCost(st *State) int { return g.cost(st) }

func (g *Grammar) cost(st *State) int {
	n := 0
	ok := true
	need := func(c byte) {
		ok = ok && g.single[c]
		n++
	}
	key := func() {
		if st.key {
			need(':')
			need('0')
		}
	}
	switch st.mode {
	case mDone:
		return 0
	case mStart:
		return g.startCost
	case mStartObj:
		return g.objCost
	case mColon:
		need(':')
		need('0')
	case mObjKey:
		need('"')
		need('"')
		need(':')
		need('0')
	case mValue, mMinus, mDot, mExp, mExpSign:
		need('0')
	case mStr:
		if st.u8need > 0 {
			need(st.u8lo)
			if st.u8need > 1 {
				ok = ok && g.single[0x80]
				n += int(st.u8need) - 1
			}
		}
		need('"')
		key()
	case mEsc:
		need('"')
		need('"')
		key()
	case mHex:
		ok = ok && g.single['0']
		n += int(st.aux)
		need('"')
		key()
	case mLit:
		for i := st.aux; i < litEnd(st.aux); i++ {
			need(lits[i])
		}
	}
	objects := bits.OnesCount64(st.stack & (1<<st.depth - 1))
	if objects > 0 && !g.single['}'] || int(st.depth) > objects && !g.single[']'] {
		ok = false
	}
	if !ok {
		return infCost
	}
	return n + int(st.depth)
}

// Accept advances st past token id. It returns an error wrapping ErrRejected, and leaves st unchanged, if
// the grammar does not allow the token. The end-of-generation token is accepted only when st is done.
func (g *Grammar) Accept(st *State, id int) error {
	if id < 0 || id >= g.vocab {
		return fmt.Errorf("%w: token id %d outside the vocabulary of %d", ErrRejected, id, g.vocab)
	}
	if id == g.eos {
		if !st.Complete() {
			return fmt.Errorf("%w: end of generation before the JSON value is complete (in %s)", ErrRejected, st.String())
		}
		return nil
	}
	p := g.pieces[id]
	if len(p) == 0 {
		return fmt.Errorf("%w: control token %d emits no text", ErrRejected, id)
	}
	s := *st
	for i, c := range p {
		if !s.step(c) {
			return fmt.Errorf("%w: token %d %q: byte %d (%q) not allowed in %s", ErrRejected, id, p, i, c, s.String())
		}
	}
	*st = s
	return nil
}

// Allowed reports whether token id may follow st under the grammar alone (no budget).
func (g *Grammar) Allowed(st *State, id int) bool {
	s := *st
	return g.Accept(&s, id) == nil
}

// Mask sets logits[id] = -Inf for every token not allowed after st. remaining is how many tokens may still
// be generated, this one included: a token is allowed only if the document can still be closed within
// remaining-1 further tokens, so the output is complete when the budget runs out. At the start it allows
// only objects and arrays while one fits in remaining tokens, and any value otherwise. (If st is already
// over budget, which happens only when the whole budget is smaller than ClosingCost(Start()), Mask allows
// the tokens that bring the closing cost lowest.) The end-of-generation token is allowed once the output is
// Complete; once st is done, only it.
// logits has one entry per token; entries past the vocabulary are set to -Inf, and a shorter slice is
// masked entirely. Mask does not allocate.
func (g *Grammar) Mask(st *State, logits []float32, remaining int) {
	ninf := float32(math.Inf(-1))
	if len(logits) < g.vocab {
		for i := range logits {
			logits[i] = ninf
		}
		return
	}
	for i := g.vocab; i < len(logits); i++ {
		logits[i] = ninf
	}
	if st.Done() {
		for i := range logits[:g.vocab] {
			if i != g.eos {
				logits[i] = ninf
			}
		}
		return
	}
	if g.eos >= 0 && !st.Complete() {
		logits[g.eos] = ninf
	}
	for _, id := range g.controls {
		logits[id] = ninf
	}
	remaining = max(remaining, 1)
	limit := remaining - 1
	s := *st
	if s.mode == mStart {
		// An object or array if one fits; a bare value only if none does.
		if s.mode = mStartObj; g.minCost(0, s) > limit {
			s.mode = mStart
		}
	}
	if g.cost(&s) > remaining {
		limit = g.minCost(0, s)
	}
	g.walk(0, s, logits, limit)
}

// walk masks the tokens of node n's subtree, st being the state after the node's prefix.
func (g *Grammar) walk(n int32, st State, logits []float32, limit int) {
	nd := &g.nodes[n]
	if nd.own > nd.lo && g.cost(&st) > limit {
		g.maskRange(nd.lo, nd.own, logits)
	}
	if nd.plain && st.mode == mStr && st.u8need == 0 {
		// Every token below leaves the state as it is.
		if g.cost(&st) > limit {
			g.maskRange(nd.own, nd.hi, logits)
		}
		return
	}
	for e := nd.edge; e < nd.edge+nd.nedge; e++ {
		child := g.edgeNode[e]
		s := st
		if s.step(g.edgeByte[e]) {
			g.walk(child, s, logits, limit)
		} else {
			c := &g.nodes[child]
			g.maskRange(c.lo, c.hi, logits)
		}
	}
}

// minCost returns the lowest closing cost reachable with one token from st (infCost if none is allowed).
func (g *Grammar) minCost(n int32, st State) int {
	nd := &g.nodes[n]
	best := infCost
	if nd.own > nd.lo {
		best = g.cost(&st)
	}
	for e := nd.edge; e < nd.edge+nd.nedge; e++ {
		s := st
		if s.step(g.edgeByte[e]) {
			best = min(best, g.minCost(g.edgeNode[e], s))
		}
	}
	return best
}

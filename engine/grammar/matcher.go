package grammar

// The GBNF matcher: a set of parse stacks advanced one byte at a time, as llama.cpp's grammar engine does
// one code point at a time.
//
// A stack is a chain of frames. The top frame's pos is the character element to match next; every frame
// below is a return position (where to continue when the rule above it ends). Frames are immutable and
// shared between stacks (a parent index, not a copy), and hash-consed: the same (pos, parent) gets the
// same frame id while both exist, so identical stacks reached by different paths are one. The empty
// stack (-1) means the root rule is complete.
//
// After a character matches, closure pushes the successor: a reference pushes the referenced rule's
// alternatives (with a return frame, skipped when the reference ends its alternative: tail calls keep
// x* at a constant depth), an end of alternative pops to the return frame. Compilation refused left
// recursion, so closure ends.
//
// Bytes of a multi-byte UTF-8 character leave the stacks as they are and only narrow the range of code
// points the character can still become; a byte is accepted only if some stack's class meets that range.
//
// Mask walks the vocabulary trie stepping the state byte by byte; distinct trie paths mostly reach the
// same few states (inside a string, every plain character leads back to where it started), so each Mask
// call numbers the states it meets by content and computes each state's transition on a byte once
// (up to maxCached states; past that it steps without the cache).
//
// Memory: frames and stack sets live in slices that grow to the largest size needed and are then reused.
// Mask appends the states it meets and truncates them when it returns; Accept commits a token and
// compacts the live frames into the second buffer. In steady state nothing allocates.

import (
	"fmt"
	"math"
	"slices"
	"unicode/utf8"
)

const (
	hashBits = 12
	// MaxStacks bounds the parse stacks alive at once (an ambiguous grammar can multiply them); a byte that
	// would need more is refused.
	MaxStacks = 1 << 14
)

type frame struct {
	pos, parent int32
	cost        int32 // tokens to finish this stack: rest[pos] + the parent's cost
}

// mstate is a position of the matcher: the stacks' top frames in sets[off:off+n] (-1 for the empty stack)
// and the UTF-8 character being read (need continuation bytes still to come, the next in [lo, hi]).
type mstate struct {
	off, n int32
	cp     rune
	need   uint8
	lo, hi uint8
}

// Matcher matches one generation against a GBNF grammar over a vocabulary. It is not safe for concurrent
// use; make one per session (NewMatcher) and Reset it for each generation.
type Matcher struct {
	g *GBNF
	t *trie

	charCost  []int32 // [elems] tokens of single-byte tokens that make one character of a class (eChar)
	rest      []int32 // [elems] fewest tokens from the element to the end of its alternative
	startCost int32

	frames, frames2 []frame
	sets, sets2     []int32
	remap           []int32
	mark            []uint32 // mark[f] == stamp: frame f is in the set being built
	stamp           uint32
	setStart        int32 // where the set being built starts in sets
	empty           bool  // the set being built holds the empty stack
	overflow        bool
	hash            [1 << hashBits]int32
	cur             mstate
	allowed         int

	// Mask's transition cache: the distinct states of one Mask call (cstates, with their closing costs),
	// found by content through ctable, and their transitions by byte (ctrans[sid*256+c]).
	cstates []mstate
	ccost   []int32
	ctrans  []int32
	cloop   []asciiSet // the ASCII bytes that lead state sid back to itself (computed on first use)
	cloopOK []bool
	ctable  [4 * maxCached]int32
	// Completed multi-byte characters: ckeys[i] = cstamp<<32 | sid<<21 | code point, cvals[i] the state.
	ckeys  [ncomplete]uint64
	cvals  [ncomplete]int32
	cstamp uint32
}

const (
	// maxCached bounds the states one Mask call caches; past it, the rest of the walk steps uncached.
	maxCached = 512
	tUnknown  = -2 // ctrans: not computed yet
	tReject   = -1 // ctrans: the byte is not allowed
	tUncached = -3 // canon: the cache is full
	tPartial  = -4 // ctrans: the byte starts a character some stack can take
	ncomplete = 1 << 12
)

// NewMatcher makes a matcher of g over v, at the start.
func NewMatcher(g *GBNF, v *Vocab) *Matcher {
	m := &Matcher{g: g, t: v.t}
	m.costs()
	m.Reset()
	return m
}

const costInf = int32(Unclosable)

func sat(a, b int32) int32 { return int32(min(int64(a)+int64(b), int64(costInf))) }

// costs computes, for this vocabulary, the fewest tokens each element needs to reach the end of its
// alternative, when each byte is one single-byte token (or a whole character one ASCII token).
func (m *Matcher) costs() {
	g := m.g
	m.charCost = make([]int32, len(g.elems))
	m.rest = make([]int32, len(g.elems))
	for i, e := range g.elems {
		if e.kind == eChar {
			m.charCost[i] = m.charTokens(g.ranges[e.a:e.b])
		}
	}
	minLen := shortest(g, m.charCost)
	for i := len(g.elems) - 1; i >= 0; i-- {
		switch e := g.elems[i]; e.kind {
		case eEnd:
			m.rest[i] = 0
		case eChar:
			m.rest[i] = sat(m.charCost[i], m.rest[i+1])
		case eRef:
			m.rest[i] = sat(minLen[e.a], m.rest[i+1])
		}
	}
	m.startCost = minLen[g.root]
}

// shortest returns each rule's fewest tokens (costInf if it cannot be spelled), characters costing
// charCost: Knuth's generalisation of Dijkstra's algorithm to grammars. A rule's cost is final when it is
// the smallest left in the queue; an alternative's total is known once every rule it refers to is final.
func shortest(g *GBNF, charCost []int32) []int32 {
	type alt struct {
		rule    int32
		pending int   // references to rules not yet final
		sum     int32 // characters and final references so far
	}
	var alts []alt
	users := make([][]int32, len(g.rules)) // users[r]: the alternatives referring to rule r, once per reference
	best := make([]int32, len(g.rules))
	done := make([]bool, len(g.rules))
	for i := range best {
		best[i] = costInf
	}
	h := &costHeap{}
	for id, r := range g.rules {
		for _, a := range r.alts {
			k := int32(len(alts))
			al := alt{rule: int32(id)}
			for i := a; g.elems[i].kind != eEnd; i++ {
				if e := g.elems[i]; e.kind == eRef {
					al.pending++
					users[e.a] = append(users[e.a], k)
				} else {
					al.sum = sat(al.sum, charCost[i])
				}
			}
			alts = append(alts, al)
			if al.pending == 0 && al.sum < best[id] {
				best[id] = al.sum
				h.push(int32(id), al.sum)
			}
		}
	}
	for h.len() > 0 {
		r, c := h.pop()
		if done[r] || c != best[r] {
			continue
		}
		done[r] = true
		for _, k := range users[r] {
			al := &alts[k]
			al.sum = sat(al.sum, c)
			if al.pending--; al.pending == 0 && al.sum < best[al.rule] && !done[al.rule] {
				best[al.rule] = al.sum
				h.push(al.rule, al.sum)
			}
		}
	}
	return best
}

// costHeap is a binary min-heap of (rule, cost).
type costHeap struct{ r, c []int32 }

func (h *costHeap) len() int { return len(h.r) }

func (h *costHeap) less(i, j int) bool { return h.c[i] < h.c[j] }

func (h *costHeap) swap(i, j int) {
	h.r[i], h.r[j] = h.r[j], h.r[i]
	h.c[i], h.c[j] = h.c[j], h.c[i]
}

func (h *costHeap) push(r, c int32) {
	h.r, h.c = append(h.r, r), append(h.c, c)
	for i := len(h.r) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.swap(i, p)
		i = p
	}
}

func (h *costHeap) pop() (int32, int32) {
	r, c := h.r[0], h.c[0]
	n := len(h.r) - 1
	h.swap(0, n)
	h.r, h.c = h.r[:n], h.c[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h.less(l, m) {
			m = l
		}
		if l+1 < n && h.less(l+1, m) {
			m = l + 1
		}
		if m == i {
			break
		}
		h.swap(i, m)
		i = m
	}
	return r, c
}

// charTokens is the fewest single-byte tokens that spell one code point in rs (costInf if none).
func (m *Matcher) charTokens(rs []crange) int32 {
	best := costInf
	var buf [4]byte
	for _, r := range rs {
		for c := r.lo; c <= r.hi && c < 0x80; c++ {
			if m.t.single[c] {
				return 1
			}
		}
		c := max(r.lo, 0x80)
		if 0xD800 <= c && c <= 0xDFFF {
			c = 0xE000
		}
		if c > r.hi {
			continue
		}
		n := utf8.EncodeRune(buf[:], c)
		ok := true
		for _, b := range buf[:n] {
			ok = ok && m.t.single[b]
		}
		if ok {
			best = min(best, int32(n))
		}
	}
	return best
}

// Reset returns the matcher to the start of the grammar.
func (m *Matcher) Reset() {
	m.frames, m.sets = m.frames[:0], m.sets[:0]
	for i := range m.hash {
		m.hash[i] = -1
	}
	m.begin()
	for _, a := range m.g.rules[m.g.root].alts {
		m.push(a, -1)
	}
	m.cur = m.end()
}

// frame returns the frame (pos, parent), existing or new.
func (m *Matcher) frame(pos, parent int32) int32 {
	h := (uint32(pos)*0x9E3779B1 ^ uint32(parent)*0x85EBCA77) >> (32 - hashBits)
	if id := m.hash[h]; id >= 0 && int(id) < len(m.frames) && m.frames[id].pos == pos && m.frames[id].parent == parent {
		return id
	}
	c := m.rest[pos]
	if parent >= 0 {
		c = sat(c, m.frames[parent].cost)
	}
	id := int32(len(m.frames))
	m.frames = append(m.frames, frame{pos, parent, c})
	m.hash[h] = id
	return id
}

// begin starts building a set of stacks at the end of m.sets.
func (m *Matcher) begin() {
	if m.stamp++; m.stamp == 0 {
		clear(m.mark)
		m.stamp = 1
	}
	m.empty, m.overflow = false, false
	m.setStart = int32(len(m.sets))
}

func (m *Matcher) end() mstate {
	return mstate{off: m.setStart, n: int32(len(m.sets)) - m.setStart}
}

// add puts stack f in the set being built (once).
func (m *Matcher) add(f int32) {
	if f < 0 {
		if m.empty {
			return
		}
		m.empty = true
	} else {
		if int(f) >= len(m.mark) {
			m.mark = append(m.mark, make([]uint32, int(f)+1-len(m.mark)+len(m.mark)/2+16)...)
		}
		if m.mark[f] == m.stamp {
			return
		}
		m.mark[f] = m.stamp
	}
	if int32(len(m.sets))-m.setStart >= MaxStacks {
		m.overflow = true
		return
	}
	m.sets = append(m.sets, f)
}

// push adds the stacks that continue at pos over parent, closed until each top is a character element.
func (m *Matcher) push(pos, parent int32) {
	for {
		e := m.g.elems[pos]
		switch e.kind {
		case eChar:
			m.add(m.frame(pos, parent))
			return
		case eEnd:
			if parent < 0 {
				m.add(-1)
				return
			}
			p := m.frames[parent]
			pos, parent = p.pos, p.parent
		case eRef:
			ret := parent
			if m.g.elems[pos+1].kind != eEnd {
				ret = m.frame(pos+1, parent)
			}
			alts := m.g.rules[e.a].alts
			for _, a := range alts[:len(alts)-1] {
				m.push(a, ret)
			}
			pos, parent = alts[len(alts)-1], ret
		}
	}
}

func (g *GBNF) matches(pos int32, c rune) bool {
	e := g.elems[pos]
	for _, r := range g.ranges[e.a:e.b] {
		if c < r.lo {
			return false
		}
		if c <= r.hi {
			return true
		}
	}
	return false
}

func (g *GBNF) meets(pos int32, lo, hi rune) bool {
	e := g.elems[pos]
	for _, r := range g.ranges[e.a:e.b] {
		if hi < r.lo {
			return false
		}
		if lo <= r.hi {
			return true
		}
	}
	return false
}

// span is the range of code points the partial character of st can still become.
func (st *mstate) span() (lo, hi rune) {
	k := 6 * int(st.need-1)
	lo = (st.cp<<6 | rune(st.lo&0x3F)) << k
	hi = (st.cp<<6|rune(st.hi&0x3F))<<k | (1<<k - 1)
	return lo, hi
}

// feasible reports whether some stack can take a character in the partial character's span.
func (m *Matcher) feasible(st *mstate) bool {
	lo, hi := st.span()
	for _, f := range m.sets[st.off : st.off+st.n] {
		if f >= 0 && m.g.meets(m.frames[f].pos, lo, hi) {
			return true
		}
	}
	return false
}

// advance matches the whole character c against st's stacks.
func (m *Matcher) advance(st mstate, c rune) (mstate, bool) {
	m.begin()
	for i := st.off; i < st.off+st.n; i++ {
		f := m.sets[i]
		if f >= 0 && m.g.matches(m.frames[f].pos, c) {
			fr := m.frames[f]
			m.push(fr.pos+1, fr.parent)
		}
	}
	s := m.end()
	return s, s.n > 0 && !m.overflow
}

// step advances st by one byte of output.
func (m *Matcher) step(st mstate, c byte) (mstate, bool) {
	if st.need > 0 {
		if c < st.lo || c > st.hi {
			return st, false
		}
		st.cp = st.cp<<6 | rune(c&0x3F)
		st.need--
		st.lo, st.hi = 0x80, 0xBF
		if st.need > 0 {
			return st, m.feasible(&st)
		}
		return m.advance(st, st.cp)
	}
	switch {
	case c < 0x80:
		return m.advance(st, rune(c))
	case c < 0xC2:
		return st, false // a continuation byte or an overlong lead
	case c < 0xE0:
		st.need, st.cp, st.lo, st.hi = 1, rune(c&0x1F), 0x80, 0xBF
	case c < 0xF0:
		st.need, st.cp, st.lo, st.hi = 2, rune(c&0x0F), 0x80, 0xBF
		if c == 0xE0 {
			st.lo = 0xA0 // no overlong 3-byte forms
		} else if c == 0xED {
			st.hi = 0x9F // no UTF-16 surrogates
		}
	case c < 0xF5:
		st.need, st.cp, st.lo, st.hi = 3, rune(c&0x07), 0x80, 0xBF
		if c == 0xF0 {
			st.lo = 0x90 // no overlong 4-byte forms
		} else if c == 0xF4 {
			st.hi = 0x8F // nothing above U+10FFFF
		}
	default:
		return st, false
	}
	return st, m.feasible(&st)
}

// cost is the fewest tokens that complete the output from st.
func (m *Matcher) cost(st *mstate) int32 {
	best := costInf
	if st.need == 0 {
		for _, f := range m.sets[st.off : st.off+st.n] {
			if f < 0 {
				return 0
			}
			best = min(best, m.frames[f].cost)
		}
		return best
	}
	lo, hi := st.span()
	for _, f := range m.sets[st.off : st.off+st.n] {
		if f >= 0 {
			fr := m.frames[f]
			if m.g.meets(fr.pos, lo, hi) {
				best = min(best, sat(int32(st.need), fr.cost-m.charCost[fr.pos]))
			}
		}
	}
	return best
}

func (st *mstate) complete(sets []int32) bool {
	if st.need > 0 {
		return false
	}
	for _, f := range sets[st.off : st.off+st.n] {
		if f < 0 {
			return true
		}
	}
	return false
}

// Complete reports whether the output so far is a whole sentence of the grammar (end of generation is
// allowed).
func (m *Matcher) Complete() bool { return m.cur.complete(m.sets) }

// Done reports whether the output is complete and the grammar allows nothing more.
func (m *Matcher) Done() bool {
	return m.cur.need == 0 && m.cur.n == 1 && m.sets[m.cur.off] < 0
}

// ClosingCost returns the fewest tokens that complete the output, each byte a single-byte token of the
// vocabulary (an ASCII character one token): 0 once Complete, Unclosable if the vocabulary cannot spell
// a completion.
func (m *Matcher) ClosingCost() int { return int(m.cost(&m.cur)) }

// Accept advances the matcher past token id. It returns an error wrapping ErrRejected, and leaves the
// matcher unchanged, if the grammar does not allow the token. The end-of-generation token is accepted
// only when the output is Complete.
func (m *Matcher) Accept(id int) error {
	t := m.t
	if id < 0 || id >= t.vocab {
		return fmt.Errorf("%w: token id %d outside the vocabulary of %d", ErrRejected, id, t.vocab)
	}
	if id == t.eos {
		if !m.Complete() {
			return fmt.Errorf("%w: end of generation before the grammar is complete", ErrRejected)
		}
		return nil
	}
	p := t.pieces[id]
	if len(p) == 0 {
		return fmt.Errorf("%w: control token %d emits no text", ErrRejected, id)
	}
	nf, ns := len(m.frames), len(m.sets)
	st := m.cur
	for i, c := range p {
		s, ok := m.step(st, c)
		if !ok {
			m.frames, m.sets = m.frames[:nf], m.sets[:ns]
			if m.overflow {
				return fmt.Errorf("%w: token %d %q: byte %d (%q) would need more than %d parse stacks (the grammar is too ambiguous)", ErrRejected, id, p, i, c, MaxStacks)
			}
			return fmt.Errorf("%w: token %d %q: byte %d (%q) not allowed by the grammar", ErrRejected, id, p, i, c)
		}
		st = s
	}
	m.cur = st
	m.compact()
	return nil
}

// compact copies the frames the current stacks use into the spare buffers and swaps them in.
func (m *Matcher) compact() {
	if cap(m.remap) < len(m.frames) {
		m.remap = make([]int32, len(m.frames), 2*len(m.frames))
	}
	m.remap = m.remap[:len(m.frames)]
	for i := range m.remap {
		m.remap[i] = -1
	}
	m.frames2, m.sets2 = m.frames2[:0], m.sets2[:0]
	for _, f := range m.sets[m.cur.off : m.cur.off+m.cur.n] {
		m.sets2 = append(m.sets2, m.copyFrame(f))
	}
	m.frames, m.frames2 = m.frames2, m.frames
	m.sets, m.sets2 = m.sets2, m.sets
	m.cur.off = 0
	for i := range m.hash {
		m.hash[i] = -1
	}
}

func (m *Matcher) copyFrame(f int32) int32 {
	if f < 0 {
		return -1
	}
	if r := m.remap[f]; r >= 0 {
		return r
	}
	fr := m.frames[f]
	fr.parent = m.copyFrame(fr.parent)
	m.frames2 = append(m.frames2, fr)
	m.remap[f] = int32(len(m.frames2) - 1)
	return m.remap[f]
}

// Mask sets logits[id] = -Inf for every token not allowed next. remaining is how many tokens may still be
// generated, this one included: a token is allowed only if the output can still be completed within
// remaining-1 further tokens (if the output is already over that budget, the tokens that bring its
// closing cost lowest are allowed). The end-of-generation token is allowed once the output is Complete;
// once Done, only it. It reports whether any token is allowed. logits has one entry per token; entries
// past the vocabulary are set to -Inf, and a shorter slice is masked entirely. In steady state Mask does
// not allocate.
func (m *Matcher) Mask(logits []float32, remaining int) bool {
	t := m.t
	if !t.prepare(logits) {
		return false
	}
	ninf := float32(math.Inf(-1))
	complete := m.Complete()
	if m.Done() {
		for i := range logits[:t.vocab] {
			if i != t.eos {
				logits[i] = ninf
			}
		}
		return t.eos >= 0
	}
	if t.eos >= 0 && !complete {
		logits[t.eos] = ninf
	}
	for _, id := range t.controls {
		logits[id] = ninf
	}
	remaining = max(remaining, 1)
	limit := int32(remaining - 1)
	if m.cost(&m.cur) > int32(remaining) {
		limit = m.minCost(0, m.cur)
	}
	m.allowed = 0
	nf, ns := len(m.frames), len(m.sets)
	m.cstates, m.ccost, m.ctrans = m.cstates[:0], m.ccost[:0], m.ctrans[:0]
	m.cloop, m.cloopOK = m.cloop[:0], m.cloopOK[:0]
	if m.cstamp++; m.cstamp == 0 { // keys of earlier calls must not match
		clear(m.ckeys[:])
		m.cstamp = 1
	}
	for i := range m.ctable {
		m.ctable[i] = -1
	}
	m.walkCached(0, m.canon(m.cur), logits, limit)
	m.frames, m.sets = m.frames[:nf], m.sets[:ns]
	return m.allowed > 0 || complete && t.eos >= 0
}

// canon returns the cache's id of state st (adding it, its frames and set kept), or tUncached when the
// cache is full. The caller truncates what st appended when st is not added.
func (m *Matcher) canon(st mstate) int32 {
	h := uint32(st.need) | uint32(st.lo)<<8 | uint32(st.hi)<<16 ^ uint32(st.cp)*0x9E3779B1
	for _, f := range m.sets[st.off : st.off+st.n] {
		h = (h ^ uint32(f)) * 0x01000193
	}
	mask := uint32(len(m.ctable) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		id := m.ctable[i]
		if id < 0 {
			if len(m.cstates) >= maxCached {
				return tUncached
			}
			id = int32(len(m.cstates))
			m.ctable[i] = id
			m.cstates = append(m.cstates, st)
			m.ccost = append(m.ccost, m.cost(&st))
			m.cloop, m.cloopOK = append(m.cloop, asciiSet{}), append(m.cloopOK, false)
			for range 256 {
				m.ctrans = append(m.ctrans, tUnknown)
			}
			return id
		}
		if m.sameState(&m.cstates[id], &st) {
			return id
		}
	}
}

func (m *Matcher) sameState(a, b *mstate) bool {
	if a.need != b.need || a.cp != b.cp || a.lo != b.lo || a.hi != b.hi || a.n != b.n {
		return false
	}
	return slices.Equal(m.sets[a.off:a.off+a.n], m.sets[b.off:b.off+b.n])
}

// walkCached is walk over cached states: sid's transitions are computed once per Mask call, however
// many trie nodes reach the state. Cached states are between characters (need == 0); a byte that starts
// a multi-byte character leads to walkPartial.
func (m *Matcher) walkCached(n, sid int32, logits []float32, limit int32) {
	t := m.t
	st := m.cstates[sid]
	nd := &t.nodes[n]
	if nd.own > nd.lo {
		if m.ccost[sid] > limit {
			t.maskRange(nd.lo, nd.own, logits)
		} else {
			m.allowed += int(nd.own - nd.lo)
		}
	}
	if nd.hi > nd.own && t.ascii[n] && m.ccost[sid] <= limit && t.below[n].within(m.loops(sid)) {
		// Every byte below leads back to this state (plain text in a string, say): all allowed.
		m.allowed += int(nd.hi - nd.own)
		return
	}
	for e := nd.edge; e < nd.edge+nd.nedge; e++ {
		child := t.edgeNode[e]
		c := t.edgeByte[e]
		next := m.trans(sid, c)
		if next == tUncached {
			nf, ns := len(m.frames), len(m.sets)
			s, _ := m.step(st, c)
			m.walk(child, s, logits, limit)
			m.frames, m.sets = m.frames[:nf], m.sets[:ns]
			continue
		}
		switch next {
		case tReject:
			ch := &t.nodes[child]
			t.maskRange(ch.lo, ch.hi, logits)
		case tPartial:
			s, _ := m.step(st, c)
			m.walkPartial(child, sid, s, logits, limit)
		default:
			m.walkCached(child, next, logits, limit)
		}
	}
}

// loops returns the ASCII bytes that step cached state sid back to itself.
func (m *Matcher) loops(sid int32) asciiSet {
	if !m.cloopOK[sid] {
		var l asciiSet
		for c := range byte(0x80) {
			if m.trans(sid, c) == sid {
				l.add(c)
			}
		}
		m.cloop[sid], m.cloopOK[sid] = l, true
	}
	return m.cloop[sid]
}

// trans returns the transition of cached state sid on byte c: a cached state, tReject, tPartial (c
// starts a character), or tUncached (the cache is full; the step is not kept).
func (m *Matcher) trans(sid int32, c byte) int32 {
	k := int(sid)*256 + int(c)
	next := m.ctrans[k]
	if next == tUnknown {
		st := m.cstates[sid]
		nf, ns := len(m.frames), len(m.sets)
		s, ok := m.step(st, c)
		switch {
		case !ok:
			next = tReject
			m.frames, m.sets = m.frames[:nf], m.sets[:ns]
		case s.need > 0:
			next = tPartial // stepping a lead byte only checks feasibility: redone each time
		default:
			before := len(m.cstates)
			next = m.canon(s)
			if next == tUncached || len(m.cstates) == before { // not kept, or already cached
				m.frames, m.sets = m.frames[:nf], m.sets[:ns]
			}
		}
		if next != tUncached {
			m.ctrans[k] = next
		}
	}
	return next
}

// walkPartial walks below a node where st is inside a multi-byte character over the stacks of cached
// state sid. The character's completions are cached by (sid, code point).
func (m *Matcher) walkPartial(n, sid int32, st mstate, logits []float32, limit int32) {
	t := m.t
	nd := &t.nodes[n]
	if nd.own > nd.lo {
		if m.cost(&st) > limit {
			t.maskRange(nd.lo, nd.own, logits)
		} else {
			m.allowed += int(nd.own - nd.lo)
		}
	}
	for e := nd.edge; e < nd.edge+nd.nedge; e++ {
		child := t.edgeNode[e]
		c := t.edgeByte[e]
		if st.need > 1 { // a continuation that does not finish the character: cheap, no stacks built
			if s, ok := m.step(st, c); ok {
				m.walkPartial(child, sid, s, logits, limit)
			} else {
				ch := &t.nodes[child]
				t.maskRange(ch.lo, ch.hi, logits)
			}
			continue
		}
		if c < st.lo || c > st.hi {
			ch := &t.nodes[child]
			t.maskRange(ch.lo, ch.hi, logits)
			continue
		}
		cp := st.cp<<6 | rune(c&0x3F)
		key := uint64(m.cstamp)<<32 | uint64(sid)<<21 | uint64(cp)
		slot := int(uint32(key*0x9E3779B97F4A7C15>>40)) & (len(m.ckeys) - 1)
		next := int32(tUnknown)
		if m.ckeys[slot] == key {
			next = m.cvals[slot]
		} else {
			nf, ns := len(m.frames), len(m.sets)
			s, ok := m.step(st, c)
			if !ok {
				next = tReject
				m.frames, m.sets = m.frames[:nf], m.sets[:ns]
			} else {
				before := len(m.cstates)
				next = m.canon(s)
				if next == tUncached {
					m.walk(child, s, logits, limit)
					m.frames, m.sets = m.frames[:nf], m.sets[:ns]
					continue
				}
				if len(m.cstates) == before {
					m.frames, m.sets = m.frames[:nf], m.sets[:ns]
				}
			}
			m.ckeys[slot], m.cvals[slot] = key, next
		}
		if next == tReject {
			ch := &t.nodes[child]
			t.maskRange(ch.lo, ch.hi, logits)
			continue
		}
		m.walkCached(child, next, logits, limit)
	}
}

// walk masks the tokens of trie node n's subtree, st being the state after the node's prefix, without
// the cache (when it is full).
func (m *Matcher) walk(n int32, st mstate, logits []float32, limit int32) {
	t := m.t
	nd := &t.nodes[n]
	if nd.own > nd.lo {
		if m.cost(&st) > limit {
			t.maskRange(nd.lo, nd.own, logits)
		} else {
			m.allowed += int(nd.own - nd.lo)
		}
	}
	nf, ns := len(m.frames), len(m.sets)
	for e := nd.edge; e < nd.edge+nd.nedge; e++ {
		child := t.edgeNode[e]
		if s, ok := m.step(st, t.edgeByte[e]); ok {
			m.walk(child, s, logits, limit)
		} else {
			c := &t.nodes[child]
			t.maskRange(c.lo, c.hi, logits)
		}
		m.frames, m.sets = m.frames[:nf], m.sets[:ns]
	}
}

// minCost is the lowest closing cost reachable with one token from st (costInf if none is allowed).
func (m *Matcher) minCost(n int32, st mstate) int32 {
	t := m.t
	nd := &t.nodes[n]
	best := costInf
	if nd.own > nd.lo {
		best = m.cost(&st)
	}
	nf, ns := len(m.frames), len(m.sets)
	for e := nd.edge; e < nd.edge+nd.nedge; e++ {
		if s, ok := m.step(st, t.edgeByte[e]); ok {
			best = min(best, m.minCost(t.edgeNode[e], s))
		}
		m.frames, m.sets = m.frames[:nf], m.sets[:ns]
	}
	return best
}

// Grammar returns the grammar the matcher matches.
func (m *Matcher) Grammar() *GBNF { return m.g }

// StartCost returns the fewest tokens of a whole sentence of the grammar with this vocabulary (each byte a
// single-byte token), Unclosable if it cannot spell one.
func (m *Matcher) StartCost() int { return int(m.startCost) }

// MatchString reports whether s is a whole sentence of the grammar (through the matcher's stepping, from a
// fresh start; the matcher is left Reset).
func (m *Matcher) MatchString(s string) bool {
	m.Reset()
	st := m.cur
	for i := 0; i < len(s); i++ {
		var ok bool
		if st, ok = m.step(st, s[i]); !ok {
			m.Reset()
			return false
		}
	}
	ok := st.complete(m.sets)
	m.Reset()
	return ok
}

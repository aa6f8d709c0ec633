package grammar

import (
	"bytes"
	"math"
	"slices"
)

// Vocab is a vocabulary compiled for masking: its tokens in a byte trie. Both grammars (the JSON
// automaton and GBNF matchers) walk it. It is read-only after NewVocab and safe for concurrent use.
type Vocab struct{ t *trie }

// NewVocab compiles a vocabulary: pieces[id] is the bytes token id emits (empty for control tokens, which
// are never allowed) and eos the end-of-generation token (pass -1 if there is none). pieces is retained,
// not copied.
func NewVocab(pieces [][]byte, eos int) *Vocab { return &Vocab{t: newTrie(pieces, eos)} }

// Size returns the number of tokens.
func (v *Vocab) Size() int { return v.t.vocab }

// trie holds the tokens sorted by their bytes; a subtree is a contiguous range of that order.
type trie struct {
	vocab    int
	eos      int      // end-of-generation token id, -1 if none
	pieces   [][]byte // pieces[id]
	perm     []int32  // token ids sorted by their bytes (then id); empty pieces and eos excluded
	controls []int32  // tokens with empty pieces (never allowed), eos excluded
	nodes    []node
	edgeByte []byte  // edgeByte[e]: the byte on edge e
	edgeNode []int32 // edgeNode[e]: the child it leads to
	single   [256]bool
	// below[n]: the bytes on the edges of node n's subtree, when they are all ASCII (ascii[n]).
	below []asciiSet
	ascii []bool
}

// asciiSet is a set of ASCII bytes.
type asciiSet [2]uint64

func (a *asciiSet) add(c byte)            { a[c>>6] |= 1 << (c & 63) }
func (a asciiSet) within(b asciiSet) bool { return a[0]&^b[0] == 0 && a[1]&^b[1] == 0 }

// node is a trie node: the tokens whose bytes start with the node's prefix are perm[lo:hi]; those equal
// to the prefix are perm[lo:own]. Its children are edges [edge, edge+nedge).
type node struct {
	lo, own, hi int32
	edge, nedge int32
	plain       bool // every token below, past this prefix, is plain JSON string text
}

func newTrie(pieces [][]byte, eos int) *trie {
	if eos < 0 || eos >= len(pieces) {
		eos = -1
	}
	g := &trie{vocab: len(pieces), eos: eos, pieces: pieces}
	for id, p := range pieces {
		switch {
		case id == eos:
		case len(p) == 0:
			g.controls = append(g.controls, int32(id))
		default:
			g.perm = append(g.perm, int32(id))
			if len(p) == 1 {
				g.single[p[0]] = true
			}
		}
	}
	slices.SortFunc(g.perm, func(a, b int32) int {
		if c := bytes.Compare(pieces[a], pieces[b]); c != 0 {
			return c
		}
		return int(a - b)
	})
	g.nodes = append(g.nodes, node{})
	var groups []int32 // scratch: [lo, hi) pairs of the children being built, as a stack
	g.build(0, 0, int32(len(g.perm)), 0, &groups)
	// Children come after their parents: one backward pass gathers each subtree's bytes.
	g.below, g.ascii = make([]asciiSet, len(g.nodes)), make([]bool, len(g.nodes))
	for n := len(g.nodes) - 1; n >= 0; n-- {
		nd := &g.nodes[n]
		b, ok := asciiSet{}, true
		for e := nd.edge; e < nd.edge+nd.nedge; e++ {
			c, child := g.edgeByte[e], g.edgeNode[e]
			ok = ok && c < 0x80 && g.ascii[child]
			if ok {
				b.add(c)
				cb := g.below[child]
				b[0], b[1] = b[0]|cb[0], b[1]|cb[1]
			}
		}
		g.below[n], g.ascii[n] = b, ok
	}
	return g
}

// prepare sets the entries of logits past the vocabulary to -Inf; it reports false (with every entry
// -Inf) when logits is shorter than the vocabulary.
func (g *trie) prepare(logits []float32) bool {
	ninf := float32(math.Inf(-1))
	if len(logits) < g.vocab {
		for i := range logits {
			logits[i] = ninf
		}
		return false
	}
	for i := g.vocab; i < len(logits); i++ {
		logits[i] = ninf
	}
	return true
}

// build fills node n for the tokens perm[lo:hi], which share their first depth bytes.
func (g *trie) build(n, lo, hi int32, depth int, groups *[]int32) {
	own := lo
	for own < hi && len(g.pieces[g.perm[own]]) == depth {
		own++
	}
	// Group the rest by their byte at depth; reserve the edges contiguously, then build the children.
	first := int32(len(g.edgeByte))
	base := len(*groups)
	for i := own; i < hi; {
		c := g.pieces[g.perm[i]][depth]
		j := i + 1
		for j < hi && g.pieces[g.perm[j]][depth] == c {
			j++
		}
		*groups = append(*groups, i, j)
		g.edgeByte = append(g.edgeByte, c)
		g.edgeNode = append(g.edgeNode, int32(len(g.nodes)))
		g.nodes = append(g.nodes, node{})
		i = j
	}
	nedge := int32(len(*groups)-base) / 2
	plain := true
	for _, id := range g.perm[own:hi] {
		if !plainText(g.pieces[id][depth:]) {
			plain = false
			break
		}
	}
	g.nodes[n] = node{lo: lo, own: own, hi: hi, edge: first, nedge: nedge, plain: plain}
	for k := range nedge {
		gl, gh := (*groups)[base+2*int(k)], (*groups)[base+2*int(k)+1]
		g.build(g.edgeNode[first+k], gl, gh, depth+1, groups)
	}
	*groups = (*groups)[:base]
}

func (g *trie) maskRange(lo, hi int32, logits []float32) {
	ninf := float32(math.Inf(-1))
	for _, id := range g.perm[lo:hi] {
		logits[id] = ninf
	}
}

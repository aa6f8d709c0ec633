package tokenizer

import "strings"

// Special-token partition, after llama.cpp's tokenizer_st_partition.
//
// The text is a list of fragments, each either raw text or one token. For
// each special token in turn, longest text first, every raw-text fragment is
// split around each occurrence of the token's text. A token with the rstrip
// (lstrip) attribute also swallows the whitespace after (before) it.
//
// Trying every special token against the text would cost
// O(len(text) × #special tokens); vocabularies with thousands of user-defined
// tokens exist. A trie of the special texts first finds, in one pass, which
// special tokens occur in the text at all; only those are partitioned on.
// Since splitting never creates text, a token absent from the whole text
// cannot occur in a fragment, so the result is the same.

// fragment is a piece of the input: tok >= 0 is a token, else text[off:off+n].
type fragment struct {
	tok    int32
	off, n int32
}

// trie over the texts of the special tokens. Node 0 is the root.
type trie struct {
	nodes []trieNode
}

type trieNode struct {
	edges []trieEdge // sorted by byte
	rank  int32      // index into Tokenizer.specials of the token ending here, or -1
}

type trieEdge struct {
	b    byte
	next int32
}

func (tr *trie) build(tokens []string, specials []int32) {
	tr.nodes = append(tr.nodes[:0], trieNode{rank: -1})
	for rank, id := range specials {
		n := int32(0)
		for _, b := range []byte(tokens[id]) {
			next := tr.child(n, b)
			if next < 0 {
				next = int32(len(tr.nodes))
				tr.nodes = append(tr.nodes, trieNode{rank: -1})
				e := tr.nodes[n].edges
				i := 0
				for i < len(e) && e[i].b < b {
					i++
				}
				e = append(e, trieEdge{})
				copy(e[i+1:], e[i:])
				e[i] = trieEdge{b, next}
				tr.nodes[n].edges = e
			}
			n = next
		}
		tr.nodes[n].rank = int32(rank)
	}
}

func (tr *trie) child(n int32, b byte) int32 {
	e := tr.nodes[n].edges
	lo, hi := 0, len(e)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if e[m].b < b {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(e) && e[lo].b == b {
		return e[lo].next
	}
	return -1
}

// partition splits text into fragments; frags and the other scratch slices
// live in st.
func (t *Tokenizer) partition(st *encodeState, text string, parseSpecial bool) []fragment {
	st.frags = append(st.frags[:0], fragment{tok: -1, off: 0, n: int32(len(text))})
	if len(t.specials) == 0 || len(text) == 0 {
		return st.frags
	}

	// Which special tokens occur in the text, as ranks into t.specials.
	if cap(st.seen) < len(t.specials) {
		st.seen = make([]bool, len(t.specials))
	}
	seen := st.seen[:len(t.specials)]
	st.found = st.found[:0]
	for i := 0; i < len(text); i++ {
		n := int32(0)
		for j := i; j < len(text); j++ {
			n = t.trie.child(n, text[j])
			if n < 0 {
				break
			}
			if r := t.trie.nodes[n].rank; r >= 0 && !seen[r] {
				seen[r] = true
				st.found = append(st.found, r)
			}
		}
	}
	if len(st.found) == 0 {
		return st.frags
	}
	// Matching order: rank order (longest first).
	found := st.found
	for i := 1; i < len(found); i++ { // insertion sort: few candidates
		for j := i; j > 0 && found[j] < found[j-1]; j-- {
			found[j], found[j-1] = found[j-1], found[j]
		}
	}
	for _, r := range found {
		seen[r] = false
	}

	frags, next := st.frags, st.frags2[:0]
	for _, r := range found {
		id := t.specials[r]
		a := t.attrs[id]
		if !parseSpecial && a&(attrControl|attrUnknown) != 0 {
			continue // without parse_special only user-defined tokens are matched
		}
		tok := t.tokens[id]
		next = next[:0]
		for _, f := range frags {
			if f.tok >= 0 {
				next = append(next, f)
				continue
			}
			off, end := int(f.off), int(f.off+f.n)
			for off < end {
				m := strings.Index(text[off:end], tok)
				if m < 0 {
					next = append(next, fragment{tok: -1, off: int32(off), n: int32(end - off)})
					break
				}
				m += off
				left := m
				if a&attrLStrip != 0 {
					for left > off && isSpace(text[left-1]) {
						left--
					}
				}
				if left > off {
					next = append(next, fragment{tok: -1, off: int32(off), n: int32(left - off)})
				}
				next = append(next, fragment{tok: id})
				off = m + len(tok)
				if a&attrRStrip != 0 {
					for off < end && isSpace(text[off]) {
						off++
					}
				}
			}
		}
		frags, next = next, frags
	}
	st.frags, st.frags2 = frags, next
	return frags
}

// isSpace is C's isspace in the "C" locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

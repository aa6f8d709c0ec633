package tokenizer

import (
	"math"
	"unicode/utf8"
)

// SentencePiece encoding, after llama.cpp's llm_tokenizer_spm_session.
//
//  1. Spaces become "▁" (U+2581); a fragment of text that starts the input or
//     follows a special token gets the dummy prefix "▁" first.
//  2. The text is split into UTF-8 characters (by the lead byte, as llama.cpp
//     does: a stray continuation byte is a character of its own).
//  3. Every adjacent pair whose concatenation is a vocabulary token goes into
//     a priority queue keyed by that token's score (ties: leftmost first).
//     The best pair is merged, and the merged symbol's new neighbour pairs are
//     queued; stale queue entries (a side already merged away) are skipped.
//  4. Each final symbol is its token, or, if the text is no token (an
//     unmerged character outside the vocabulary), one byte token per byte.
//
// Each merge costs O(log n), so encoding is O(n log n) in the text length.

// symbol is a run of the escaped text, in a doubly linked list.
type symbol struct {
	prev, next int32 // -1 at the ends
	off, n     int32 // escaped[off:off+n]; n == 0 once merged into its left neighbour
}

// bigram is a candidate merge of symbol left with its right neighbour.
type bigram struct {
	// key orders the queue as llama.cpp's comparator does: higher score
	// first, then the leftmost pair. The high 32 bits are the score's bits
	// made order-preserving as an unsigned number, the low 32 bits ^left.
	key         uint64
	right, size int32 // size: byte length of the merged text when queued
}

func bigramKey(score float32, left int32) uint64 {
	if score == 0 {
		score = 0 // -0 == +0, as in the float comparison
	}
	b := math.Float32bits(score)
	if b&(1<<31) != 0 {
		b = ^b // negative: larger magnitude sorts lower
	} else {
		b |= 1 << 31
	}
	return uint64(b)<<32 | uint64(^uint32(left))
}

func (b bigram) left() int32 { return int32(^uint32(b.key)) }

// maxChunk is the longest text encoded in one piece; its escaped form (up to
// 3 bytes per space) must fit int32 offsets.
const maxChunk = 1 << 28

// maxPooledText bounds the scratch kept for reuse between Encode calls.
const maxPooledText = 1 << 20

// encodeState is the reusable scratch of one Encode call.
type encodeState struct {
	frags, frags2 []fragment
	seen          []bool
	found         []int32
	escaped       []byte
	symbols       []symbol
	queue         []bigram // binary max-heap on key

	// byte-level BPE
	clean  []byte
	runes  []rune
	offs   []int32
	flags  []uint8
	segs   []int32
	segs2  []int32
	symIDs []int32
}

func (st *encodeState) push(b bigram) {
	q := append(st.queue, b)
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 2
		if q[i].key <= q[p].key {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
	st.queue = q
}

func (st *encodeState) pop() bigram {
	q := st.queue
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q = q[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(q) {
			break
		}
		c := l
		if r := l + 1; r < len(q) && q[r].key > q[l].key {
			c = r
		}
		if q[c].key <= q[i].key {
			break
		}
		q[i], q[c] = q[c], q[i]
		i = c
	}
	st.queue = q
	return top
}

// utf8Len is llama.cpp's unicode_len_utf8: the sequence length announced by a
// lead byte (1 for ASCII and for stray continuation bytes).
func utf8Len(b byte) int {
	switch b >> 4 {
	case 0xC, 0xD:
		return 2
	case 0xE:
		return 3
	case 0xF:
		return 4
	}
	return 1
}

// spm appends the tokens of one raw-text fragment.
func (t *Tokenizer) spm(dst []int, st *encodeState, text string, prefix bool) []int {
	// 1. escape
	esc := st.escaped[:0]
	if prefix {
		esc = append(esc, "\u2581"...)
	}
	for i := 0; i < len(text); i++ {
		if c := text[i]; c == ' ' {
			esc = append(esc, "\u2581"...)
		} else {
			esc = append(esc, c)
		}
	}
	st.escaped = esc
	if len(esc) == 0 {
		return dst
	}

	// 2. characters
	syms := st.symbols[:0]
	for off := 0; off < len(esc); {
		n := min(utf8Len(esc[off]), len(esc)-off)
		i := int32(len(syms))
		syms = append(syms, symbol{prev: i - 1, next: i + 1, off: int32(off), n: int32(n)})
		off += n
	}
	syms[len(syms)-1].next = -1
	st.symbols = syms

	// 3. merges
	t.mergeSymbols(st, false)

	// 4. output
	for i := int32(0); i >= 0; i = syms[i].next {
		s := syms[i]
		piece := esc[s.off : s.off+s.n]
		if id, ok := t.ids[string(piece)]; ok {
			dst = append(dst, int(id))
			continue
		}
		for _, c := range piece {
			dst = append(dst, int(t.byteTok[c])) // New made sure each byte has a token
		}
	}
	return dst
}

// mergeSymbols merges neighbours in st.symbols, the best queued pair first,
// until no pair is left; the symbols still in the list from st.symbols[0]
// on are the result. With bpe the pairs are byte-level BPE merges (tryMerge)
// and st.symIDs follows each merge; otherwise SentencePiece bigrams
// (tryBigram).
func (t *Tokenizer) mergeSymbols(st *encodeState, bpe bool) {
	syms := st.symbols
	st.queue = st.queue[:0]
	for i := 1; i < len(syms); i++ {
		t.tryPair(st, bpe, int32(i-1), int32(i))
	}
	for len(st.queue) > 0 {
		b := st.pop()
		left := b.left()
		l, r := &syms[left], &syms[b.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue // stale: one side changed since this pair was queued
		}
		if bpe {
			ids := st.symIDs
			ids[left] = t.bpe.merges[uint64(ids[left])<<32|uint64(uint32(ids[b.right]))].id
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = left
		}
		t.tryPair(st, bpe, l.prev, left)
		t.tryPair(st, bpe, left, l.next)
	}
}

// tryPair queues the merge of symbols left and right, if there is one.
func (t *Tokenizer) tryPair(st *encodeState, bpe bool, left, right int32) {
	if bpe {
		t.tryMerge(st, left, right)
	} else {
		t.tryBigram(st, left, right)
	}
}

func (t *Tokenizer) tryBigram(st *encodeState, left, right int32) {
	if left < 0 || right < 0 {
		return
	}
	l, r := st.symbols[left], st.symbols[right]
	text := st.escaped[l.off : l.off+l.n+r.n] // right follows left in the text
	id, ok := t.ids[string(text)]
	if !ok {
		return
	}
	st.push(bigram{key: bigramKey(t.scores[id], left), right: right, size: l.n + r.n})
}

// Encode tokenizes text. With addBOS (llama.cpp's add_special) the model's
// BOS is prepended when its add_bos_token is set (and EOS appended when
// add_eos_token is). Special tokens written in the text ("<s>", "<|end|>")
// become those tokens, as llama.cpp's llama_tokenize with parse_special.
func (t *Tokenizer) Encode(text string, addBOS bool) []int {
	return t.AppendEncode(nil, text, addBOS)
}

// AppendEncode is Encode appending to dst; its scratch memory is reused
// across calls.
func (t *Tokenizer) AppendEncode(dst []int, text string, addBOS bool) []int {
	return t.encode(dst, text, addBOS, true)
}

// encode is llama.cpp's llama_vocab::impl::tokenize for SPM vocabularies.
func (t *Tokenizer) encode(dst []int, text string, addSpecial, parseSpecial bool) []int {
	st := t.scratch.Get().(*encodeState)
	defer func() {
		if cap(st.escaped) <= maxPooledText && cap(st.runes) <= maxPooledText && cap(st.clean) <= maxPooledText { // do not pin the scratch of a huge input
			t.scratch.Put(st)
		}
	}()

	if addSpecial && t.addBOS {
		dst = append(dst, t.bos)
	}
	prevSpecial := true // the dummy prefix goes before the first text
	for len(text) > 0 {
		// Offsets are int32: a text beyond maxChunk (far beyond any context
		// length) is encoded in pieces cut at character boundaries.
		chunk := text
		if len(chunk) > maxChunk {
			cut := maxChunk
			for cut > maxChunk-utf8.UTFMax && !utf8.RuneStart(text[cut]) {
				cut--
			}
			chunk = text[:cut]
		}
		text = text[len(chunk):]
		for _, f := range t.partition(st, chunk, parseSpecial) {
			if f.tok >= 0 {
				dst = append(dst, int(f.tok))
				prevSpecial = true
				continue
			}
			if t.bpe != nil {
				dst = t.bpeEncode(dst, st, chunk[f.off:f.off+f.n])
			} else {
				dst = t.spm(dst, st, chunk[f.off:f.off+f.n], t.addSpacePrefix && prevSpecial)
			}
			prevSpecial = false
		}
	}
	if addSpecial && t.addEOS {
		dst = append(dst, t.eos)
	}
	return dst
}

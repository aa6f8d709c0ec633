package tokenizer

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Byte-level BPE (tokenizer.ggml.model "gpt2"), after llama.cpp's
// llm_tokenizer_bpe_session.
//
//  1. The text (each fragment between special tokens) is split into words by
//     the pre-tokenizer that tokenizer.ggml.pre names: GPT-2's regular
//     expression, Llama 3's, Qwen2's, ... Go's regexp has no look-ahead, so
//     each expression is a hand-written scanner (split.go) that mirrors
//     llama.cpp's unicode_regex_split_custom_* functions.
//  2. Each byte of a word is one symbol: the token whose text is that byte
//     under GPT-2's byte-to-unicode table (printable bytes map to
//     themselves, the rest to U+0100 and up; a space is "Ġ").
//  3. Adjacent symbol pairs that tokenizer.ggml.merges lists are merged,
//     lowest merge rank first (ties: leftmost), as in SentencePiece but
//     ordered by rank instead of score.
//  4. Each final symbol is its token; a byte without a token is dropped, as
//     llama.cpp does.

// ModelBPE is the tokenizer.ggml.model value of byte-level BPE vocabularies.
const ModelBPE = "gpt2"

// Pre-tokenizers (tokenizer.ggml.pre), as llama.cpp's LLAMA_VOCAB_PRE_TYPE_*.
type preType uint8

const (
	preDefault preType = iota // "default" or absent
	preGPT2
	preLlama3
	preQwen2
	preSmolLM // digits one by one, then GPT-2 (also StarCoder, Refact, Command-R, ...)
)

// preTypes maps tokenizer.ggml.pre to a pre-tokenizer, as llama.cpp's vocab
// loader does.
var preTypes = map[string]preType{
	"": preDefault, "default": preDefault,
	"gpt-2": preGPT2, "phi-2": preGPT2, "jina-es": preGPT2, "jina-de": preGPT2, "gigachat": preGPT2,
	"jina-v1-en": preGPT2, "jina-v2-es": preGPT2, "jina-v2-de": preGPT2, "jina-v2-code": preGPT2,
	"llama3": preLlama3, "llama-v3": preLlama3, "llama-bpe": preLlama3, "falcon3": preLlama3, "pixtral": preLlama3,
	"qwen2": preQwen2, "deepseek-r1-qwen": preQwen2, "megrez": preQwen2,
	"smollm": preSmolLM, "starcoder": preSmolLM, "refact": preSmolLM, "command-r": preSmolLM,
	"codeshell": preSmolLM, "exaone": preSmolLM, "minerva-7b": preSmolLM,
}

// Pre-tokenizers whose vocabularies add BOS and skip merging a word that is a
// token already (llama.cpp's ignore_merges), unless the file says otherwise.
func (p preType) llama3Like() bool { return p == preLlama3 }

// PreTokenizers lists the supported tokenizer.ggml.pre values.
func PreTokenizers() []string {
	out := make([]string, 0, len(preTypes))
	for k := range preTypes {
		if k != "" {
			out = append(out, k)
		}
	}
	return out
}

// byteRunes is GPT-2's bytes_to_unicode table: the character each byte is
// written as in a byte-level vocabulary.
var byteRunes = func() (t [256]rune) {
	n := rune(256)
	for b := 0; b < 256; b++ {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE {
			t[b] = rune(b)
		} else {
			t[b] = n
			n++
		}
	}
	return
}()

// runeByte inverts byteRunes: the byte of a character U+0000..U+0143, or -1.
var runeByte = func() (t [324]int16) {
	for i := range t {
		t[i] = -1
	}
	for b, r := range byteRunes {
		t[r] = int16(b)
	}
	return
}()

// bpeVocab is the byte-level BPE part of a Tokenizer.
type bpeVocab struct {
	pre          preType
	ignoreMerges bool
	// merges maps a pair of token ids (left<<32 | right) to the merge's rank
	// and the id of the merged token.
	merges map[uint64]merge
}

type merge struct{ rank, id int32 }

func (t *Tokenizer) initBPE(v Vocab) error {
	pre, ok := preTypes[v.Pre]
	if !ok {
		return fmt.Errorf("%w: pre-tokenizer %q (tokenizer.ggml.pre) of a %q vocabulary", ErrUnsupportedModel, v.Pre, ModelBPE)
	}
	if v.Merges == nil {
		return fmt.Errorf("%w: a %q vocabulary needs merges", ErrInvalidVocab, ModelBPE)
	}
	b := &bpeVocab{pre: pre, ignoreMerges: pre.llama3Like(), merges: make(map[uint64]merge, len(v.Merges))}
	for rank, m := range v.Merges {
		// llama.cpp: the parts are split at the first space after the first
		// character.
		i := -1
		if len(m) > 1 {
			if j := strings.IndexByte(m[1:], ' '); j >= 0 {
				i = j + 1
			}
		}
		if i < 0 {
			return fmt.Errorf("%w: merge %d %q has no space", ErrInvalidVocab, rank, m)
		}
		l, lok := t.ids[m[:i]]
		r, rok := t.ids[m[i+1:]]
		if !lok || !rok {
			continue // a part that is no token can never be a symbol
		}
		id, ok := t.ids[m[:i]+m[i+1:]]
		if !ok {
			id = -1
		}
		key := uint64(l)<<32 | uint64(uint32(r))
		if _, dup := b.merges[key]; !dup { // the first (best) rank wins
			b.merges[key] = merge{rank: int32(rank), id: id}
		}
	}
	t.bpe = b
	var buf [utf8.UTFMax]byte
	for c := 0; c < 256; c++ {
		n := utf8.EncodeRune(buf[:], byteRunes[c])
		if id, ok := t.ids[string(buf[:n])]; ok {
			t.byteTok[c] = id
		} else {
			t.byteTok[c] = -1 // llama.cpp drops such a byte
		}
	}
	return nil
}

// bpeText decodes a normal BPE token's byte-level characters back to
// bytes.
func bpeText(text string) []byte {
	out := make([]byte, 0, len(text))
	for _, r := range text {
		if r >= 0 && int(r) < len(runeByte) && runeByte[r] >= 0 {
			out = append(out, byte(runeByte[r]))
		} else {
			out = utf8.AppendRune(out, r) // not a byte-level character: kept as text
		}
	}
	return out
}

// bpeEncode appends the tokens of one raw-text fragment.
func (t *Tokenizer) bpeEncode(dst []int, st *encodeState, text string) []int {
	if len(text) == 0 {
		return dst
	}
	// Invalid UTF-8 bytes become U+FFFD, as in llama.cpp's
	// unicode_cpts_from_utf8.
	if !utf8.ValidString(text) {
		clean := st.clean[:0]
		for i := 0; i < len(text); {
			r, n := utf8.DecodeRuneInString(text[i:])
			clean = utf8.AppendRune(clean, r)
			i += n
		}
		st.clean = clean
		text = string(clean) // rare path; the copy keeps st.clean reusable
	}
	// Code points, their byte offsets and their classes.
	runes, offs, flags := st.runes[:0], st.offs[:0], st.flags[:0]
	for i, r := range text {
		runes = append(runes, r)
		offs = append(offs, int32(i))
		flags = append(flags, cpFlags(r))
	}
	offs = append(offs, int32(len(text)))
	st.runes, st.offs, st.flags = runes, offs, flags

	sp := splitter{runes: runes, flags: flags}
	ends := t.bpe.pre.split(&sp, st)
	start := 0
	for _, end := range ends {
		word := text[offs[start]:offs[end]]
		start = int(end)
		dst = t.bpeWord(dst, st, word)
	}
	return dst
}

// bpeWord appends the tokens of one pre-tokenized word.
func (t *Tokenizer) bpeWord(dst []int, st *encodeState, word string) []int {
	if t.bpe.ignoreMerges {
		enc := st.escaped[:0]
		for i := 0; i < len(word); i++ {
			enc = utf8.AppendRune(enc, byteRunes[word[i]])
		}
		st.escaped = enc
		if id, ok := t.ids[string(enc)]; ok {
			return append(dst, int(id))
		}
	}
	// One symbol per byte; symbol.n is its byte length, ids holds its token.
	syms := st.symbols[:0]
	ids := st.symIDs[:0]
	for i := 0; i < len(word); i++ {
		syms = append(syms, symbol{prev: int32(i) - 1, next: int32(i) + 1, off: int32(i), n: 1})
		ids = append(ids, t.byteTok[word[i]])
	}
	syms[len(syms)-1].next = -1
	st.symbols, st.symIDs = syms, ids

	t.mergeSymbols(st, true)
	for i := int32(0); i >= 0; i = syms[i].next {
		if id := ids[i]; id >= 0 {
			dst = append(dst, int(id))
			continue
		}
		s := syms[i]
		for _, c := range []byte(word[s.off : s.off+s.n]) {
			if id := t.byteTok[c]; id >= 0 {
				dst = append(dst, int(id))
			}
		}
	}
	return dst
}

func (t *Tokenizer) tryMerge(st *encodeState, left, right int32) {
	if left < 0 || right < 0 {
		return
	}
	l, r := st.symIDs[left], st.symIDs[right]
	if l < 0 || r < 0 {
		return
	}
	m, ok := t.bpe.merges[uint64(l)<<32|uint64(uint32(r))]
	if !ok {
		return
	}
	// Lowest rank first, then leftmost: invert both for the max-heap.
	key := uint64(^uint32(m.rank))<<32 | uint64(^uint32(left))
	st.push(bigram{key: key, right: right, size: st.symbols[left].n + st.symbols[right].n})
}

// Code point classes (llama.cpp's codepoint_flags, as far as the
// pre-tokenizers look at them).
const (
	cpDefined uint8 = 1 << iota // any code point inside the text
	cpLetter                    // \p{L}
	cpNumber                    // \p{N}
	cpSpace                     // \s (Unicode White_Space)
	cpPunct                     // \p{P}
)

func cpFlags(r rune) uint8 {
	f := cpDefined
	switch {
	case r < utf8.RuneSelf:
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			f |= cpLetter
		case r >= '0' && r <= '9':
			f |= cpNumber
		case r == ' ' || r >= '\t' && r <= '\r':
			f |= cpSpace
		case unicode.IsPunct(r):
			f |= cpPunct
		}
		return f
	case unicode.IsLetter(r):
		f |= cpLetter
	case unicode.IsNumber(r):
		f |= cpNumber
	case unicode.IsSpace(r):
		f |= cpSpace
	case unicode.IsPunct(r):
		f |= cpPunct
	}
	return f
}

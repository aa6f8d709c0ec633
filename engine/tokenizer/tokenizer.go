// Package tokenizer turns text into token ids and back, token-exact with
// llama.cpp.
//
// This package implements the SentencePiece ("llama", SPM) tokenizer the way
// llama.cpp's llm_tokenizer_spm does it: the text is split into UTF-8
// characters, adjacent pairs that form a vocabulary token are merged
// highest-score first, and characters that never became a token fall back to
// byte tokens <0xXX>. Before that, special tokens (control, user-defined and
// unknown tokens written literally in the text) are cut out of the text as
// llama.cpp's tokenizer_st_partition does.
//
// Byte-level BPE vocabularies (tokenizer.ggml.model "gpt2": GPT-2, Llama 3,
// Qwen2, SmolLM, ...) go through the same special-token partition, then the
// pre-tokenizer tokenizer.ggml.pre names and rank-ordered merges (bpe.go,
// split.go).
//
// The core is independent of the file format: build a Vocab and call New, or
// use FromGGUF for a GGUF file. Other tokenizer models are refused with
// ErrUnsupportedModel.
package tokenizer

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Sentinel errors.
var (
	// ErrUnsupportedModel: tokenizer.ggml.model names a tokenizer this package
	// does not implement (yet). The error text names the model.
	ErrUnsupportedModel = errors.New("tokenizer: unsupported tokenizer model")
	// ErrInvalidVocab: the vocabulary is inconsistent (no tokens, array lengths
	// that do not match, duplicate tokens, special ids out of range, ...).
	ErrInvalidVocab = errors.New("tokenizer: invalid vocabulary")
)

// ModelSPM is the tokenizer.ggml.model value of SentencePiece vocabularies.
const ModelSPM = "llama"

// Token types, as stored in tokenizer.ggml.token_type (SentencePiece's
// piece types, llama.cpp's LLAMA_TOKEN_TYPE_*).
const (
	TypeUndefined   = 0
	TypeNormal      = 1
	TypeUnknown     = 2
	TypeControl     = 3
	TypeUserDefined = 4
	TypeUnused      = 5
	TypeByte        = 6
)

// Vocab is everything the tokenizer needs, independent of where it came from.
type Vocab struct {
	Tokens []string  // token text by id; SentencePiece writes a space as "▁"
	Scores []float32 // merge priority by id (higher merges first); nil = all 0
	Types  []int32   // Type* by id; nil = all normal

	// Special token ids; -1 = none.
	BOS, EOS, UNK int
	// EOG lists extra end-of-generation ids (tokenizer.ggml.eot_token_id,
	// eom_token_id). EOS and tokens whose text marks an end of turn
	// ("<|end|>", "<|endoftext|>", ...) are end-of-generation anyway, as in
	// llama.cpp.
	EOG []int

	AddBOS, AddEOS bool // what Encode(text, true) adds
	AddSpacePrefix bool // SentencePiece's dummy prefix "▁" (true for SPM models)

	Model string // tokenizer.ggml.model; "" means "llama"; "gpt2" is byte-level BPE
	// Byte-level BPE only: the merges ("left right", best first) and the
	// pre-tokenizer name (tokenizer.ggml.merges, tokenizer.ggml.pre).
	Merges []string
	Pre    string
	// Name is general.name. llama.cpp derives per-token attributes from it:
	// for Phi-3 models, special tokens swallow the whitespace that follows them.
	Name string
}

// attribute bits, llama.cpp's llama_token_attr.
type attr uint16

const (
	attrUndefined attr = 0
	attrUnknown   attr = 1 << 0
	attrUnused    attr = 1 << 1
	attrNormal    attr = 1 << 2
	attrControl   attr = 1 << 3
	attrUserDef   attr = 1 << 4
	attrByte      attr = 1 << 5
	attrLStrip    attr = 1 << 7
	attrRStrip    attr = 1 << 8
)

// Tokenizer encodes and decodes text. It is immutable after New and safe for
// concurrent use.
type Tokenizer struct {
	tokens []string
	scores []float32
	attrs  []attr
	pieces [][]byte // output bytes per token, see Piece
	ids    map[string]int32

	bos, eos, unk  int
	addBOS, addEOS bool
	addSpacePrefix bool
	eog            []bool

	byteTok [256]int32 // byte-fallback token per byte

	// Special tokens (control, user-defined, unknown) in llama.cpp's matching
	// order: longest text first. trie finds which of them occur in a text.
	specials []int32
	trie     trie

	bpe *bpeVocab // nil for SentencePiece

	scratch sync.Pool // *encodeState
}

// New builds a tokenizer from a vocabulary.
func New(v Vocab) (*Tokenizer, error) {
	switch v.Model {
	case "", ModelSPM, ModelBPE:
	default:
		return nil, fmt.Errorf("%w %q (supported: %q, %q)", ErrUnsupportedModel, v.Model, ModelSPM, ModelBPE)
	}
	n := len(v.Tokens)
	if n == 0 {
		return nil, fmt.Errorf("%w: no tokens", ErrInvalidVocab)
	}
	if n > 1<<30 {
		return nil, fmt.Errorf("%w: %d tokens", ErrInvalidVocab, n)
	}
	if v.Scores != nil && len(v.Scores) < n {
		return nil, fmt.Errorf("%w: %d scores for %d tokens", ErrInvalidVocab, len(v.Scores), n)
	}
	if v.Types != nil && len(v.Types) < n {
		return nil, fmt.Errorf("%w: %d token types for %d tokens", ErrInvalidVocab, len(v.Types), n)
	}
	t := &Tokenizer{
		tokens:         make([]string, n),
		scores:         make([]float32, n),
		attrs:          make([]attr, n),
		pieces:         make([][]byte, n),
		ids:            make(map[string]int32, n),
		bos:            -1,
		eos:            -1,
		unk:            -1,
		addBOS:         v.AddBOS,
		addEOS:         v.AddEOS,
		addSpacePrefix: v.AddSpacePrefix,
		eog:            make([]bool, n),
	}
	for i, s := range v.Tokens {
		if s == "" { // as llama.cpp: an empty token gets a placeholder text
			s = fmt.Sprintf("[EMPTY_%d]", i)
		}
		if j, dup := t.ids[s]; dup {
			return nil, fmt.Errorf("%w: duplicate token %q has ids %d and %d", ErrInvalidVocab, s, j, i)
		}
		t.ids[s] = int32(i)
		t.tokens[i] = s
		if v.Scores != nil {
			t.scores[i] = v.Scores[i]
		}
		t.attrs[i] = attrNormal
		if v.Types != nil {
			t.attrs[i] = typeAttr(v.Types[i])
		}
	}
	inRange := func(id int) bool { return id >= 0 && id < n }
	if inRange(v.BOS) {
		t.bos = v.BOS
	}
	if inRange(v.EOS) {
		t.eos = v.EOS
	}
	if inRange(v.UNK) {
		t.unk = v.UNK
	}
	if t.addBOS && t.bos < 0 {
		return nil, fmt.Errorf("%w: add_bos_token is true but there is no BOS token (id %d)", ErrInvalidVocab, v.BOS)
	}
	if t.addEOS && t.eos < 0 {
		return nil, fmt.Errorf("%w: add_eos_token is true but there is no EOS token (id %d)", ErrInvalidVocab, v.EOS)
	}

	t.markEOG(v.EOG)

	// Special tokens, longest first (llama.cpp's cache_special_tokens; ties
	// broken by id so the order is deterministic).
	for id, a := range t.attrs {
		if a&(attrControl|attrUserDef|attrUnknown) != 0 {
			t.specials = append(t.specials, int32(id))
		}
	}
	sort.SliceStable(t.specials, func(a, b int) bool {
		return len(t.tokens[t.specials[a]]) > len(t.tokens[t.specials[b]])
	})
	if name := strings.ToLower(v.Name); strings.Contains(name, "phi-3") || strings.Contains(name, "phi3") {
		// llama.cpp: Phi-3's special tokens strip the whitespace after them,
		// except <unk>, <s> and <|endoftext|>; </s> strips too.
		for _, id := range t.specials {
			t.attrs[id] |= attrRStrip
		}
		t.setAttr("</s>", attrRStrip, true)
		for _, s := range []string{"<unk>", "<s>", "<|endoftext|>"} {
			t.setAttr(s, attrRStrip, false)
		}
	}
	t.trie.build(t.tokens, t.specials)

	if v.Model == ModelBPE {
		t.addSpacePrefix = false
		if err := t.initBPE(v); err != nil {
			return nil, err
		}
		for id := range t.pieces {
			t.pieces[id] = t.bpePiece(id)
		}
	} else {
		for b := 0; b < 256; b++ {
			if t.byteTok[b] = t.byteToToken(byte(b)); t.byteTok[b] < 0 {
				return nil, fmt.Errorf("%w: no byte-fallback token <0x%02X> and no unknown token", ErrInvalidVocab, b)
			}
		}
		for id := range t.pieces {
			t.pieces[id] = t.piece(id)
		}
	}
	t.scratch.New = func() any { return new(encodeState) }
	return t, nil
}

func typeAttr(ty int32) attr {
	switch ty {
	case TypeNormal:
		return attrNormal
	case TypeUnknown:
		return attrUnknown
	case TypeControl:
		return attrControl
	case TypeUserDefined:
		return attrUserDef
	case TypeUnused:
		return attrUnused
	case TypeByte:
		return attrByte
	}
	return attrUndefined
}

func (t *Tokenizer) setAttr(text string, a attr, on bool) {
	id, ok := t.ids[text]
	if !ok {
		return
	}
	if on {
		t.attrs[id] |= a
	} else {
		t.attrs[id] &^= a
	}
}

// Token texts llama.cpp recognises as end of generation (and forces to be
// control tokens), and the FIM tokens it also treats as end of generation.
var (
	eogTexts = []string{
		"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
		"<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
		"<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
		"<｜end▁of▁sentence｜>", "[e~[",
	}
	fimEOGTexts = []string{
		"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]", // pad
		"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>", // repo
		"<|file_sep|>", // file separator
	}
	// Further texts llama.cpp forces to control type (FIM prefix/suffix/middle).
	controlTexts = []string{
		"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>",
		"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>",
		"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>",
		"<end_of_utterance>",
	}
)

// markEOG computes the end-of-generation set as llama.cpp's vocab loader
// does: EOS, explicit ids, and tokens recognised by their text, which are
// also forced to be control tokens.
func (t *Tokenizer) markEOG(extra []int) {
	for _, s := range controlTexts {
		t.setAttr(s, attrControl, true)
	}
	for _, list := range [][]string{eogTexts, fimEOGTexts} {
		for _, s := range list {
			if id, ok := t.ids[s]; ok {
				t.eog[id] = true
				t.attrs[id] |= attrControl
			}
		}
	}
	if t.eos >= 0 {
		t.eog[t.eos] = true
	}
	for _, id := range extra {
		if id >= 0 && id < len(t.eog) {
			t.eog[id] = true
		}
	}
	// llama.cpp's workaround for o200k_harmony / solar-open vocabularies:
	// there "<|end|>" ends a message, not the generation.
	has := func(s string) bool { id, ok := t.ids[s]; return ok && t.eog[id] }
	if end, ok := t.ids["<|end|>"]; ok && t.eog[end] &&
		((has("<|return|>") && (has("<|call|>") || has("<|calls|>"))) ||
			((has("<|call|>") || has("<|calls|>")) && has("<|flush|>"))) {
		t.eog[end] = false
		t.attrs[end] = attrUserDef
	}
	// ... and for gemma4 / paddleocr: "</s>" is a normal token there.
	if s, ok := t.ids["</s>"]; ok && t.eog[s] && has("<|tool_response>") {
		t.eog[s] = false
		t.attrs[s] = attrNormal
	}
}

// byteToToken is llama.cpp's byte_to_token for SPM: "<0xXX>", else the byte
// itself as a token, else (a vocabulary without byte fallback) UNK.
func (t *Tokenizer) byteToToken(b byte) int32 {
	const hex = "0123456789ABCDEF"
	if id, ok := t.ids[string([]byte{'<', '0', 'x', hex[b>>4], hex[b&15], '>'})]; ok {
		return id
	}
	if id, ok := t.ids[string([]byte{b})]; ok {
		return id
	}
	return int32(t.unk)
}

// piece is llama.cpp's token_to_piece(special=false) for SPM vocabularies.
func (t *Tokenizer) piece(id int) []byte {
	a, text := t.attrs[id], t.tokens[id]
	switch {
	case a&(attrControl|attrUnknown) != 0:
		return nil
	case a&attrUserDef != 0:
		return []byte(text)
	case a&attrNormal != 0:
		return []byte(strings.ReplaceAll(text, "\u2581", " "))
	case a&attrByte != 0:
		if b, ok := parseByteToken(text); ok {
			return []byte{b}
		}
	}
	return nil // unused / undefined tokens print nothing
}

// parseByteToken reads "<0xXX>".
func parseByteToken(s string) (byte, bool) {
	if len(s) != 6 || s[:3] != "<0x" || s[5] != '>' {
		return 0, false
	}
	var v byte
	for _, c := range []byte(s[3:5]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			return 0, false
		}
		v = v<<4 | c
	}
	return v, true
}

// VocabSize is the number of tokens.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// BOS is the beginning-of-sequence token id, -1 if none.
func (t *Tokenizer) BOS() int { return t.bos }

// EOS is the end-of-sequence token id, -1 if none.
func (t *Tokenizer) EOS() int { return t.eos }

// AddsBOS reports whether Encode(text, true) starts with BOS
// (tokenizer.ggml.add_bos_token).
func (t *Tokenizer) AddsBOS() bool { return t.addBOS }

// IsEOG reports whether id ends generation (EOS, EOT, ...).
func (t *Tokenizer) IsEOG(id int) bool { return id >= 0 && id < len(t.eog) && t.eog[id] }

// IsControl reports whether id is a control token (BOS, EOS, ...): it prints
// nothing.
func (t *Tokenizer) IsControl(id int) bool {
	return id >= 0 && id < len(t.attrs) && t.attrs[id]&attrControl != 0
}

// Piece returns the bytes token id contributes to the output text: "▁"
// becomes a space, <0xXX> that byte, control and unknown tokens nothing. The
// slice is shared and must not be modified. Ids out of range give nil.
func (t *Tokenizer) Piece(id int) []byte {
	if id < 0 || id >= len(t.pieces) {
		return nil
	}
	return t.pieces[id]
}

// Text returns the raw vocabulary text of token id ("" when out of range).
func (t *Tokenizer) Text(id int) string {
	if id < 0 || id >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

package tokenizer

import (
	"errors"
	"fmt"

	"github.com/picolm/picolm-wasm/gguf"
)

// GGUF metadata keys of the tokenizer.
const (
	keyModel          = "tokenizer.ggml.model"
	keyTokens         = "tokenizer.ggml.tokens"
	keyScores         = "tokenizer.ggml.scores"
	keyTypes          = "tokenizer.ggml.token_type"
	keyBOS            = "tokenizer.ggml.bos_token_id"
	keyEOS            = "tokenizer.ggml.eos_token_id"
	keyUNK            = "tokenizer.ggml.unknown_token_id"
	keyEOT            = "tokenizer.ggml.eot_token_id"
	keyEOM            = "tokenizer.ggml.eom_token_id"
	keyAddBOS         = "tokenizer.ggml.add_bos_token"
	keyAddEOS         = "tokenizer.ggml.add_eos_token"
	keyAddSpacePrefix = "tokenizer.ggml.add_space_prefix"
	keyName           = "general.name"
	keyMerges         = "tokenizer.ggml.merges"
	keyPre            = "tokenizer.ggml.pre"
)

// VocabSize is the vocabulary size FromGGUF would give f's tokenizer (the
// length of tokenizer.ggml.tokens), read without building it.
func VocabSize(f *gguf.File) (int, error) {
	n, err := f.StringsLen(keyTokens)
	if err != nil {
		return 0, fmt.Errorf("tokenizer: %w", err)
	}
	return n, nil
}

// FromGGUF builds the tokenizer described by a GGUF file's tokenizer.ggml.*
// metadata, with llama.cpp's defaults for absent keys (SPM: BOS 1, EOS 2,
// UNK 0, add BOS, no EOS, dummy space prefix; BPE: BOS and EOS 11, no UNK,
// add BOS only for Llama-3-style pre-tokenizers, no EOS).
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	model, err := f.String(keyModel)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	var v Vocab
	switch model {
	case ModelSPM:
		v = Vocab{
			Model: model,
			BOS:   1, EOS: 2, UNK: 0,
			AddBOS: true, AddEOS: false, AddSpacePrefix: true,
		}
	case ModelBPE:
		v = Vocab{Model: model, BOS: 11, EOS: 11, UNK: -1}
		if v.Merges, err = f.Strings(keyMerges); err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		if v.Pre, err = f.String(keyPre); err != nil && !errors.Is(err, gguf.ErrNotFound) {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		if p, ok := preTypes[v.Pre]; ok && p.llama3Like() {
			v.AddBOS = true
		}
	default:
		return nil, fmt.Errorf("%w %q (supported: %q, %q)", ErrUnsupportedModel, model, ModelSPM, ModelBPE)
	}
	if v.Tokens, err = f.Strings(keyTokens); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if v.Scores, err = f.Float32s(keyScores); err != nil {
		switch {
		case errors.Is(err, gguf.ErrNotFound):
			v.Scores = nil
		case errors.Is(err, gguf.ErrWrongType): // llama.cpp also accepts int32 scores
			is, err2 := f.Int32s(keyScores)
			if err2 != nil {
				return nil, fmt.Errorf("tokenizer: %w", err)
			}
			v.Scores = make([]float32, len(is))
			for i, s := range is {
				v.Scores[i] = float32(s)
			}
		default:
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
	}
	if v.Types, err = f.Int32s(keyTypes); err != nil {
		if !errors.Is(err, gguf.ErrNotFound) {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		v.Types = nil
	}

	n := uint64(len(v.Tokens))
	for _, k := range []struct {
		key string
		id  *int
	}{{keyBOS, &v.BOS}, {keyEOS, &v.EOS}, {keyUNK, &v.UNK}} {
		id, err := f.Uint(k.key)
		switch {
		case errors.Is(err, gguf.ErrNotFound):
		case err != nil:
			return nil, fmt.Errorf("tokenizer: %w", err)
		case id >= n:
			// llama.cpp warns and keeps the default.
		default:
			*k.id = int(id)
		}
	}
	for _, key := range []string{keyEOT, keyEOM} {
		id, err := f.Uint(key)
		switch {
		case errors.Is(err, gguf.ErrNotFound):
		case err != nil:
			return nil, fmt.Errorf("tokenizer: %w", err)
		case id < n:
			v.EOG = append(v.EOG, int(id))
		}
	}
	for _, k := range []struct {
		key string
		b   *bool
	}{{keyAddBOS, &v.AddBOS}, {keyAddEOS, &v.AddEOS}, {keyAddSpacePrefix, &v.AddSpacePrefix}} {
		b, err := f.Bool(k.key)
		switch {
		case errors.Is(err, gguf.ErrNotFound):
		case err != nil:
			return nil, fmt.Errorf("tokenizer: %w", err)
		default:
			*k.b = b
		}
	}
	if name, err := f.String(keyName); err == nil {
		v.Name = name
	}
	return New(v)
}

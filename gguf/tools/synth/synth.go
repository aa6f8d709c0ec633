// Package synth makes random-weight Llama-architecture models of any shape,
// for tests and benchmarks: every weight N(0, 0.05²) except output.weight
// N(0, 0.2²), every norm 1.0 (as ../shared/testdata/synth's models), with the
// tokenizer of a given GGUF file.
//
// The weights are a function of (seed, tensor name, row) only, so a model is
// the same bytes every time, whatever the number of threads; and they are
// generated, converted to the requested file type (with llama-quantize's
// mixes, package quantize) and written a chunk of rows at a time: memory
// stays a few megabytes for a model of any size. The IQ1/IQ2/IQ3 formats,
// which package quant cannot quantise to, are written with random codes
// instead (see codebookTypes).
package synth

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/gguf/tools/quantize"
	"github.com/picolm/picolm-wasm/quant"
)

// Shape is a Llama model's architecture hyperparameters.
type Shape struct {
	Embd    int // embedding_length
	Layers  int // block_count
	Heads   int // attention.head_count
	KVHeads int // attention.head_count_kv
	FF      int // feed_forward_length
	Context int // context_length
}

// TinyLlama is the shape of TinyLlama-1.1B.
var TinyLlama = Shape{Embd: 2048, Layers: 22, Heads: 32, KVHeads: 4, FF: 5632, Context: 2048}

// Llama3_8B is the shape of Llama-3-8B (its vocabulary is 128256 tokens:
// Model.VocabSize pads a smaller tokenizer to it).
var Llama3_8B = Shape{Embd: 4096, Layers: 32, Heads: 32, KVHeads: 8, FF: 14336, Context: 8192}

// Llama3Vocab is Llama 3's vocabulary size.
const Llama3Vocab = 128256

// Small is a shape that writes in well under a second (in every type: rows
// are multiples of 256): the shape of ../shared/testdata/synth/synth-small.
var Small = Shape{Embd: 256, Layers: 2, Heads: 4, KVHeads: 2, FF: 768, Context: 256}

// Standard deviations of the weights.
const (
	WeightStd = 0.05
	OutputStd = 0.2
)

// ErrShape reports a shape the engine could not run.
var ErrShape = errors.New("synth: bad shape")

func (s Shape) check() error {
	switch {
	case s.Embd <= 0, s.Layers <= 0, s.Heads <= 0, s.KVHeads <= 0, s.FF <= 0, s.Context <= 0:
		return fmt.Errorf("%w: %+v: every size must be positive", ErrShape, s)
	case s.Embd%s.Heads != 0 || (s.Embd/s.Heads)%2 != 0:
		return fmt.Errorf("%w: embedding %d is not an even head size times %d heads", ErrShape, s.Embd, s.Heads)
	case s.Heads%s.KVHeads != 0:
		return fmt.Errorf("%w: %d heads are not a multiple of %d KV heads", ErrShape, s.Heads, s.KVHeads)
	case s.Embd > 1<<16, s.FF > 1<<18, s.Layers > 1024, s.Context > 1<<20:
		return fmt.Errorf("%w: %+v is too large", ErrShape, s)
	}
	return nil
}

// Model describes a model to generate.
type Model struct {
	Shape
	Seed uint64
	Name string // general.name; empty for "synth-<embd>x<layers>"
	// Vocab supplies the tokenizer: every tokenizer.* key is copied, and
	// the vocabulary size is its number of tokens.
	Vocab *gguf.File
	// VocabSize, when larger than Vocab's tokens, pads the vocabulary to
	// that many with unused tokens "<|reserved_N|>" (token type 5, score
	// 0; never produced by the tokenizer): a model of a larger
	// vocabulary's shape from a smaller tokenizer.
	VocabSize int
	// RandomBlocks writes every quantized weight matrix as random blocks
	// of its type with fixed finite scales (randomBlocks) instead of
	// quantizing N(0, σ²) floats: not the same weights, but seconds instead
	// of an hour for a Llama-3-8B-sized model.
	RandomBlocks bool
}

// Metadata returns the model's metadata (before quantize.Metadata adds the
// file type).
func (m *Model) Metadata() ([]gguf.KeyValue, int, error) {
	if err := m.Shape.check(); err != nil {
		return nil, 0, err
	}
	if m.Vocab == nil {
		return nil, 0, fmt.Errorf("synth: no tokenizer")
	}
	tokens, ok := m.Vocab.Lookup("tokenizer.ggml.tokens")
	if !ok {
		return nil, 0, fmt.Errorf("synth: tokenizer file has no tokenizer.ggml.tokens: %w", gguf.ErrNotFound)
	}
	n := tokens.Len()
	if tokens.Type() != gguf.TypeArray || n == 0 || n > 1<<22 {
		return nil, 0, fmt.Errorf("synth: tokenizer.ggml.tokens is not an array of 1 to 2^22 tokens: %w", gguf.ErrWrongType)
	}
	name := m.Name
	if name == "" {
		name = fmt.Sprintf("synth-%dx%d", m.Embd, m.Layers)
	}
	u := func(v int) gguf.Value { return gguf.Uint32(uint32(v)) }
	kv := []gguf.KeyValue{
		{Key: "general.architecture", Value: gguf.String("llama")},
		{Key: "general.name", Value: gguf.String(name)},
		{Key: "general.description", Value: gguf.String(fmt.Sprintf("random weights, seed %d: N(0, %g^2), output N(0, %g^2), norms 1", m.Seed, WeightStd, OutputStd))},
		{Key: "llama.context_length", Value: u(m.Context)},
		{Key: "llama.embedding_length", Value: u(m.Embd)},
		{Key: "llama.block_count", Value: u(m.Layers)},
		{Key: "llama.feed_forward_length", Value: u(m.FF)},
		{Key: "llama.attention.head_count", Value: u(m.Heads)},
		{Key: "llama.attention.head_count_kv", Value: u(m.KVHeads)},
		{Key: "llama.attention.layer_norm_rms_epsilon", Value: gguf.Float32(1e-5)},
		{Key: "llama.rope.freq_base", Value: gguf.Float32(10000)},
		{Key: "llama.rope.dimension_count", Value: u(m.Embd / m.Heads)},
		{Key: "llama.vocab_size", Value: u(n)},
	}
	pad := 0
	if m.VocabSize > n {
		if m.VocabSize > 1<<22 {
			return nil, 0, fmt.Errorf("synth: a vocabulary of %d tokens (at most 2^22): %w", m.VocabSize, ErrShape)
		}
		pad = m.VocabSize - n
		kv[len(kv)-1].Value = u(m.VocabSize)
	}
	for _, e := range m.Vocab.KV {
		if strings.HasPrefix(e.Key, "tokenizer.") {
			if pad > 0 {
				v, err := padArray(e, n, pad)
				if err != nil {
					return nil, 0, err
				}
				e.Value = v
			}
			kv = append(kv, e)
		}
	}
	return kv, n + pad, nil
}

// padArray pads a per-token array of the tokenizer (tokens, scores, token
// types) of n entries with pad unused tokens; any other value is returned
// as it is.
func padArray(e gguf.KeyValue, n, pad int) (gguf.Value, error) {
	v := e.Value
	if v.Type() != gguf.TypeArray || v.Len() != n {
		return v, nil
	}
	switch e.Key {
	case "tokenizer.ggml.tokens":
		s, ok := v.Strings()
		if !ok {
			return v, fmt.Errorf("synth: %s is not an array of strings: %w", e.Key, gguf.ErrWrongType)
		}
		for i := range pad {
			s = append(s, fmt.Sprintf("<|reserved_%d|>", i))
		}
		return gguf.Strings(s), nil
	case "tokenizer.ggml.scores":
		f, ok := v.Float32s()
		if !ok {
			return v, fmt.Errorf("synth: %s is not an array of float32: %w", e.Key, gguf.ErrWrongType)
		}
		return gguf.Float32s(append(f, make([]float32, pad)...)), nil
	case "tokenizer.ggml.token_type":
		t, ok := v.Int32s()
		if !ok {
			return v, fmt.Errorf("synth: %s is not an array of int32: %w", e.Key, gguf.ErrWrongType)
		}
		for range pad {
			t = append(t, 5) // unused
		}
		return gguf.Int32s(t), nil
	}
	return v, nil
}

// Tensors returns the model's tensors as F32 sources for quantize.Write.
func (m *Model) Tensors(vocab int) []quantize.Tensor {
	d, kvd, ff := uint64(m.Embd), uint64(m.Embd/m.Heads*m.KVHeads), uint64(m.FF)
	var ts []quantize.Tensor
	add := func(name string, std float64, dims ...uint64) {
		t := quantize.Tensor{Name: name, Dims: dims, Type: quant.F32, Rows: m.rows(name, std, int(dims[0]))}
		if m.RandomBlocks && len(dims) >= 2 {
			t.Blocks = m.randomBlocks(name)
		}
		ts = append(ts, t)
	}
	add("token_embd.weight", WeightStd, d, uint64(vocab))
	for i := range m.Layers {
		p := fmt.Sprintf("blk.%d.", i)
		add(p+"attn_norm.weight", 0, d)
		add(p+"attn_q.weight", WeightStd, d, d)
		add(p+"attn_k.weight", WeightStd, d, kvd)
		add(p+"attn_v.weight", WeightStd, d, kvd)
		add(p+"attn_output.weight", WeightStd, d, d)
		add(p+"ffn_norm.weight", 0, d)
		add(p+"ffn_gate.weight", WeightStd, d, ff)
		add(p+"ffn_up.weight", WeightStd, d, ff)
		add(p+"ffn_down.weight", WeightStd, ff, d)
	}
	add("output_norm.weight", 0, d)
	add("output.weight", OutputStd, d, uint64(vocab))
	return ts
}

// rows returns the row source of one tensor: row r of tensor name is drawn
// from a PCG seeded with (seed, hash(name) + r); std 0 means all ones.
func (m *Model) rows(name string, std float64, cols int) func([]float32, int) error {
	h := fnv.New64a()
	h.Write([]byte(name))
	stream := h.Sum64()
	seed := m.Seed
	return func(dst []float32, first int) error {
		if std == 0 {
			for i := range dst {
				dst[i] = 1
			}
			return nil
		}
		src := rand.NewPCG(0, 0)
		rng := rand.New(src)
		for r := 0; r*cols < len(dst); r++ {
			src.Seed(seed, stream+uint64(first+r))
			row := dst[r*cols : (r+1)*cols]
			for i := range row {
				row[i] = float32(rng.NormFloat64() * std)
			}
		}
		return nil
	}
}

// Plan returns the tensors of the model with their output types for file
// type ft (one of FileTypes), and the metadata to write.
func (m *Model) Plan(ft quantize.FileType, o quantize.Options) (*quantize.Plan, []gguf.KeyValue, error) {
	kv, vocab, err := m.Metadata()
	if err != nil {
		return nil, nil, err
	}
	h := quantize.Hyper{Arch: "llama", Layers: m.Layers, Heads: m.Heads, KVHeads: m.KVHeads}
	return m.plan(m.Tensors(vocab), kv, h, ft, o)
}

// plan chooses the output types of tensors ts (random codes for a codebook
// type, see codebookTypes) for file type ft.
func (m *Model) plan(ts []quantize.Tensor, kv []gguf.KeyValue, h quantize.Hyper, ft quantize.FileType, o quantize.Options) (*quantize.Plan, []gguf.KeyValue, error) {
	if isCodebook(ft) {
		if err := checkCodes(ts, ft.Default); err != nil {
			return nil, nil, err
		}
		ts, o.Pure = m.withCodes(ts, ft.Default), true
	}
	p, err := quantize.MakePlan(ts, h, ft, o)
	if err != nil {
		return nil, nil, err
	}
	return p, quantize.Metadata(kv, ft), nil
}

// WriteFile writes the model in file type ft to path (which appears only
// when complete).
func (m *Model) WriteFile(path string, ft quantize.FileType, o quantize.Options) (quantize.Stats, error) {
	p, kv, err := m.Plan(ft, o)
	if err != nil {
		return quantize.Stats{}, err
	}
	return quantize.WriteFile(path, kv, p, o)
}

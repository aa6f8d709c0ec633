package engine

import (
	"errors"
	"fmt"
	"math"

	"github.com/picolm/picolm-wasm/gguf"
)

// Pooling is how one embedding is made of the hidden states of a sequence's
// positions, with llama.cpp's numbers (the GGUF key <arch>.pooling_type).
type Pooling int

const (
	PoolingNone Pooling = 0 // one vector per token: no single embedding
	PoolingMean Pooling = 1 // the mean over every position
	PoolingCLS  Pooling = 2 // the first position (BERT's [CLS]; for a decoder, BOS)
	PoolingLast Pooling = 3 // the last position (decoder embedding models: the one that saw everything)
	PoolingRank Pooling = 4 // a reranker's score: no embedding
)

func (p Pooling) String() string {
	switch p {
	case PoolingNone:
		return "none"
	case PoolingMean:
		return "mean"
	case PoolingCLS:
		return "cls"
	case PoolingLast:
		return "last"
	case PoolingRank:
		return "rank"
	}
	return fmt.Sprintf("pooling type %d", int(p))
}

// ErrNoEmbedding is returned (wrapped) for a model whose GGUF says it makes
// no single embedding of a sequence (pooling type none or rank, or one this
// engine does not know).
var ErrNoEmbedding = errors.New("the model makes no sequence embeddings")

// Pooling returns how the model pools its hidden states into one embedding
// (Embed): the GGUF's <arch>.pooling_type when present, otherwise mean
// pooling, the usual choice for a Llama-architecture decoder that was not
// trained for embeddings. The error wraps ErrNoEmbedding for a pooling that
// makes none (none, rank, unknown values).
func (m *Model) Pooling() (Pooling, error) {
	key := m.Config.Arch + ".pooling_type"
	v, err := m.file.Uint(key)
	if errors.Is(err, gguf.ErrNotFound) {
		return PoolingMean, nil
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrNoEmbedding, err)
	}
	p := Pooling(min(v, 1<<16))
	switch p {
	case PoolingMean, PoolingCLS, PoolingLast:
		return p, nil
	}
	return p, fmt.Errorf("%w: %s is %s", ErrNoEmbedding, key, p)
}

// Embed runs tokens through the model from position 0 and writes their
// embedding to out ([dim]): the final norm's output (the hidden state the
// output matrix reads) at every position, pooled as Model.Pooling says, then
// scaled to unit L2 norm (a zero vector stays zero). The KV cache then holds
// tokens, so a later Generate whose prompt starts with them reuses it.
// Embed allocates nothing per token.
func (s *Session) Embed(tokens []int, out []float32) error {
	c := &s.m.Config
	pooling, err := s.m.Pooling()
	if err != nil {
		return err
	}
	if len(out) != c.Dim {
		return fmt.Errorf("embed: out has %d elements, the model's embeddings %d", len(out), c.Dim)
	}
	if len(tokens) == 0 {
		return ErrEmptyPrompt
	}
	if len(tokens) > s.ctx {
		return fmt.Errorf("%w: %d tokens, the context holds %d", ErrContext, len(tokens), s.ctx)
	}
	for _, tok := range tokens {
		if tok < 0 || tok >= c.VocabSize {
			return fmt.Errorf("token id %d outside the vocabulary of %d", tok, c.VocabSize)
		}
	}
	if err := s.partsErr(); err != nil {
		return err
	}
	s.Rewind(0)
	clear(out)
	for at := 0; at < len(tokens); at += maxBatch {
		batch := tokens[at:min(at+maxBatch, len(tokens))]
		s.forward(batch, at, false)
		for b := range batch {
			p := at + b
			if pooling == PoolingCLS && p != 0 || pooling == PoolingLast && p != len(tokens)-1 {
				continue
			}
			rmsnorm(s.xb[b], s.x[b], s.m.outNorm, c.NormEps) // xb[b] = the final norm's output [dim]
			for i, v := range s.xb[b] {
				out[i] += v
			}
		}
	}
	if err := s.partsErr(); err != nil {
		return err
	}
	s.tokens = append(s.tokens, tokens...)
	if pooling == PoolingMean {
		inv := 1 / float32(len(tokens))
		for i := range out {
			out[i] *= inv
		}
	}
	var ss float64
	for _, v := range out {
		ss += float64(v) * float64(v)
	}
	if ss > 0 {
		inv := float32(1 / math.Sqrt(ss))
		for i := range out {
			out[i] *= inv
		}
	}
	return nil
}

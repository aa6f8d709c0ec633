package engine

import (
	"fmt"
	"math"

	"github.com/picolm/picolm-wasm/engine/grammar"
	"github.com/picolm/picolm-wasm/quant"
)

// SessionOptions sizes a Session.
type SessionOptions struct {
	// Context is the number of positions the KV cache holds. 0 means the
	// model's trained context. It is capped at the trained context and at
	// MaxKVBytes.
	Context int
	// Threads is the number of goroutines the matrix products and the
	// attention heads are split over (1 under wasm).
	Threads int
	// MaxKVBytes bounds the fp16 KV cache; 0 means DefaultMaxKVBytes.
	MaxKVBytes int64
	// Peers serve the other parts of a model split over instances
	// (LoadOptions.Parts): one per part 1.., in any order. None for a
	// whole model.
	Peers []Peer
	// Mesh joins a split model's lead to its other parts for the forward
	// passes (shard.go); nil for a whole model.
	Mesh Mesh
}

// DefaultMaxKVBytes keeps the KV cache well inside a 32-bit wasm memory.
const DefaultMaxKVBytes = 512 << 20

// Session is one conversation's mutable state over a shared Model: the fp16
// KV cache, the activation buffers and the thread pool. Nothing on the
// per-token path allocates: every buffer is made here.
type Session struct {
	m   *Model
	gm  *grammar.Matcher // the last grammar's matcher (Generate with GenerateOptions.Grammar)
	ctx int              // positions the KV cache holds

	tokens []int  // the tokens whose keys and values are in the cache; len = position of the next token
	one    [1]int // Forward's token, a batch of one

	// The activations of a batch of up to maxBatch consecutive positions
	// (forward.go), row b for the batch's b-th position; decoding a token
	// is a batch of one, row 0.
	x      [][]float32  // [maxBatch][dim] residual streams
	xb     [][]float32  // [maxBatch][dim] normed input of a sublayer, then the attention output
	xb2    [][]float32  // [maxBatch][dim] sublayer output before the residual add
	q      [][]float32  // [maxBatch][qDim] queries of this part's heads (rounded to fp16 by attention)
	k      [][]float32  // [maxBatch][kvDim] keys of this part's KV heads
	v      [][]float32  // [maxBatch][kvDim] values of this part's KV heads
	ao     [][]float32  // [maxBatch][dim] attention output, all heads (this part's computed here)
	hb     [][]float32  // [maxBatch][hidden] FFN gate, then silu(gate)*up
	hb2    [][]float32  // [maxBatch][hidden] FFN up
	acts   []activation // [maxBatch] the next product's input, quantized on demand
	logits [][]float32  // [1][vocab] after the last position

	// The KV heads [kvLo, kvHi) this instance computes attention for and
	// keeps the cache of: all of them, unless the model is split over
	// instances (partHeads); then each part holds the q, k and v rows of
	// its heads, and the query heads [kvLo·kvMul, kvHi·kvMul).
	kvLo, kvHi int
	qDim       int // (kvHi-kvLo)·kvMul·headDim
	kvDim      int // (kvHi-kvLo)·headDim

	keyCache []uint16 // [layers][ctx][kvDim] fp16, this part's KV heads
	valCache []uint16 // [layers][ctx][kvDim] fp16

	ropeCos []float32 // [ctx][ropeDim/2]
	ropeSin []float32 // [ctx][ropeDim/2]

	// rope rotates q or k: the architecture's pairing, ropeNormal or ropeNeoX.
	rope func(x []float32, headDim int, cos, sin []float32)

	pool     *pool
	products products // the matrix products: on the pool, and by the peers of a split model

	swigluStep func(b int) // hb[b] = silu(hb[b]) * hb2[b], the positions over the pool

	attn attnItems // attention's (position, head) pairs over the pool (attention.go)
}

// NewSession allocates a session's state for m.
func (m *Model) NewSession(o SessionOptions) (*Session, error) {
	s, err := m.newState(o)
	if err != nil {
		return nil, err
	}
	if err := s.connect(o.Peers, o.Mesh); err != nil {
		s.pool.close()
		return nil, err
	}
	return s, nil
}

// contextFor is the positions a session of m keeps for SessionOptions o:
// o.Context capped at the trained context and so that the whole model's KV
// cache fits in o.MaxKVBytes (every part of a split model caps alike).
func (m *Model) contextFor(o SessionOptions) (int, error) {
	c := &m.Config
	ctx := o.Context
	if ctx <= 0 || ctx > c.TrainCtx {
		ctx = c.TrainCtx
	}
	maxKV := o.MaxKVBytes
	if maxKV <= 0 {
		maxKV = DefaultMaxKVBytes
	}
	perPos := int64(2 * c.Layers * c.KVDim * 2) // K and V, fp16
	if int64(ctx)*perPos > maxKV {
		ctx = int(maxKV / perPos)
	}
	if ctx < 1 {
		return 0, fmt.Errorf("%w: the KV cache for one position needs %d bytes, over the %d-byte limit", ErrContext, perPos, maxKV)
	}
	return ctx, nil
}

// newState allocates the state of a session of m, or of a Shard's part of
// one (its heads' attention): buffers, this part's KV cache and the pool.
func (m *Model) newState(o SessionOptions) (*Session, error) {
	c := &m.Config
	ctx, err := m.contextFor(o)
	if err != nil {
		return nil, err
	}
	kvLo, kvHi := partHeads(c.KVHeads, m.part, m.parts)
	kvDim := (kvHi - kvLo) * c.HeadDim
	qDim := kvDim * c.KVMul
	s := &Session{
		m:        m,
		ctx:      ctx,
		tokens:   make([]int, 0, ctx),
		x:        rows(maxBatch, c.Dim),
		xb:       rows(maxBatch, c.Dim),
		xb2:      rows(maxBatch, c.Dim),
		q:        rows(maxBatch, qDim),
		k:        rows(maxBatch, kvDim),
		v:        rows(maxBatch, kvDim),
		ao:       rows(maxBatch, c.Dim),
		hb:       rows(maxBatch, c.HiddenDim),
		hb2:      rows(maxBatch, c.HiddenDim),
		acts:     make([]activation, maxBatch),
		logits:   rows(1, c.VocabSize),
		kvLo:     kvLo,
		kvHi:     kvHi,
		qDim:     qDim,
		kvDim:    kvDim,
		keyCache: make([]uint16, c.Layers*ctx*kvDim),
		valCache: make([]uint16, c.Layers*ctx*kvDim),
		pool:     newPool(o.Threads),
	}
	s.products.pool = s.pool
	for b := range s.acts {
		s.acts[b].init(m.vecTypes, max(c.Dim, c.HiddenDim))
	}
	s.ropeCos, s.ropeSin = ropeTables(ctx, c.RopeDim, c.RopeBase, c.RopeScale, m.ropeFreqs)
	s.rope = ropeNormal
	if m.spec.neox {
		s.rope = ropeNeoX
	}
	s.swigluStep = func(b int) { quant.SwiGLU(s.hb[b], s.hb2[b]) }
	return s, nil
}

// rows makes n rows of width w, in one block.
func rows(n, w int) [][]float32 {
	buf := make([]float32, n*w)
	r := make([][]float32, n)
	for b := range r {
		r[b] = buf[b*w : (b+1)*w : (b+1)*w]
	}
	return r
}

// Close stops the session's worker goroutines.
func (s *Session) Close() { s.pool.close() }

// Model returns the model the session runs.
func (s *Session) Model() *Model { return s.m }

// Context is the number of positions the session's KV cache holds.
func (s *Session) Context() int { return s.ctx }

// Pos is the position the next token goes to (the number of cached tokens).
func (s *Session) Pos() int { return len(s.tokens) }

// Tokens are the tokens whose state is in the KV cache. Do not modify.
func (s *Session) Tokens() []int { return s.tokens }

// Rewind drops cached positions from n on, keeping the first n.
func (s *Session) Rewind(n int) {
	if n < len(s.tokens) {
		s.tokens = s.tokens[:max(n, 0)]
	}
}

// ropeTables precomputes cos and sin of every rotation angle, as ggml's rope
// cache does: for pair i, theta = pos * base^(-2i/ropeDim), the power taken by
// repeated float32 multiplication; then divided by the pair's frequency
// factor (freqs, Llama 3's rope_freqs; nil for none) and multiplied by
// freqScale (linear scaling), in that order, in float32.
func ropeTables(ctx, ropeDim int, base, freqScale float32, freqs []float32) (cos, sin []float32) {
	half := ropeDim / 2
	cos = make([]float32, ctx*half)
	sin = make([]float32, ctx*half)
	scale := float32(math.Pow(float64(base), -2.0/float64(ropeDim)))
	for pos := 0; pos < ctx; pos++ {
		theta := float32(pos)
		for i := 0; i < half; i++ {
			t := theta
			if freqs != nil {
				t /= freqs[i]
			}
			t *= freqScale
			cos[pos*half+i] = float32(math.Cos(float64(t)))
			sin[pos*half+i] = float32(math.Sin(float64(t)))
			theta *= scale
		}
	}
	return cos, sin
}

package engine

import (
	"fmt"
	"math"

	"github.com/picolm/picolm-wasm/quant"
)

// SessionOptions sizes a Session.
type SessionOptions struct {
	// Context is the number of positions the KV cache holds. 0 means the
	// model's trained context. It is capped at the trained context and at
	// MaxKVBytes.
	Context int
	// Threads is the number of goroutines a matrix-vector product is split
	// over (1 under wasm).
	Threads int
	// MaxKVBytes bounds the fp16 KV cache; 0 means DefaultMaxKVBytes.
	MaxKVBytes int64
	// Peers serve the other parts of a model split over instances
	// (LoadOptions.Parts): one per part 1.., in any order. None for a
	// whole model.
	Peers []Peer
}

// DefaultMaxKVBytes keeps the KV cache well inside a 32-bit wasm memory.
const DefaultMaxKVBytes = 512 << 20

// Session is one conversation's mutable state over a shared Model: the fp16
// KV cache, the activation buffers and the thread pool. Nothing on the
// per-token path allocates: every buffer is made here.
type Session struct {
	m   *Model
	ctx int // positions the KV cache holds

	tokens []int // the tokens whose keys and values are in the cache; len = position of the next token

	// Activations of the current position.
	x      []float32 // [dim] residual stream
	xb     []float32 // [dim] normed input of a sublayer, then the attention output
	xb2    []float32 // [dim] sublayer output before the residual add
	q      []float32 // [dim] query, all heads
	k      []float32 // [kvDim] key of this position
	v      []float32 // [kvDim] value of this position
	qh     []float32 // [headDim] one query head rounded through fp16, as the cache's dot sees it
	hb     []float32 // [hidden] FFN gate, then silu(gate)*up
	hb2    []float32 // [hidden] FFN up
	logits []float32 // [vocab]
	act    activation

	keyCache []uint16 // [layers][ctx][kvDim] fp16
	valCache []uint16 // [layers][ctx][kvDim] fp16

	ropeCos []float32 // [ctx][ropeDim/2]
	ropeSin []float32 // [ctx][ropeDim/2]

	// rope rotates q or k: the architecture's pairing, ropeNormal or ropeNeoX.
	rope func(x []float32, headDim int, cos, sin []float32)

	pool  *pool
	parts *parts // the other parts of a split model; nil when whole

	heads headAttention // Forward's attention over the pool (attention.go)

	batch *batch // Prefill's buffers, made by its first call
}

// NewSession allocates a session's state for m.
func (m *Model) NewSession(o SessionOptions) (*Session, error) {
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
		return nil, fmt.Errorf("%w: the KV cache for one position needs %d bytes, over the %d-byte limit", ErrContext, perPos, maxKV)
	}
	s := &Session{
		m:        m,
		ctx:      ctx,
		tokens:   make([]int, 0, ctx),
		x:        make([]float32, c.Dim),
		xb:       make([]float32, c.Dim),
		xb2:      make([]float32, c.Dim),
		q:        make([]float32, c.Dim),
		k:        make([]float32, c.KVDim),
		v:        make([]float32, c.KVDim),
		qh:       make([]float32, c.HeadDim),
		hb:       make([]float32, c.HiddenDim),
		hb2:      make([]float32, c.HiddenDim),
		logits:   make([]float32, c.VocabSize),
		keyCache: make([]uint16, c.Layers*ctx*c.KVDim),
		valCache: make([]uint16, c.Layers*ctx*c.KVDim),
		pool:     newPool(o.Threads),
	}
	if err := s.connect(o.Peers); err != nil {
		s.pool.close()
		return nil, err
	}
	s.act.init(m.vecTypes, max(c.Dim, c.HiddenDim))
	s.ropeCos, s.ropeSin = ropeTables(ctx, c.RopeDim, c.RopeBase, c.RopeScale, m.ropeFreqs)
	s.rope = ropeNormal
	if m.spec.neox {
		s.rope = ropeNeoX
	}
	return s, nil
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

// Forward runs one token at the next position through the model and returns
// the logits over the vocabulary ([vocab], owned by the session, valid until
// the next call).
func (s *Session) Forward(token int) ([]float32, error) {
	c := &s.m.Config
	pos := len(s.tokens)
	if pos >= s.ctx {
		return nil, fmt.Errorf("%w: all %d positions are used", ErrContext, s.ctx)
	}
	if token < 0 || token >= c.VocabSize {
		return nil, fmt.Errorf("token id %d outside the vocabulary of %d", token, c.VocabSize)
	}
	half := c.RopeDim / 2
	cos := s.ropeCos[pos*half : (pos+1)*half]
	sin := s.ropeSin[pos*half : (pos+1)*half]

	// x = the token's embedding row
	s.m.tokEmbd.tr.Dequantize(s.x, s.m.tokEmbd.row(token))

	for l := range s.m.layers {
		L := &s.m.layers[l]

		// Attention: xb = rmsnorm(x); q, k, v = Wq xb + bq, Wk xb + bk, Wv xb + bv
		// (the biases are qwen2's; other models have none and add nothing)
		rmsnorm(s.xb, s.x, L.attnNorm, c.NormEps)
		s.act.set(s.xb)
		s.matvec(s.q, &L.wq)
		s.matvec(s.k, &L.wk)
		s.matvec(s.v, &L.wv)
		add(s.q, L.bq)
		add(s.k, L.bk)
		add(s.v, L.bv)

		// Rotate the leading ropeDim dims of every query and key head, the
		// architecture's pairs of dims.
		s.rope(s.q, c.HeadDim, cos, sin)
		s.rope(s.k, c.HeadDim, cos, sin)

		// Store this position's key and value in the fp16 cache.
		base := (l*s.ctx + pos) * c.KVDim
		kc := s.keyCache[base : base+c.KVDim]
		vc := s.valCache[base : base+c.KVDim]
		for i := range kc {
			kc[i] = quant.FP32ToFP16(s.k[i])
			vc[i] = quant.FP32ToFP16(s.v[i])
		}

		// xb = attention over positions 0..pos, per query head
		s.attention(l, pos)

		// x += Wo xb + bo
		s.act.set(s.xb)
		s.matvec(s.xb2, &L.wo)
		add(s.xb2, L.bo)
		add(s.x, s.xb2)

		// FFN: x += W2 (silu(W1 xb) * W3 xb), xb = rmsnorm(x)
		rmsnorm(s.xb, s.x, L.ffnNorm, c.NormEps)
		s.act.set(s.xb)
		s.matvec(s.hb, &L.gate)
		s.matvec(s.hb2, &L.up)
		quant.SwiGLU(s.hb, s.hb2)
		s.act.set(s.hb)
		s.matvec(s.xb2, &L.down)
		add(s.x, s.xb2)
	}

	// logits = Wout rmsnorm(x)
	rmsnorm(s.x, s.x, s.m.outNorm, c.NormEps)
	s.act.set(s.x)
	s.matvec(s.logits, &s.m.output)

	if err := s.partsErr(); err != nil {
		return nil, err
	}
	s.tokens = append(s.tokens, token)
	return s.logits, nil
}

// matvec computes out = W·x for the activation set by s.act.set.
func (s *Session) matvec(out []float32, w *matrix) {
	act := s.act.get(w.tr.VecDotType)
	if s.parts != nil {
		s.matvecParts(out, w, act)
		return
	}
	s.pool.matvec(out, w, act)
}

package engine

import (
	"math"

	"github.com/picolm/picolm-wasm/quant"
)

// attention sets ao[b], for b < n, to the attention of position pos+b of
// the batch in layer l: for every query head h of this part (all of them
// unless the model is split, see Session.kvLo), softmax(q_h·K/sqrt(headDim))·V
// over cached positions 0..pos+b of the KV head h/kvMul. Its work items are
// the (position, head) pairs, run over the session's pool: a token's heads
// when decoding, every head of every position for a prompt batch.
//
// It rounds where llama.cpp's attention (without flash attention) rounds:
//
//   - kq = K·q: ggml's mul_mat converts its activation to the keys' fp16,
//     so the query is rounded to fp16 first (in place in q: the forward
//     pass does not use it afterwards);
//   - the softmax is ggml_soft_max's: the max, then the sum in float64 of
//     float32 exp(score-max), then each weight exp(score-max)·float32(1/sum);
//   - kqv = V·kq: the same conversion rounds every normalized weight to fp16
//     before the weighted sum of the fp16 values.
//
// The 1/sqrt(headDim) scale is applied to the scores, or (phi3) to the query
// before it is rounded, as llama.cpp's graph for the architecture does.
//
// That matters for quantized models: the next matrix's activation is
// quantized to 8 bits, so a difference in the last bits of an attention
// output can move a value across a rounding boundary of the quantizer, and
// that step grows through the layers into logit differences of ~0.1.
//
// The weights are normalized before they are rounded, so the softmax cannot
// be folded into one online pass; rather than keep a [seq] buffer of scores,
// it makes three passes over the keys: one for the max, one for the sum,
// one for the weighted sum of the values. The scores are computed a tile of
// attnTile positions at a time, so a context that fits in one tile (the
// common short one) computes its scores and their exponentials only once.
func (s *Session) attention(l, pos, n int) {
	c := &s.m.Config
	a := &s.attn
	heads := (s.kvHi - s.kvLo) * c.KVMul // this part's query heads
	if a.step == nil {                   // made once: the per-token path does not allocate
		a.step = func(i int) {
			b, j := i/heads, i%heads // j: the part's j-th query head, head h of the model
			h := s.kvLo*c.KVMul + j
			hd := c.HeadDim
			qh := s.q[b][j*hd : (j+1)*hd]
			quant.RoundFP16(qh, a.qScale)
			s.attendHead(s.ao[b][h*hd:(h+1)*hd], qh, a.l, a.pos+b, h/c.KVMul-s.kvLo, a.scale)
		}
	}
	a.l, a.pos = l, pos
	a.scale, a.qScale = s.attnScales()
	s.pool.forEach(n*heads, a.step)
}

// attnItems are attention's work items over the pool: step(b·heads + h) is
// query head h of the batch's position b, in layer l, for the batch from
// position pos on, with the scales of the scores and of the query.
type attnItems struct {
	l, pos        int
	scale, qScale float32
	step          func(i int)
}

// attnScales returns the scale of the scores and of the query: 1/sqrt(headDim)
// and 1, or (phi3) 1 and 1/sqrt(headDim).
func (s *Session) attnScales() (scale, qScale float32) {
	scale, qScale = 1/float32(math.Sqrt(float64(s.m.Config.HeadDim))), 1
	if s.m.spec.scaleQ {
		scale, qScale = 1, scale
	}
	return scale, qScale
}

// attnTile is the number of scores computed at once (on the stack).
const attnTile = 512

// attendHead sets out ([headDim]) to softmax(qh·K/scale)·V over positions
// 0..pos of this part's KV head kvh (of the cache's) in layer l, for the
// fp16-rounded query head qh.
func (s *Session) attendHead(out, qh []float32, l, pos, kvh int, scale float32) {
	kvDim := s.kvDim
	base := l*s.ctx*kvDim + kvh*len(qh) // key/value of this head at position 0
	var tile [attnTile]float32
	n := pos + 1
	oneTile := n <= attnTile

	maxScore := float32(math.Inf(-1))
	for t0 := 0; t0 < n; t0 += attnTile {
		sc := s.scores(tile[:min(attnTile, n-t0)], qh, base+t0*kvDim, scale)
		for _, v := range sc {
			maxScore = max(maxScore, v)
		}
	}
	var sum float64
	for t0 := 0; t0 < n; t0 += attnTile {
		sc := tile[:min(attnTile, n-t0)]
		if !oneTile {
			s.scores(sc, qh, base+t0*kvDim, scale)
		}
		quant.ExpShift(sc, maxScore)
		for _, e := range sc {
			sum += float64(e)
		}
	}
	inv := float32(1 / sum)
	clear(out)
	for t0 := 0; t0 < n; t0 += attnTile {
		sc := tile[:min(attnTile, n-t0)]
		if !oneTile {
			s.scores(sc, qh, base+t0*kvDim, scale)
			quant.ExpShift(sc, maxScore)
		}
		quant.RoundFP16(sc, inv) // the weights, rounded to fp16
		for i, p := range sc {
			off := base + (t0+i)*kvDim
			quant.AxpyF16(out, p, s.valCache[off:off+len(out)])
		}
	}
}

// scores sets sc[i] to the scaled dot of the fp16-rounded query qh with the
// key of the i-th position from keyCache[off:] (rounded to float32 before
// the max is subtracted) and returns sc.
func (s *Session) scores(sc, qh []float32, off int, scale float32) []float32 {
	kvDim := s.kvDim
	for i := range sc {
		sc[i] = float32(quant.DotF16(qh, s.keyCache[off:off+len(qh)]) * scale)
		off += kvDim
	}
	return sc
}

package engine

import (
	"math"

	"github.com/x448/float16"

	"github.com/picolm/picolm-wasm/quant"
)

// attention computes, for every query head h, softmax(q_h·K/sqrt(headDim))·V
// over cached positions 0..pos of the KV head h/kvMul, into s.xb[h*headDim:].
//
// It rounds where llama.cpp's attention (without flash attention) rounds:
//
//   - kq = K·q: ggml's mul_mat converts its activation to the keys' fp16,
//     so the query is rounded to fp16 first;
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
// it recomputes them: one pass over the keys for the max, one for the sum,
// one for the weighted sum of the values.
func (s *Session) attention(l, pos int) { s.attend(s.xb, s.q, s.qh, l, pos) }

// attend is attention for the query q ([dim]) into xb ([dim]), with qh
// ([headDim]) as scratch: Prefill runs it for several positions at once.
func (s *Session) attend(xb, q, qh []float32, l, pos int) {
	c := &s.m.Config
	hd := c.HeadDim
	scale, qScale := 1/float32(math.Sqrt(float64(hd))), float32(1)
	if s.m.spec.scaleQ {
		scale, qScale = 1, scale
	}
	layerBase := l * s.ctx * c.KVDim
	for h := 0; h < c.Heads; h++ {
		for i, v := range q[h*hd : (h+1)*hd] {
			qh[i] = quant.FP16ToFP32(float16.Fromfloat32(v * qScale).Bits())
		}
		out := xb[h*hd : (h+1)*hd]
		clear(out)
		base := layerBase + (h/c.KVMul)*hd // key/value of this head at position 0
		maxScore := float32(math.Inf(-1))
		for t, off := 0, base; t <= pos; t, off = t+1, off+c.KVDim {
			maxScore = max(maxScore, s.score(qh, off, scale))
		}
		var sum float64
		for t, off := 0, base; t <= pos; t, off = t+1, off+c.KVDim {
			sum += float64(expf(s.score(qh, off, scale) - maxScore))
		}
		inv := float32(1 / sum)
		for t, off := 0, base; t <= pos; t, off = t+1, off+c.KVDim {
			p := expf(s.score(qh, off, scale)-maxScore) * inv
			p = quant.FP16ToFP32(float16.Fromfloat32(p).Bits())
			axpyF16Vec(out, p, s.valCache[off:off+hd])
		}
	}
}

// score is the scaled dot of the fp16-rounded query in qh with the key at
// keyCache[off:], rounded to float32 before the max is subtracted.
func (s *Session) score(qh []float32, off int, scale float32) float32 {
	return float32(dotF16Vec(qh, s.keyCache[off:off+len(qh)]) * scale)
}

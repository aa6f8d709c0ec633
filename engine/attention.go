package engine

import (
	"math"

	"github.com/picolm/picolm-wasm/quant"
)

// attention sets ao[b], for b < n, to the attention of position pos+b of
// the batch in layer l: for every query head h of this part (all of them
// unless the model is split, see Session.kvLo), softmax(q_h·K/sqrt(headDim))·V
// over cached positions 0..pos+b of the KV head h/kvMul. The query heads
// that share a KV head are done together (a group, at most maxGroup heads),
// so that each cached key and value is converted from fp16 once for all of
// them (quant.ScoresF16, quant.AccumulateF16). Its work items are the
// (position, group) pairs, run over the session's pool: a token's groups
// when decoding, every group of every position for a prompt batch; a KV
// head's query heads are cut into smaller groups when there are too few
// items for the pool's threads. Every head's result is the same bits
// however the heads are grouped.
//
// It rounds where llama.cpp's attention (without flash attention) rounds:
//
//   - kq = K·q: ggml's mul_mat converts its activation to the keys' fp16,
//     so the query is rounded to fp16 first (in place in q: the forward
//     pass does not use it afterwards);
//   - the softmax is ggml_soft_max's: the max, then exp(score-max) and their
//     float64 sum as ggml_vec_soft_max_f32 computes them (quant.ExpShift:
//     ggml_v_expf 16 at a time), then each weight exp(score-max)·float32(1/sum);
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
// be folded into one online pass: it makes three passes over the keys, one
// for the max, one for the sum, one for the weighted sum of the values.
// The scores are kept for a tile of positions, the whole context up to
// attnTileMax positions (a buffer per thread of the pool), so a context
// that fits in one tile computes its scores and their exponentials only
// once; a longer one computes them again in the second and third passes.
func (s *Session) attention(l, pos, n int) {
	c := &s.m.Config
	a := &s.attn
	kvHeads := s.kvHi - s.kvLo // this part's KV heads
	// The groups: each KV head's query heads cut into subs groups of at
	// most group heads, more of them while the items do not give every
	// thread two.
	subs := (c.KVMul + maxGroup - 1) / maxGroup
	for subs < c.KVMul && n*kvHeads*subs < 2*s.pool.threads {
		subs *= 2
	}
	subs = min(subs, c.KVMul)
	group := (c.KVMul + subs - 1) / subs
	subs = (c.KVMul + group - 1) / group
	if a.step == nil { // made once: the per-token path does not allocate
		if a.tile == 0 {
			a.tile = min(s.ctx, attnTileMax)
		}
		a.scratch = make(chan []float32, s.pool.threads)
		for range s.pool.threads {
			a.scratch <- make([]float32, maxGroup*a.tile)
		}
		a.step = func(i int) {
			b, k := i/(a.kvHeads*a.subs), i%(a.kvHeads*a.subs)
			kh, sub := k/a.subs, k%a.subs // the part's kh-th KV head, its sub-th group
			j0 := kh*c.KVMul + sub*a.group
			j1 := min(j0+a.group, (kh+1)*c.KVMul) // the part's query heads j0..j1-1
			hd := c.HeadDim
			h0 := s.kvLo*c.KVMul + j0 // the model's head of j0
			q := s.q[b][j0*hd : j1*hd]
			quant.RoundFP16(q, a.qScale)
			tile := <-a.scratch
			s.attendGroup(s.ao[b][h0*hd:(h0+j1-j0)*hd], q, a.l, a.pos+b, kh, a.scale, tile)
			a.scratch <- tile
		}
	}
	a.l, a.pos = l, pos
	a.kvHeads, a.subs, a.group = kvHeads, subs, group
	a.scale, a.qScale = s.attnScales()
	s.pool.forEach(n*kvHeads*subs, a.step)
}

// attnItems are attention's work items over the pool: step(i) is group
// i%(kvHeads·subs) of the batch's position i/(kvHeads·subs), in layer l,
// for the batch from position pos on, with the scales of the scores and of
// the query; a group is at most group query heads of one KV head, which
// has subs of them. A step takes a tile of scores from scratch (one per
// thread, [maxGroup][tile]) and puts it back.
type attnItems struct {
	l, pos               int
	kvHeads, subs, group int
	scale, qScale        float32
	tile                 int // positions per tile: min(ctx, attnTileMax) unless set before the first step
	scratch              chan []float32
	step                 func(i int)
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

// attnTileMax is the most positions whose scores are kept at once, and
// maxGroup the most query heads attended together: a thread's tile of
// scores is [maxGroup][min(ctx, attnTileMax)] float32 (64 KiB at a context
// of 2048, 256 KiB at most).
const (
	attnTileMax = 8192
	maxGroup    = 8
)

// attendGroup sets out ([g][headDim]) to softmax(q_j·K/scale)·V for the g
// fp16-rounded query heads q ([g][headDim]) of this part's KV head kvh (of
// the cache's), over positions 0..pos of layer l, with the scores in tile
// ([maxGroup][tile positions]).
func (s *Session) attendGroup(out, q []float32, l, pos, kvh int, scale float32, tile []float32) {
	kvDim := s.kvDim
	hd := s.m.Config.HeadDim
	g := len(q) / hd
	base := l*s.ctx*kvDim + kvh*hd // key/value of this head at position 0
	keys, vals := s.keyCache[base:], s.valCache[base:]
	attnTile := len(tile) / maxGroup // tile is [g][m]: head j's scores of the m positions from t0
	var maxScore [maxGroup]float32
	var sum [maxGroup]float64
	n := pos + 1
	oneTile := n <= attnTile

	// scores sets the tile to the scaled scores of the m positions from t0
	// (each rounded to float32 before the max is subtracted) and returns it.
	scores := func(t0, m int) []float32 {
		sc := tile[:g*m]
		quant.ScoresF16(sc, q, keys[t0*kvDim:], hd, kvDim, m)
		for i, v := range sc {
			sc[i] = v * scale
		}
		return sc
	}
	for j := range g {
		maxScore[j] = float32(math.Inf(-1))
	}
	for t0 := 0; t0 < n; t0 += attnTile {
		m := min(attnTile, n-t0)
		sc := scores(t0, m)
		for j := range g {
			for _, v := range sc[j*m : (j+1)*m] {
				maxScore[j] = max(maxScore[j], v)
			}
		}
	}
	for t0 := 0; t0 < n; t0 += attnTile {
		m := min(attnTile, n-t0)
		sc := tile[:g*m]
		if !oneTile {
			scores(t0, m)
		}
		for j := range g {
			sum[j] = quant.ExpShift(sc[j*m:(j+1)*m], maxScore[j], sum[j])
		}
	}
	clear(out)
	for t0 := 0; t0 < n; t0 += attnTile {
		m := min(attnTile, n-t0)
		sc := tile[:g*m]
		if !oneTile {
			scores(t0, m)
			for j := range g {
				quant.ExpShift(sc[j*m:(j+1)*m], maxScore[j], 0)
			}
		}
		for j := range g {
			quant.RoundFP16(sc[j*m:(j+1)*m], float32(1/sum[j])) // the weights, rounded to fp16
		}
		quant.AccumulateF16(out, sc, vals[t0*kvDim:], hd, kvDim, m)
	}
}

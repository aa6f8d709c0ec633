package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/picolm/picolm-wasm/quant"
)

// attendRef is attention as the readable three passes, over a [pos+1]
// row of scores.
func attendRef(s *Session, xb, q []float32, l, pos int) {
	c := &s.m.Config
	hd := c.HeadDim
	scale, qScale := s.attnScales()
	qh := make([]float32, hd)
	sc := make([]float32, pos+1)
	for h := 0; h < c.Heads; h++ {
		copy(qh, q[h*hd:(h+1)*hd])
		quant.RoundFP16(qh, qScale)
		out := xb[h*hd : (h+1)*hd]
		clear(out)
		base := l*s.ctx*c.KVDim + (h/c.KVMul)*hd
		maxScore := float32(math.Inf(-1))
		for t := range sc {
			off := base + t*c.KVDim
			sc[t] = float32(quant.DotF16(qh, s.keyCache[off:off+hd]) * scale)
			maxScore = max(maxScore, sc[t])
		}
		inv := float32(1 / quant.ExpShift(sc, maxScore, 0))
		for t, e := range sc {
			p := roundedFP16(e * inv)
			off := base + t*c.KVDim
			quant.AxpyF16(out, p, s.valCache[off:off+hd])
		}
	}
}

func roundedFP16(x float32) float32 {
	v := []float32{x}
	quant.RoundFP16(v, 1)
	return v[0]
}

// TestAttentionTiles: attention (the (position, group) pairs over the
// pool) gives attendRef's bits, for a batch of one and of several
// positions, for contexts within one tile of scores and over several, for
// one thread and several (which cut the groups smaller), and for groups of
// one query head up to more than maxGroup.
func TestAttentionTiles(t *testing.T) {
	for _, shape := range []struct{ heads, kvHeads, hd int }{{4, 2, 16}, {32, 4, 8}, {12, 1, 8}, {6, 6, 12}} {
		t.Run(fmt.Sprintf("%d heads over %d, %d dims", shape.heads, shape.kvHeads, shape.hd), func(t *testing.T) {
			testAttentionTiles(t, shape.heads, shape.kvHeads, shape.hd)
		})
	}
}

// testAttentionTiles is TestAttentionTiles for one shape: heads query
// heads of hd dims over kvHeads KV heads (groups of one head to more than
// maxGroup).
func testAttentionTiles(t *testing.T, heads, kvHeads, hd int) {
	m := &Model{}
	c := &m.Config
	c.Heads, c.KVHeads, c.HeadDim, c.Layers = heads, kvHeads, hd, 2
	c.Dim, c.KVMul, c.KVDim = heads*hd, heads/kvHeads, kvHeads*hd
	const attnTile = 512 // positions per tile of scores here, to test several
	ctx := 2*attnTile + 100
	rng := rand.New(rand.NewPCG(7, 8))
	for _, run := range []struct{ threads, tile int }{{1, attnTile}, {3, attnTile}, {1, 0}, {2, 0}} {
		threads := run.threads
		s := &Session{m: m, ctx: ctx, pool: newPool(threads),
			keyCache: randFP16s(rng, c.Layers*ctx*c.KVDim), valCache: randFP16s(rng, c.Layers*ctx*c.KVDim),
			kvHi: c.KVHeads, kvDim: c.KVDim, qDim: c.Dim, q: rows(maxBatch, c.Dim), ao: rows(maxBatch, c.Dim)}
		s.attn.tile = run.tile // 0: the whole context
		q := rows(maxBatch, c.Dim)
		want := make([]float32, c.Dim)
		for _, at := range []struct{ pos, n int }{{0, 1}, {1, 1}, {7, 1}, {attnTile - 1, 1}, {attnTile, 1}, {attnTile + 1, 1}, {2*attnTile + 99, 1},
			{0, maxBatch}, {attnTile - 3, 5}, {2*attnTile + 100 - maxBatch, maxBatch}} {
			for b := range at.n {
				for i := range q[b] {
					q[b][i] = float32(rng.NormFloat64() * 2)
				}
				copy(s.q[b], q[b])
			}
			s.attention(1, at.pos, at.n)
			for b := range at.n {
				attendRef(s, want, q[b], 1, at.pos+b)
				for i := range want {
					if math.Float32bits(s.ao[b][i]) != math.Float32bits(want[i]) {
						t.Fatalf("%d threads, tile %d, pos %d+%d, [%d]: attention %g, reference %g", threads, run.tile, at.pos, b, i, s.ao[b][i], want[i])
					}
				}
			}
		}
		s.pool.close()
	}
}

// benchSession is a session over no weights with TinyLlama-1.1B's attention
// shape (32 query heads of 64 dims over 4 KV heads) and a random KV cache.
func benchSession(threads int) *Session {
	m := &Model{}
	c := &m.Config
	c.Dim, c.Heads, c.KVHeads, c.HeadDim, c.Layers = 2048, 32, 4, 64, 1
	c.KVMul, c.KVDim = c.Heads/c.KVHeads, c.KVHeads*c.HeadDim
	ctx := 1024
	rng := rand.New(rand.NewPCG(1, 2))
	s := &Session{m: m, ctx: ctx, pool: newPool(threads),
		keyCache: randFP16s(rng, ctx*c.KVDim), valCache: randFP16s(rng, ctx*c.KVDim),
		kvHi: c.KVHeads, kvDim: c.KVDim, qDim: c.Dim, q: rows(1, c.Dim), ao: rows(1, c.Dim)}
	for i := range s.q[0] {
		s.q[0][i] = float32(rng.NormFloat64())
	}
	return s
}

// BenchmarkAttention: one layer's attention at a position (decode).
func BenchmarkAttention(b *testing.B) {
	for _, pos := range []int{127, 1023} {
		b.Run(fmt.Sprintf("pos=%d", pos), func(b *testing.B) {
			s := benchSession(1)
			defer s.pool.close()
			q := append([]float32(nil), s.q[0]...)
			for b.Loop() {
				copy(s.q[0], q)
				s.attention(0, pos, 1)
			}
		})
	}
}

func randFP16s(rng *rand.Rand, n int) []uint16 {
	h := make([]uint16, n)
	for i := range h {
		h[i] = quant.FP32ToFP16(float32(rng.NormFloat64() * 4))
	}
	return h
}

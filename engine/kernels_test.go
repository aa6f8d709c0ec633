package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/picolm/picolm-wasm/quant"
)

// The kernels against the readable ones of ops.go. Without
// GOEXPERIMENT=simd the *Vec kernels are the readable ones; with it they are
// the SIMD128 twins of kernels_simd.go under `GOOS=js GOARCH=wasm` (or
// wasip1) and the AVX2 twins of kernels_amd64_simd.go natively.

// TestFP16WidenAll checks the fp16 to float32 conversion of axpyF16Vec on
// all 65536 bit patterns: y = -0 + 1·x is x itself.
func TestFP16WidenAll(t *testing.T) {
	x := make([]uint16, 1<<16)
	for i := range x {
		x[i] = uint16(i)
	}
	y := make([]float32, len(x))
	for i := range y {
		y[i] = float32(math.Copysign(0, -1))
	}
	axpyF16Vec(y, 1, x)
	for i, got := range y {
		want := quant.FP16ToFP32(uint16(i))
		if want != want {
			if got == got {
				t.Fatalf("fp16 %#04x: %g, want NaN", i, got)
			}
			continue
		}
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fp16 %#04x: %g (%#08x), want %g (%#08x)", i, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
}

func randFP16s(rng *rand.Rand, n int) []uint16 {
	h := make([]uint16, n)
	for i := range h {
		h[i] = quant.FP32ToFP16(float32(rng.NormFloat64() * 4))
	}
	return h
}

func TestAttentionKernelTwins(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		n := 1 + rng.IntN(300)
		a := make([]float32, n)
		for i := range a {
			a[i] = float32(rng.NormFloat64())
		}
		b := randFP16s(rng, n)

		// dot: bit-identical (the same products, summed in the same order).
		if got, want := dotF16Vec(a, b), dotF16(a, b); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("n=%d: dotF16Vec %g, dotF16 %g", n, got, want)
		}

		// axpy: bit-identical.
		y1 := make([]float32, n)
		for i := range y1 {
			y1[i] = float32(rng.NormFloat64())
		}
		y2 := append([]float32(nil), y1...)
		alpha := float32(rng.Float64())
		axpyF16Vec(y1, alpha, b)
		axpyF16(y2, alpha, b)
		for i := range y1 {
			if math.Float32bits(y1[i]) != math.Float32bits(y2[i]) {
				t.Fatalf("n=%d i=%d: axpyF16Vec %g, axpyF16 %g", n, i, y1[i], y2[i])
			}
		}
	}
}

// sameFloat reports whether a and b have the same bits, or are both NaN.
func sameFloat(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

// TestExpfPoly sweeps the float32 range (every 509th bit pattern, and every
// pattern near where e^x leaves the float32 range): expfPoly, the
// algorithm of the SIMD exp kernels, is expf bit for bit.
func TestExpfPoly(t *testing.T) {
	check := func(b uint32) {
		x := math.Float32frombits(b)
		if got, want := expfPoly(x), expf(x); !sameFloat(got, want) {
			t.Fatalf("x = %g (%#08x): expfPoly %g, expf %g", x, b, got, want)
		}
	}
	stride := uint64(509)
	if testing.Short() {
		stride = 4099
	}
	for b := uint64(0); b < 1<<32; b += stride {
		check(uint32(b))
	}
	for _, edge := range []float32{expMin, expMax, -87.33655, 88.72284, 0x1p-28} {
		for _, x := range []float32{edge, -edge} {
			b := math.Float32bits(x)
			for d := uint32(0); d < 1<<12; d++ {
				check(b - 1<<11 + d)
			}
		}
	}
}

func TestExpKernelTwins(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		expMin, expMax, -200, 200, 0x1p-30, -0x1p-30, -87.4, 88.8}
	for range 500 {
		n := 1 + rng.IntN(300)
		x := make([]float32, n)
		for i := range x {
			switch rng.IntN(8) {
			case 0:
				x[i] = special[rng.IntN(len(special))]
			case 1:
				x[i] = float32(rng.NormFloat64() * 60)
			default:
				x[i] = float32(rng.NormFloat64() * 4)
			}
		}
		up := make([]float32, n)
		for i := range up {
			up[i] = float32(rng.NormFloat64())
		}
		m := float32(rng.NormFloat64() * 3)

		a, b := append([]float32(nil), x...), append([]float32(nil), x...)
		expShift(a, m)
		expShiftRef(b, m)
		for i := range a {
			if !sameFloat(a[i], b[i]) {
				t.Fatalf("n=%d: expShift(%g - %g) = %g, expShiftRef %g", n, x[i], m, a[i], b[i])
			}
		}

		a, b = append(a[:0], x...), append(b[:0], x...)
		swiglu(a, up)
		swigluRef(b, up)
		for i := range a {
			if !sameFloat(a[i], b[i]) {
				t.Fatalf("n=%d: swiglu(%g, %g) = %g, swigluRef %g", n, x[i], up[i], a[i], b[i])
			}
		}
	}
}

// attendRef is attention as the readable three passes: every score
// recomputed in each, one position at a time.
func attendRef(s *Session, xb, q []float32, l, pos int) {
	c := &s.m.Config
	hd := c.HeadDim
	scale, qScale := s.attnScales()
	qh := make([]float32, hd)
	for h := 0; h < c.Heads; h++ {
		copy(qh, q[h*hd:(h+1)*hd])
		roundFP16(qh, qScale)
		out := xb[h*hd : (h+1)*hd]
		clear(out)
		base := l*s.ctx*c.KVDim + (h/c.KVMul)*hd
		score := func(t int) float32 {
			off := base + t*c.KVDim
			return float32(dotF16(qh, s.keyCache[off:off+hd]) * scale)
		}
		maxScore := float32(math.Inf(-1))
		for t := 0; t <= pos; t++ {
			maxScore = max(maxScore, score(t))
		}
		var sum float64
		for t := 0; t <= pos; t++ {
			sum += float64(expf(score(t) - maxScore))
		}
		inv := float32(1 / sum)
		for t := 0; t <= pos; t++ {
			p := roundedFP16(expf(score(t)-maxScore) * inv)
			off := base + t*c.KVDim
			axpyF16(out, p, s.valCache[off:off+hd])
		}
	}
}

func roundedFP16(x float32) float32 {
	v := []float32{x}
	roundFP16(v, 1)
	return v[0]
}

// TestAttentionTiles: attention (the (position, head) pairs over the pool)
// gives attendRef's bits, for a batch of one and of several positions, for
// contexts within one tile of scores and over several.
func TestAttentionTiles(t *testing.T) {
	m := &Model{}
	c := &m.Config
	c.Dim, c.Heads, c.HeadDim, c.KVMul, c.KVDim, c.Layers = 64, 4, 16, 2, 32, 2
	ctx := 2*attnTile + 100
	rng := rand.New(rand.NewPCG(7, 8))
	for _, threads := range []int{1, 3} {
		s := &Session{m: m, ctx: ctx, pool: newPool(threads),
			keyCache: randFP16s(rng, c.Layers*ctx*c.KVDim), valCache: randFP16s(rng, c.Layers*ctx*c.KVDim),
			q: rows(maxBatch, c.Dim), xb: rows(maxBatch, c.Dim)}
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
					if math.Float32bits(s.xb[b][i]) != math.Float32bits(want[i]) {
						t.Fatalf("%d threads, pos %d+%d, [%d]: attention %g, reference %g", threads, at.pos, b, i, s.xb[b][i], want[i])
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
		q: rows(1, c.Dim), xb: rows(1, c.Dim)}
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

// BenchmarkSwiglu: TinyLlama's FFN width.
func BenchmarkSwiglu(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	g, u, g0 := make([]float32, 5632), make([]float32, 5632), make([]float32, 5632)
	for i := range g0 {
		g0[i], u[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	for b.Loop() {
		copy(g, g0)
		swiglu(g, u)
	}
}

// TestRoundFP16 sweeps the float32 range (every 509th bit pattern, and
// every pattern near fp16's boundaries): roundFP16 is roundFP16Ref.
func TestRoundFP16(t *testing.T) {
	var xs []float32
	stride := uint64(509)
	if testing.Short() {
		stride = 4099
	}
	for b := uint64(0); b < 1<<32; b += stride {
		xs = append(xs, math.Float32frombits(uint32(b)))
	}
	for _, edge := range []float32{0x1p-14, 0x1p-24, 0x1p-25, 65504, 65520, 1} {
		for _, x := range []float32{edge, -edge} {
			b := math.Float32bits(x)
			for d := uint32(0); d < 1<<14; d++ {
				xs = append(xs, math.Float32frombits(b-1<<13+d))
			}
		}
	}
	for _, scale := range []float32{1, 0.125, 3} {
		got, want := append([]float32(nil), xs...), append([]float32(nil), xs...)
		roundFP16(got, scale)
		roundFP16Ref(want, scale)
		for i := range got {
			if !sameFloat(got[i], want[i]) {
				t.Fatalf("scale %g, x = %g (%#08x): roundFP16 %g, roundFP16Ref %g", scale, xs[i], math.Float32bits(xs[i]), got[i], want[i])
			}
		}
	}
}

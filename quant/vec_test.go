package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The vector kernels of every kernel set against their references (vec.go).

// TestFP16WidenAll checks the fp16 to float32 conversion of AxpyF16 on all
// 65536 bit patterns: y = -0 + 1·x is x itself.
func TestFP16WidenAll(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		x := make([]uint16, 1<<16)
		for i := range x {
			x[i] = uint16(i)
		}
		y := make([]float32, len(x))
		for i := range y {
			y[i] = float32(math.Copysign(0, -1))
		}
		ks.vec.axpyF16(y, 1, x)
		for i, got := range y {
			want := FP16ToFP32(uint16(i))
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
	})
}

func randFP16s(rng *rand.Rand, n int) []uint16 {
	h := make([]uint16, n)
	for i := range h {
		h[i] = FP32ToFP16(float32(rng.NormFloat64() * 4))
	}
	return h
}

// TestF16VecTwins: DotF16 and AxpyF16 give their references' bits (the
// same products, summed in the same order).
func TestF16VecTwins(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		rng := rand.New(rand.NewPCG(3, 4))
		for range 500 {
			n := 1 + rng.IntN(300)
			a := make([]float32, n)
			for i := range a {
				a[i] = float32(rng.NormFloat64())
			}
			b := randFP16s(rng, n)
			if got, want := ks.vec.dotF16(a, b), dotF16VecRef(a, b); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("n=%d: DotF16 %g, reference %g", n, got, want)
			}
			y1 := make([]float32, n)
			for i := range y1 {
				y1[i] = float32(rng.NormFloat64())
			}
			y2 := append([]float32(nil), y1...)
			alpha := float32(rng.Float64())
			ks.vec.axpyF16(y1, alpha, b)
			axpyF16Ref(y2, alpha, b)
			for i := range y1 {
				if math.Float32bits(y1[i]) != math.Float32bits(y2[i]) {
					t.Fatalf("n=%d i=%d: AxpyF16 %g, reference %g", n, i, y1[i], y2[i])
				}
			}
		}
	})
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

// TestExpTwins: ExpShift and SwiGLU give their references' bits, on
// random values, wide ones and the special ones (zeros, infinities, NaNs,
// the ends of the float32 range of e^x).
func TestExpTwins(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
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
			ks.vec.expShift(a, m)
			expShiftRef(b, m)
			for i := range a {
				if !sameFloat(a[i], b[i]) {
					t.Fatalf("n=%d: ExpShift(%g - %g) = %g, reference %g", n, x[i], m, a[i], b[i])
				}
			}

			a, b = append(a[:0], x...), append(b[:0], x...)
			ks.vec.swiglu(a, up)
			swigluRef(b, up)
			for i := range a {
				if !sameFloat(a[i], b[i]) {
					t.Fatalf("n=%d: SwiGLU(%g, %g) = %g, reference %g", n, x[i], up[i], a[i], b[i])
				}
			}
		}
	})
}

// TestRoundFP16 sweeps the float32 range (every 509th bit pattern, and
// every pattern near fp16's boundaries): RoundFP16 is roundFP16Ref.
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
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		for _, scale := range []float32{1, 0.125, 3} {
			got, want := append([]float32(nil), xs...), append([]float32(nil), xs...)
			ks.vec.roundFP16(got, scale)
			roundFP16Ref(want, scale)
			for i := range got {
				if !sameFloat(got[i], want[i]) {
					t.Fatalf("scale %g, x = %g (%#08x): RoundFP16 %g, reference %g", scale, xs[i], math.Float32bits(xs[i]), got[i], want[i])
				}
			}
		}
	})
}

// BenchmarkSwiGLU: TinyLlama's FFN width.
func BenchmarkSwiGLU(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	g, u, g0 := make([]float32, 5632), make([]float32, 5632), make([]float32, 5632)
	for i := range g0 {
		g0[i], u[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	for b.Loop() {
		copy(g, g0)
		SwiGLU(g, u)
	}
}

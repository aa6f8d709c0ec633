package quant

import (
	"math"
	"math/rand/v2"
	"runtime"
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

// TestF16GroupTwins: ScoresF16 and AccumulateF16 give their references'
// bits, which are DotF16's and AxpyF16's per head and position, for head
// sizes the SIMD kernels take (multiples of 8 up to 256) and others.
func TestF16GroupTwins(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		rng := rand.New(rand.NewPCG(5, 6))
		for _, hd := range []int{8, 16, 60, 64, 96, 128, 256, 264} {
			for _, g := range []int{1, 2, 3, 8} {
				n := 1 + rng.IntN(40)
				stride := hd * (1 + rng.IntN(3))
				keys := randFP16s(rng, n*stride)
				q := make([]float32, g*hd)
				for i := range q {
					q[i] = float32(rng.NormFloat64())
				}
				got, want := make([]float32, g*n), make([]float32, g*n)
				ks.vec.scoresF16(got, q, keys, hd, stride, n)
				for j := range g {
					for i := range n {
						want[j*n+i] = dotF16VecRef(q[j*hd:(j+1)*hd], keys[i*stride:])
					}
				}
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("hd=%d g=%d n=%d [%d]: ScoresF16 %g, reference %g", hd, g, n, i, got[i], want[i])
					}
				}
				out1 := make([]float32, g*hd)
				for i := range out1 {
					out1[i] = float32(rng.NormFloat64())
				}
				out2 := append([]float32(nil), out1...)
				ks.vec.accumulateF16(out1, got, keys, hd, stride, n)
				for i := range n {
					for j := range g {
						axpyF16Ref(out2[j*hd:(j+1)*hd], got[j*n+i], keys[i*stride:])
					}
				}
				for i := range out1 {
					if math.Float32bits(out1[i]) != math.Float32bits(out2[i]) {
						t.Fatalf("hd=%d g=%d n=%d [%d]: AccumulateF16 %g, reference %g", hd, g, n, i, out1[i], out2[i])
					}
				}
			}
		}
	})
}

// TestExpTwins: ExpShift and SwiGLU give their references' bits (and
// ExpShift the same sum), on random values, wide ones and the special ones
// (zeros, infinities, NaNs, the ends of the float32 range of e^x), for
// lengths with and without a partial block of 16.
func TestExpTwins(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		rng := rand.New(rand.NewPCG(5, 6))
		special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
			-104, 89, -200, 200, 0x1p-30, -0x1p-30, -87.4, 88.8, -103.97, 88.38, 133.08, -133.08}
		for iter := range 500 {
			n := 1 + rng.IntN(300)
			if iter%3 == 0 {
				n = vexpWidth * (1 + rng.IntN(20))
			}
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
			sum0 := rng.Float64()

			a, b := append([]float32(nil), x...), append([]float32(nil), x...)
			sa, sb := ks.vec.expShift(a, m, sum0), expShiftRef(b, m, sum0)
			for i := range a {
				if !sameFloat(a[i], b[i]) {
					t.Fatalf("n=%d i=%d: ExpShift(%g - %g) = %g, reference %g", n, i, x[i], m, a[i], b[i])
				}
			}
			if math.Float64bits(sa) != math.Float64bits(sb) && !(sa != sa && sb != sb) {
				t.Fatalf("n=%d: ExpShift's sum %g, reference %g", n, sa, sb)
			}

			a, b = append(a[:0], x...), append(b[:0], x...)
			ks.vec.swiglu(a, up)
			swigluRef(b, up)
			for i := range a {
				if !sameFloat(a[i], b[i]) {
					t.Fatalf("n=%d i=%d: SwiGLU(%g, %g) = %g, reference %g", n, i, x[i], up[i], a[i], b[i])
				}
			}
		}
	})
}

// TestExpSweep sweeps the float32 range through every kernel set's
// ExpShift (m = 0) and SwiGLU (up = 1) in whole blocks, whose elements
// are computed as expfV computes them: every 509th bit pattern (4099th with
// -short or under wasm) and every pattern near where e^x leaves the float32
// range, each kernel's bits against the reference's.
func TestExpSweep(t *testing.T) {
	stride := uint64(509)
	if testing.Short() || runtime.GOARCH == "wasm" {
		stride = 4099
	}
	var xs []float32
	for b := uint64(0); b < 1<<32; b += stride {
		xs = append(xs, math.Float32frombits(uint32(b)))
	}
	for _, edge := range []float32{-103.97, -87.33, 88.38, 88.72, 133.08, 0x1p-25} {
		for _, x := range []float32{edge, -edge} {
			b := math.Float32bits(x)
			for d := uint32(0); d < 1<<12; d++ {
				xs = append(xs, math.Float32frombits(b-1<<11+d))
			}
		}
	}
	xs = xs[:len(xs)&^(vexpWidth-1)]
	want := make([]float32, len(xs))
	for i, x := range xs {
		want[i] = expfV(x)
	}
	ones := make([]float32, len(xs))
	for i := range ones {
		ones[i] = 1
	}
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		got := append([]float32(nil), xs...)
		ks.vec.expShift(got, 0, 0)
		for i := range got {
			if !sameFloat(got[i], want[i]) {
				t.Fatalf("x = %g (%#08x): ExpShift %g, expfV %g", xs[i], math.Float32bits(xs[i]), got[i], want[i])
			}
		}
		got = append(got[:0], xs...)
		ks.vec.swiglu(got, ones)
		for i, x := range xs {
			if w := x / (1 + expfV(0-x)); !sameFloat(got[i], w) {
				t.Fatalf("x = %g (%#08x): SwiGLU %g, reference %g", x, math.Float32bits(x), got[i], w)
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

// TestExpHalfwayLanes: inputs whose polynomial sums in expfVGo fall on a
// float32 halfway point in float64 (found by a search over all 2^32
// inputs), the lanes the portable and wasm kernels recompute by expfV:
// every kernel set's ExpShift and SwiGLU give the reference's bits there.
func TestExpHalfwayLanes(t *testing.T) {
	var xs []float32
	for _, b := range []uint32{0x33800005, 0x36086823, 0x36d4fa58, 0x3e000000, 0x3ee2e430, 0x3f117218, 0x3f517218,
		0x3f917218, 0x3fc17218, 0x3fea2b24, 0x400d1592, 0xb3000005, 0xbe800000, 0xbf717218, 0xbfd17218, 0xc0151592,
		0xc0417218, 0xc06dce9e, 0xc08d1592, 0xc0a343d5} {
		xs = append(xs, math.Float32frombits(b), -math.Float32frombits(b))
	}
	xs = append(xs, 1, 2, 3) // a partial last block
	ones := make([]float32, len(xs))
	for i := range ones {
		ones[i] = 1
	}
	want := append([]float32(nil), xs...)
	wantSum := expShiftRef(want, 0, 0)
	wantSilu := append([]float32(nil), xs...)
	swigluRef(wantSilu, ones)
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		got := append([]float32(nil), xs...)
		if sum := ks.vec.expShift(got, 0, 0); sum != wantSum {
			t.Errorf("ExpShift's sum %g, reference %g", sum, wantSum)
		}
		silu := append([]float32(nil), xs...)
		ks.vec.swiglu(silu, ones)
		for i, x := range xs {
			if !sameFloat(got[i], want[i]) {
				t.Errorf("x = %g (%#08x): ExpShift %g, reference %g", x, math.Float32bits(x), got[i], want[i])
			}
			if !sameFloat(silu[i], wantSilu[i]) {
				t.Errorf("x = %g (%#08x): SwiGLU %g, reference %g", x, math.Float32bits(x), silu[i], wantSilu[i])
			}
		}
	})
}

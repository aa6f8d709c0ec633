package engine

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/picolm/picolm-wasm/quant"
)

// The attention kernels against the readable ones of ops.go. Natively
// (and in wasm builds without GOEXPERIMENT=simd) the *Vec kernels are the
// readable ones; under `GOOS=js GOARCH=wasm GOEXPERIMENT=simd go test`
// they are the SIMD128 twins of kernels_simd.go.

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

		// dot: the summation order may differ; both are within
		// n·2^-24·Σ|a·b| of the exact value, so of each other within twice that.
		got, want := dotF16Vec(a, b), dotF16(a, b)
		var mag float64
		for i := range a {
			mag += math.Abs(float64(a[i] * quant.FP16ToFP32(b[i])))
		}
		if d := math.Abs(float64(got - want)); d > 2*float64(n)*0x1p-24*mag {
			t.Fatalf("n=%d: dotF16Vec %g, dotF16 %g (|Σ|ab|| = %g)", n, got, want, mag)
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

package quant

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQuantizeActGolden: on the golden activation (where ggml's AVX2 and
// reference quantizers agree) the activation quantizers give ggml's bytes.
func TestQuantizeActGolden(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		for _, c := range []struct {
			file string // a weight type whose vec_dot_type is the format
			size int
		}{{"Q8_0", q8_0Bytes}, {"Q4_1", q8_1Bytes}} {
			x := f32s(readGolden(t, c.file+".act.f32"))
			want := readGolden(t, c.file+".act.blocks")
			got := make([]byte, len(x)/qk*c.size)
			ks.vec.quantizeAct(got, x, c.size)
			if !bytes.Equal(got, want) {
				t.Errorf("%s activation: bytes differ from ggml's", c.file)
			}
		}
	})
}

// TestQuantizeActRounding: the two places where ggml's x86 quantizer
// differs from its scalar reference: x·(127/amax), not x·(1/(amax/127)), and
// ties rounded to even.
func TestQuantizeActRounding(t *testing.T) {
	for _, c := range []struct {
		x    []float32
		want []int8
	}{
		// 127/1.0004 is one ulp below 1/(1.0004/127): 0.011815746 gives
		// 1.4999999 (the reference's 1.5 rounds to 2).
		{[]float32{1.0004, 0.011815746, -0.01969291}, []int8{127, 1, -2}},
		// amax 127: the inverse scale is exactly 1 and these are exact ties.
		{[]float32{127, 2.5, -3.5, 0.5, -0.5}, []int8{127, 2, -4, 0, 0}},
	} {
		x := make([]float32, qk)
		copy(x, c.x)
		blk := make([]byte, q8_0Bytes)
		QuantizeActQ8_0(blk, x)
		for i, w := range c.want {
			if got := int8(blk[2+i]); got != w {
				t.Errorf("x = %v: q[%d] = %d, want %d", c.x, i, got, w)
			}
		}
	}
	// Saturation and degenerate blocks never panic and stay decodable.
	for _, x := range [][]float32{make([]float32, qk), {float32(math.Inf(1)), 1}, {float32(math.NaN()), 1}} {
		in := make([]float32, qk)
		copy(in, x)
		QuantizeActQ8_0(make([]byte, q8_0Bytes), in)
		QuantizeActQ8_1(make([]byte, q8_1Bytes), in)
	}
}

// TestQuantizeActTwins: every kernel set's activation quantizer gives
// quantizeActBlockRef's blocks, bit for bit, in both formats (see
// randActBlock).
func TestQuantizeActTwins(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		rng := rand.New(rand.NewPCG(3, 5))
		for iter := range 4000 {
			x := randActBlock(rng, iter)
			size := []int{q8_0Bytes, q8_1Bytes}[iter%2]
			want, got := make([]byte, size), make([]byte, size)
			quantizeActBlockRef(want, x)
			ks.vec.quantizeAct(got, x, size)
			if !bytes.Equal(got, want) {
				t.Fatalf("iter %d: x=%v\ngot       %v\nreference %v", iter, x, got, want)
			}
		}
	})
}

// randActBlock returns 32 activations for test iter: random of several
// magnitudes, exact ties (x·id = k + 1/2), and blocks with zeros,
// infinities, NaNs and huge values.
func randActBlock(rng *rand.Rand, iter int) []float32 {
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.MaxFloat32, -math.MaxFloat32, 1e-45}
	x := make([]float32, qk)
	scale := float32(math.Pow(10, float64(rng.IntN(13)-6)))
	for i := range x {
		x[i] = float32(rng.NormFloat64()) * scale
	}
	switch iter % 5 {
	case 1: // ties: amax = 127, values k + 1/2
		for i := range x {
			x[i] = float32(rng.IntN(254)-127) + 0.5
		}
		x[rng.IntN(qk)] = 127
	case 2:
		x[rng.IntN(qk)] = specials[rng.IntN(len(specials))]
	case 3:
		if iter%15 == 3 {
			clear(x)
		}
	}
	return x
}

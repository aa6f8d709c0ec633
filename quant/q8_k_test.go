package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestQuantizeQ8_KRoundsTheProduct: Q8_K rounds iscale·x as a float32
// product, half to even, as quantize_row_q8_K_ref compiled without
// contraction does (ggml's x86 quantize_row_q8_K is the reference), not the
// exact product (what an FMA-contracted nearest_int would round). The
// llama.cpp references tell the two apart: rounding the exact product adds
// five divergences to TestFormatsMatchLlamaCpp at margins of 0.018-0.040
// (synth-Q6_K "Once upon a time" and "The cat sat on the", all three
// prompts of synth-Q3_K_M) and moves three known ones. The cases are the ones where the two roundings
// differ: a float32 product exactly halfway between two integers whose
// exact value lies on the other side of the tie.
func TestQuantizeQ8_KRoundsTheProduct(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 256))
	x := make([]float32, qkK)
	dst := make([]byte, q8_KBytes)
	found := 0
	for tries := 0; found < 20 && tries < 1e7; tries++ {
		vmax := float32(1 + rng.Float64())
		iscale := -127 / vmax
		k := float32(rng.IntN(120)) + 0.5 // a tie to aim at, 0.5 .. 119.5
		v := k / iscale
		v = math.Nextafter32(v, float32(rng.IntN(2)*2-1)*vmax*2)
		p := iscale * v
		exact := float64(iscale) * float64(v)
		if float64(p) != math.Trunc(float64(p))+math.Copysign(0.5, float64(p)) || math.RoundToEven(exact) == math.RoundToEven(float64(p)) {
			continue // not a tie in float32, or rounding the exact product agrees
		}
		found++
		clear(x)
		x[0], x[1] = vmax, v
		quantizeQ8_KRef(dst, x)
		_, qs, bsums := q8KBlock(dst)
		want := int8(math.RoundToEven(float64(p)))
		if got := int8(qs[1]); got != want {
			t.Errorf("vmax %g, x %g: iscale·x = %g as float32, %.10g exact: quant %d, want %d (the float32 product, half to even)", vmax, v, p, exact, got, want)
		}
		if got := bsum(bsums, 0); got != int32(int8(qs[0]))+int32(int8(qs[1])) {
			t.Errorf("bsum %d, want %d", got, int32(int8(qs[0]))+int32(int8(qs[1])))
		}
	}
	if found < 20 {
		t.Fatalf("only %d cases found", found)
	}
}

package quant

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// halfwayCases are fused multiply-adds whose exact value lies just off a
// float32 halfway point, closer to it than float64 resolves: a·b =
// 2^e·(1 + k·2^-23)(1 − k·2^-23) = 2^e·(1 − k²·2^-46), c a float32 with an
// odd last bit and ulp 2^(e+1). Rounding a·b + c to float64 lands on the
// halfway point c + 2^e, which rounds to even (away from c); the exact value
// is below it and rounds to c.
func halfwayCases(rng *rand.Rand, n int) [][3]float32 {
	var cs [][3]float32
	for range n {
		k := float32(1 + rng.IntN(300)) // k² < 2^17: the float64 sum is the halfway point
		e := -30 + rng.IntN(40)
		a := float32(math.Ldexp(float64(1+k*0x1p-23), e/2))
		b := float32(math.Ldexp(float64(1-k*0x1p-23), e-e/2))
		c := math.Float32frombits(uint32(1+rng.IntN(200)+int(math.Float32bits(float32(math.Ldexp(1, e+24))))) | 1)
		if rng.IntN(2) == 0 {
			a, c = -a, -c
		}
		cs = append(cs, [3]float32{a, b, c})
	}
	return cs
}

// TestFMA32Fast checks fma32Fast against math/big (fma32Exact) on random
// operands of every magnitude (subnormal and overflowing results
// included), on cancelling ones, and on halfway cases, where rounding the
// float64 sum to float32 (done here to show the cases bite) is wrong.
func TestFMA32Fast(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	rnd := func() float32 {
		switch rng.IntN(10) {
		case 0:
			return math.Float32frombits(rng.Uint32()) // any pattern: NaNs, infinities, subnormals
		case 1:
			return 0
		default:
			return float32(math.Ldexp(rng.NormFloat64(), rng.IntN(80)-40))
		}
	}
	check := func(a, b, c float32) {
		if got, want := fma32Fast(a, b, c), fma32Exact(a, b, c); !sameFloat(got, want) {
			t.Fatalf("fma32Fast(%g, %g, %g) = %g (%#08x), exact %g (%#08x)", a, b, c, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	for range 200000 {
		a, b, c := rnd(), rnd(), rnd()
		if a != a || b != b || c != c || math.IsInf(float64(a), 0) || math.IsInf(float64(b), 0) || math.IsInf(float64(c), 0) {
			if got := fma32Fast(a, b, c); got == got && !math.IsInf(float64(got), 0) {
				t.Fatalf("fma32Fast(%g, %g, %g) = %g, want NaN or an infinity", a, b, c, got)
			}
			continue
		}
		check(a, b, c)
		check(a, b, -float32(float64(a)*float64(b))) // cancellation: the error of the rounded product
	}
	for _, tiny := range []float32{0x1p-149, 0x1p-140, 0x1p-127, 0x1p-126} { // subnormal results and their halfway points
		for i := range 64 {
			k := float32(i)
			check(tiny*(k+0.5), 0.5, tiny*k)
			check(tiny, 0.5+k*0x1p-24, -tiny*k)
		}
	}
	check(math.MaxFloat32, 1, 0x1p103)            // the halfway point to 2^128: overflows
	check(math.MaxFloat32, 1-0x1p-24, 0x1p103)    // just below it: the largest float32
	check(math.MaxFloat32, 1+0x1p-23, -0x1p103*2) // above, less the excess
	naive := 0
	for _, c := range halfwayCases(rng, 20000) {
		check(c[0], c[1], c[2])
		if float32(float64(c[0])*float64(c[1])+float64(c[2])) != fma32Exact(c[0], c[1], c[2]) {
			naive++
		}
	}
	if naive == 0 {
		t.Fatal("no halfway case trips float32(float64 a·b + c): the cases test nothing")
	}
}

// TestExpfV checks expfV, ggml_v_expf's lane, for its accuracy (ggml's
// comment says within 1.45 ulp plus rounding; this sweep finds 2.16 ulp,
// so the bound is 2.25) and what its AVX-512 form does beyond the float32
// range (+Inf above 88.73, 0 below −104.5), over a sweep of the float32
// range, and its special values. Its bits are ggml's by construction (the
// same operations, each fused multiply-add rounded once); a comparison by
// hand with libggml-cpu's ggml_vec_soft_max_f32 and ggml_vec_swiglu_f32
// over all 2^32 inputs found no difference, and the engine's agreement
// with llama.cpp's greedy tokens (TestFormatsMatchLlamaCpp) pins them here.
func TestExpfV(t *testing.T) {
	ulp := func(v float64) float64 { // of float32, at v
		_, e := math.Frexp(v)
		return math.Ldexp(1, max(e-24, -149))
	}
	stride := uint32(4099)
	worst := 0.0
	for b := uint32(0); b < 1<<31-stride; b += stride {
		for _, x := range []float32{math.Float32frombits(b), -math.Float32frombits(b)} {
			got := expfV(x)
			exact := math.Exp(float64(x))
			switch {
			case x != x:
				if got == got {
					t.Fatalf("expfV(NaN) = %g", got)
				}
			case x > 88.73:
				if !math.IsInf(float64(got), 1) {
					t.Fatalf("expfV(%g) = %g, want +Inf", x, got)
				}
			case x < -104.5:
				if got != 0 {
					t.Fatalf("expfV(%g) = %g, want 0", x, got)
				}
			case exact >= 0x1p-126 && exact < math.MaxFloat32:
				d := math.Abs(float64(got)-exact) / ulp(exact)
				worst = max(worst, d)
				if d > 2.25 {
					t.Fatalf("expfV(%g) = %g, e^x = %g: %.3g ulp off", x, got, exact, d)
				}
			}
		}
	}
	t.Logf("largest error %.3g ulp", worst)
	for _, c := range []struct{ x, want float32 }{
		{0, 1}, {float32(math.Copysign(0, -1)), 1}, {float32(math.Inf(1)), float32(math.Inf(1))}, {float32(math.Inf(-1)), 0},
		{1, math.E}, {-1, 1 / math.E}, {200, float32(math.Inf(1))}, {-200, 0},
	} {
		got := expfV(c.x)
		if d := math.Abs(float64(got) - float64(c.want)); !(d <= 2*ulp(float64(c.want))) && got != c.want {
			t.Errorf("expfV(%g) = %g, want %g", c.x, got, c.want)
		}
	}
}

// TestExpfVGo: expfVGo, the portable kernels' form of expfV, gives expfV's
// bits, over a sweep of the float32 range (every 257th bit pattern; 4099th
// with -short or under wasm) and every pattern where n changes from 0 to ±1
// (|x| near ln2/2, where b's exactness argument begins to apply) and
// around ±192.
func TestExpfVGo(t *testing.T) {
	stride := uint64(257)
	if testing.Short() || runtime.GOARCH == "wasm" {
		stride = 4099
	}
	check := func(b uint32) {
		x := math.Float32frombits(b)
		if got, want := expfVGo(x), expfV(x); !sameFloat(got, want) {
			t.Fatalf("x = %g (%#08x): expfVGo %g, expfV %g", x, b, got, want)
		}
	}
	for b := uint64(0); b < 1<<32; b += stride {
		check(uint32(b))
	}
	for _, edge := range []float32{0.34657, 192.5 / vexpLog2e, 1 << 22 / vexpLog2e} {
		for _, x := range []float32{edge, -edge} {
			b := math.Float32bits(x)
			for d := uint32(0); d < 1<<16; d++ {
				check(b - 1<<15 + d)
			}
		}
	}
}

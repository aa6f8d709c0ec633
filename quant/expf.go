package quant

import "math"

// The exponentials of softmax and SiLU. ggml's CPU backend computes them
// with ggml_v_expf (ggml-cpu's vec.h: Arm's optimized-routines expf, within
// 1.95 ulp of e^x) a vector register at a time, and with the C library's
// expf for the elements left over. On CPUs with AVX-512 F and DQ, where
// llama.cpp's references were made, the register holds 16 floats and the
// final scaling is VSCALEFPS; ExpShift and SwiGLU compute that form, lane
// for lane, on every platform.

const (
	vexpShift = 0x1.8p23       // 1.5·2^23: z = x·log2e + vexpShift rounds x·log2e to an integer, ties to even
	vexpLog2e = 0x1.715476p+0  // log2(e)
	vexpLn2Hi = 0x1.62e4p-1    // ln 2 to 15 bits
	vexpLn2Lo = 0x1.7f7d1cp-20 // ln 2 − vexpLn2Hi, to 24 bits
	vexpC1    = 0x1.ffffecp-1  // e^b ≈ 1 + C1·b + C2·b² + C3·b³ + C4·b⁴ + C5·b⁵ on |b| ≤ ln2/2
	vexpC2    = 0x1.fffdb6p-2
	vexpC3    = 0x1.555e66p-3
	vexpC4    = 0x1.573e2ep-5
	vexpC5    = 0x1.0e4020p-7
	vexpMaxN  = 192 // for |n| > 192 the result is 0 (n < 0) or +Inf
	vexpWidth = 16  // the floats of one AVX-512 register: ggml's softmax and SwiGLU take these many at a time
)

// expfV is e^x as one lane of ggml_v_expf's AVX-512 form computes it, each
// fused multiply-add (_mm512_fmadd_ps, and _mm512_fnmadd_ps(a, b, c) =
// -(a·b) + c) rounded once:
//
//	n = (x·log2e + 1.5·2^23) − 1.5·2^23      x·log2e rounded to an integer
//	b = x − n·ln2hi − n·ln2lo                two fused steps
//	j = ((C5·b + C4)·b² + (C3·b + C2))·b² + (C1·b + 1)
//	e^x = j·2^n (VSCALEFPS: rounded once), or 0 or +Inf when |n| > 192.
func expfV(x float32) float32 {
	z := fma32(x, vexpLog2e, vexpShift)
	n := z - vexpShift
	b := fma32(-n, vexpLn2Hi, x)
	b = fma32(-n, vexpLn2Lo, b)
	switch {
	case n != n:
		return n // x is a NaN
	case absf(n) > vexpMaxN:
		if n <= 0 {
			return 0
		}
		return float32(math.Inf(1))
	}
	u := b * b
	j := fma32(fma32(fma32(vexpC5, b, vexpC4), u, fma32(vexpC3, b, vexpC2)), u, fma32(vexpC1, b, 1))
	return scalef(j, n)
}

// scalef returns j·2^n rounded once to float32, as VSCALEFPS computes it,
// for an integer n with |n| ≤ vexpMaxN (the product is exact in float64).
func scalef(j, n float32) float32 { return float32(math.Ldexp(float64(j), int(n))) }

// expfC is the C library's expf, e^x rounded to float32: what ggml computes
// the elements after the last whole register with. (glibc's expf is within
// 0.502 ulp, not always the nearest float32; math.Exp is within 1 ulp of
// float64, so this is the nearest float32 but where e^x is within about
// 2^-29 ulp of halfway between two.)
func expfC(x float32) float32 { return float32(math.Exp(float64(x))) }

// expfVGo is expfV with its first three fused multiply-adds done exactly in
// float64 (the portable and wasm kernels' form; TestExpSweep and
// TestExpfVGo check it against expfV):
//
//   - p = x·log2e is exact in float64 and (p + 1.5·2^52) − 1.5·2^52 rounds
//     it to an integer, ties to even, as expfV's z does while |p| < 2^22
//     (beyond, both n are beyond ±192, with p's sign);
//   - for |n| ≤ 192, x − n·ln2hi is exact in float32 (n ≠ 0 means
//     |x| ≥ 0.34, so x and n·ln2hi are multiples of 2^-25, and the
//     difference is below 1/2), and subtracting n·ln2lo, a multiple of
//     2^-43, leaves a multiple of 2^-43 below 1/2: exact in float64, so
//     b rounded once from float64 is expfV's b.
//
// The polynomial's five fused multiply-adds are float64 sums rounded to
// float32 (fma64), all between 2^-5 and 2 in magnitude: where one of the
// sums falls halfway between two float32s (about once in 2^29), the
// lane is recomputed by expfV.
func expfVGo(x float32) float32 {
	p := float64(float64(x) * vexpLog2e)
	n := (p + 0x1.8p52) - 0x1.8p52
	switch {
	case n != n:
		return x // a NaN
	case math.Abs(n) > vexpMaxN:
		if n <= 0 {
			return 0
		}
		return float32(math.Inf(1))
	}
	b := float32((float64(x) - float64(n*vexpLn2Hi)) - float64(n*vexpLn2Lo))
	u := b * b
	s1, h1 := fma64(vexpC5, b, vexpC4)
	s2, h2 := fma64(vexpC3, b, vexpC2)
	s3, h3 := fma64(vexpC1, b, 1)
	s4, h4 := fma64(float32(s1), u, float32(s2))
	s5, h5 := fma64(float32(s4), u, float32(s3))
	if h1 || h2 || h3 || h4 || h5 {
		return expfV(x)
	}
	return float32(float64(float32(s5)) * math.Float64frombits(uint64(int64(n)+1023)<<52))
}

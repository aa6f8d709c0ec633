package quant

import "math"

// ggml's x86 float order. Where llama.cpp's x86 kernel of a format (its
// AVX2 path, which its AVX-512 builds also run) adds the block terms of a
// dot in float32 lanes rather than one running sum, that format's reference
// here is written in the same order, so that the dots agree with
// llama.cpp's bit for bit: eight int32 lane sums per block (lane k holding
// the products of bytes 4k..4k+3 of each 32-byte vector of quants, as
// VPMADDUBSW then VPMADDWD leave them), each lane converted to float32 and
// added to its own float32 accumulator by a fused multiply-add
// (_mm256_fmadd_ps: fma32), and the eight accumulators added at the end as
// hsum_float_8 does (hsumX86): Q4_1, Q5_0, Q5_1 and IQ4_XS. IQ4_NL, whose
// matrices llama.cpp repacks on x86, adds one fused multiply-add per block
// to a single sum instead (dotIQ4_NLRef).

// fma32 returns a·b + c rounded once to float32, as a fused multiply-add
// (VFMADD) does. The product is exact in float64 (24+24 bits); the float64
// sum's rounding error is recovered exactly (TwoSum) and the sum rounded to
// odd with it, so that rounding the result to float32 rounds the exact
// value a·b + c once (rounding to odd at 53 bits, then to nearest at 24,
// is the correct rounding to nearest). Infinite and NaN operands give
// what VFMADD gives, up to NaN payloads.
func fma32(a, b, c float32) float32 {
	p := float64(float64(a) * float64(b))
	z := float64(c)
	s := p + z
	bb := s - p
	e := (p - (s - bb)) + (z - bb)
	if u := math.Float64bits(s); u&1 == 0 && (e > 0 || e < 0) {
		// s is even and inexact: the neighbour on e's side is odd
		if (e > 0) == (s > 0) {
			u++
		} else {
			u--
		}
		s = math.Float64frombits(u)
	}
	return float32(s)
}

// hsumX86 returns the sum of the eight lanes of acc in the order of ggml's
// hsum_float_8: the two 128-bit halves added, then lanes 0+2 and 1+3 of
// that, then those two.
func hsumX86(acc *[8]float32) float32 {
	r0, r1 := acc[0]+acc[4], acc[1]+acc[5]
	r2, r3 := acc[2]+acc[6], acc[3]+acc[7]
	return (r0 + r2) + (r1 + r3)
}

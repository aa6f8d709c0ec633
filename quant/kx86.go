package quant

import "math"

// The float order of ggml's x86 K-quant dots, which Q2_K's, Q3_K's and
// Q5_K's references follow (q2_k.go, q3_k.go, q5_k.go).
//
// llama.cpp's x86 builds (AVX2 and up) run Q3_K, Q5_K and, without
// AVX-512, Q2_K through ggml_vec_dot_*_q8_K of ggml-cpu/arch/x86/quants.c
// (its repacked gemv kernels take Q4_K, Q4_0, IQ4_NL and, with AVX-512,
// Q2_K instead). Those kernels do not sum a block's terms into one running
// sum as ggml's generic C does: each block's integer sums stay in the
// eight int32 lanes of a 256-bit vector (VPMADDUBSW then VPMADDWD, so
// lane k holds the weights 4k..4k+3 of every 32 consecutive ones, times
// their sub-block scales), which are widened to float32 and accumulated
// into eight float32 lanes with one FMA per block, acc[k] = fma(d,
// float32(sumi[k]), acc[k]); the lanes are added at the end as
// hsum_float_8 does (hsumX86). Q5_K keeps its min term in a scalar
// summs = fma(dmin, float32(Σ min·bsum), summs) (a contracted C
// expression: vfmadd231ss in node-llama-cpp 3.21.1's haswell and zen4
// builds) added last; Q2_K adds its min terms to the same lanes, by one
// more FMA per block before the scales'. Summing in that order makes our
// dots bit-identical to llama.cpp's, not merely close: on 2000 random rows
// of 1 to 24 blocks per type, dotQ2_KRef, dotQ3_KRef and dotQ5_KRef give
// the bits of ggml_vec_dot_*_q8_K of node-llama-cpp 3.21.1's haswell and
// zen4 libraries on every row (671 to 967 rows differed with ggml's
// generic order). Q4_K's and Q6_K's references still sum in the generic
// order (llama.cpp's x86 builds run Q6_K through this FMA-lane order too,
// and Q4_K through its repacked gemv).

// kLanes is the number of float32 lanes of an x86 K-quant dot.
const kLanes = 8

// fmaf returns a·b + c rounded once to float32, as an FMA instruction
// (C's fmaf) computes it. The product is exact in float64 (48 significant
// bits); the sum s is rounded to odd in float64, and rounding that to
// float32 is then the single rounding of the exact value (53 ≥ 24+2
// bits). Rounding to odd: where the sum is inexact (its error e, by
// Knuth's TwoSum, is not zero) the result is the one of the two float64
// values around the exact sum whose last bit is set, (s - 1 ulp) | 1 if e
// points towards zero, s | 1 if away. A non-finite sum is left as float64
// addition gives it.
func fmaf(a, b, c float32) float32 {
	p := float64(float64(a) * float64(b)) // the conversion keeps the compiler from fusing it into s
	s := p + float64(c)
	z := s - p
	if e := (p - (s - z)) + (float64(c) - z); e != 0 && s-s == 0 {
		u := math.Float64bits(s)
		towardZero := (u ^ math.Float64bits(e)) >> 63 // the signs differ
		s = math.Float64frombits((u - towardZero) | 1)
	}
	return float32(s)
}

// hsumX86 is ggml's hsum_float_8: the high four lanes added to the low
// four, then lanes 0 and 2 and lanes 1 and 3, then the two.
func hsumX86(a *[kLanes]float32) float32 {
	t0, t1, t2, t3 := a[0]+a[4], a[1]+a[5], a[2]+a[6], a[3]+a[7]
	return (t0 + t2) + (t1 + t3)
}

// accumulateX86 adds one block's integer lane sums to acc as ggml's x86
// kernels do: acc[k] = fma(d, float32(sumi[k]), acc[k]).
func accumulateX86(acc *[kLanes]float32, d float32, sumi *[kLanes]int32) {
	for k := range acc {
		acc[k] = fmaf(d, float32(sumi[k]), acc[k])
	}
}

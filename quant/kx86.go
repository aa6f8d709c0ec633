package quant

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
// hsum_float_8 does (hsumX86 in x86order.go; fma32 there is the exact FMA). Q5_K keeps its min term in a scalar
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

// accumulateX86 adds one block's integer lane sums to acc as ggml's x86
// kernels do: acc[k] = fma(d, float32(sumi[k]), acc[k]).
func accumulateX86(acc *[kLanes]float32, d float32, sumi *[kLanes]int32) {
	for k := range acc {
		acc[k] = fma32(d, float32(sumi[k]), acc[k])
	}
}

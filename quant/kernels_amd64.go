//go:build goexperiment.simd

package quant

import "simd/archsimd"

// The amd64 kernels (GOEXPERIMENT=simd: simd/archsimd and the hand-written
// *_amd64.s files): the AVX2 table (with FMA, which every AVX2 CPU has:
// the kernels in ggml's x86 order add by VFMADD, see x86order.go and kx86.go), and over it on CPUs with AVX512-VNNI
// (archsimd reports it only with AVX2 and AVX-512 F, CD, BW, DQ and VL, whose
// 256-bit EVEX forms the VNNI rows use) the VNNI DotRowsN kernels, and on
// CPUs with AVX512-VBMI too the 512-bit VNNI DotRows kernels.
func platformTables() []kernelTable {
	return []kernelTable{{
		name: "AVX2",
		cpu:  func() bool { return archsimd.X86.AVX2() && archsimd.X86.FMA() },
		formats: []formatKernels{
			{F32, kernels{dot: dotF32AVX2, dotN: dotNF32AVX2, dotRowsN: dotRowsNF32AVX2}},
			{F16, kernels{dot: dotF16AVX2, dotN: dotNF16AVX2, dotRows: dotRowsF16AVX2, dotRowsN: dotRowsNF16AVX2}},
			{BF16, kernels{dot: dotBF16AVX2, dotN: dotNBF16AVX2, dotRowsN: dotRowsNBF16AVX2}},
			{IQ3_S, iqKernels(IQ3_S)},
			{IQ3_XXS, iqKernels(IQ3_XXS)},
			{IQ2_XXS, iqKernels(IQ2_XXS)},
			{IQ2_XS, iqKernels(IQ2_XS)},
			{IQ2_S, iqKernels(IQ2_S)},
			{IQ1_S, iqKernels(IQ1_S)},
			{IQ1_M, iqKernels(IQ1_M)},
			{TQ2_0, kernels{dot: dotTQ2_0AVX2, dotN: dotNTQ2_0AVX2, dotRowsN: dotRowsNTQ2_0AVX2}},
			{TQ1_0, kernels{dot: dotTQ1_0AVX2, dotN: dotNTQ1_0AVX2, dotRowsN: dotRowsNTQ1_0AVX2}},
			{Q4_0, kernels{dot: dotQ4_0AVX2, dotN: dotNQ4_0AVX2, dotRows: dotRowsQ4_0AVX2, dotRowsN: dotRowsNQ4_0AVX2}},
			{Q8_0, kernels{dot: dotQ8_0AVX2, dotN: dotNQ8_0AVX2, dotRows: dotRowsQ8_0AVX2, dotRowsN: dotRowsNQ8_0AVX2}},
			{Q4_K, kernels{dot: dotQ4_KAVX2, dotN: dotNQ4_KAVX2, dotRows: dotRowsQ4_KAVX2, dotRowsN: dotRowsNQ4_KAVX2}},
			{Q6_K, kernels{dot: dotQ6_KAVX2, dotN: dotNQ6_KAVX2, dotRows: dotRowsQ6_KAVX2, dotRowsN: dotRowsNQ6_KAVX2}},
			{Q4_1, kernels{dot: dotQ4_1AVX2, dotN: dotNQ4_1AVX2, dotRows: dotRowsQ4_1AVX2, dotRowsN: dotRowsNQ4_1AVX2}},
			{Q5_0, kernels{dot: dotQ5_0AVX2, dotN: dotNQ5_0AVX2, dotRows: dotRowsQ5_0AVX2, dotRowsN: dotRowsNQ5_0AVX2}},
			{Q5_1, kernels{dot: dotQ5_1AVX2, dotN: dotNQ5_1AVX2, dotRows: dotRowsQ5_1AVX2, dotRowsN: dotRowsNQ5_1AVX2}},
			{IQ4_NL, kernels{dot: dotIQ4_NLAVX2, dotN: dotNIQ4_NLAVX2, dotRows: dotRowsIQ4_NLAVX2, dotRowsN: dotRowsNIQ4_NLAVX2}},
			{IQ4_XS, kernels{dot: dotIQ4_XSAVX2, dotN: dotNIQ4_XSAVX2, dotRows: dotRowsIQ4_XSAVX2, dotRowsN: dotRowsNIQ4_XSAVX2}},
			{Q2_K, kernels{dot: dotQ2_KAVX2, dotN: dotNQ2_KAVX2, dotRows: dotRowsQ2_KAVX2, dotRowsN: dotRowsNQ2_KAVX2}},
			{Q3_K, kernels{dot: dotQ3_KAVX2, dotN: dotNQ3_KAVX2, dotRows: dotRowsQ3_KAVX2, dotRowsN: dotRowsNQ3_KAVX2}},
			{Q5_K, kernels{dot: dotQ5_KAVX2, dotN: dotNQ5_KAVX2, dotRows: dotRowsQ5_KAVX2, dotRowsN: dotRowsNQ5_KAVX2}},
		},
		simdVec: true,
	}, {
		name: "AVX512-VNNI",
		cpu:  archsimd.X86.AVX512VNNI,
		formats: []formatKernels{
			{Q4_0, kernels{dotRowsN: dotRowsNQ4_0VNNI}},
			{Q8_0, kernels{dotRowsN: dotRowsNQ8_0VNNI}},
			{Q4_K, kernels{dotRowsN: dotRowsNQ4_KVNNI}},
			{Q6_K, kernels{dotRowsN: dotRowsNQ6_KVNNI}},
		},
	}, {
		// the 512-bit kernels, which also permute bytes (VPERMB, VPERMT2B)
		name: "AVX512-VBMI-VNNI",
		cpu:  func() bool { return archsimd.X86.AVX512VNNI() && archsimd.X86.AVX512VBMI() },
		formats: []formatKernels{
			{Q4_0, kernels{dotRows: dotRowsQ4_0VNNI}},
			{Q8_0, kernels{dotRows: dotRowsQ8_0VNNI}},
			{IQ4_XS, kernels{dotRowsN: dotRowsNIQ4_XSVNNI}},
		},
	}}
}

// simdVec is the amd64 table of vector kernels (vec.go, actquant.go), in use
// where the AVX2 table is.
type simdVec struct{}

func (simdVec) dotF16(a []float32, b []uint16) float32     { return dotF16VecAVX2(a, b) }
func (simdVec) axpyF16(y []float32, a float32, x []uint16) { axpyF16AVX2(y, a, x) }
func (simdVec) scoresF16(sc, q []float32, keys []uint16, hd, stride, n int) {
	scoresF16AVX2(sc, q, keys, hd, stride, n)
}
func (simdVec) accumulateF16(out, w []float32, values []uint16, hd, stride, n int) {
	accumulateF16AVX2(out, w, values, hd, stride, n)
}
func (simdVec) expShift(x []float32, m float32, sum float64) float64 { return expShiftAVX2(x, m, sum) }
func (simdVec) swiglu(gate, up []float32)                            { swigluAVX2(gate, up) }
func (simdVec) roundFP16(x []float32, scale float32)                 { roundFP16AVX2(x, scale) }
func (simdVec) quantizeAct(dst []byte, src []float32, size int)      { quantizeActAVX2(dst, src, size) }

//go:build goexperiment.simd

package quant

import "simd/archsimd"

// The amd64 kernels (GOEXPERIMENT=simd: simd/archsimd and the hand-written
// *_amd64.s files): the AVX2 table, the AVX2+FMA table of the K-quants
// that sum in ggml's x86 order (kx86.go), and over them on CPUs with AVX512-VNNI
// (archsimd reports it only with AVX2 and AVX-512 F, CD, BW, DQ and VL, whose
// 256-bit EVEX forms the VNNI rows use) the VNNI DotRowsN kernels.
func platformTables() []kernelTable {
	return []kernelTable{{
		name: "AVX2",
		cpu:  archsimd.X86.AVX2,
		formats: []formatKernels{
			{Q4_0, kernels{dot: dotQ4_0AVX2, dotN: dotNQ4_0AVX2, dotRows: dotRowsQ4_0AVX2, dotRowsN: dotRowsNQ4_0AVX2}},
			{Q8_0, kernels{dot: dotQ8_0AVX2, dotN: dotNQ8_0AVX2, dotRows: dotRowsQ8_0AVX2, dotRowsN: dotRowsNQ8_0AVX2}},
			{Q4_K, kernels{dot: dotQ4_KAVX2, dotN: dotNQ4_KAVX2, dotRows: dotRowsQ4_KAVX2, dotRowsN: dotRowsNQ4_KAVX2}},
			{Q6_K, kernels{dot: dotQ6_KAVX2, dotN: dotNQ6_KAVX2, dotRows: dotRowsQ6_KAVX2, dotRowsN: dotRowsNQ6_KAVX2}},
		},
		simdVec: true,
	}, {
		// the x86-order K-quant kernels accumulate with VFMADD, as ggml's do
		name: "AVX2+FMA",
		cpu:  func() bool { return archsimd.X86.AVX2() && archsimd.X86.FMA() },
		formats: []formatKernels{
			{Q2_K, kernels{dot: dotQ2_KAVX2, dotN: dotNQ2_KAVX2, dotRows: dotRowsQ2_KAVX2, dotRowsN: dotRowsNQ2_KAVX2}},
			{Q3_K, kernels{dot: dotQ3_KAVX2, dotN: dotNQ3_KAVX2, dotRows: dotRowsQ3_KAVX2, dotRowsN: dotRowsNQ3_KAVX2}},
			{Q5_K, kernels{dot: dotQ5_KAVX2, dotN: dotNQ5_KAVX2, dotRows: dotRowsQ5_KAVX2, dotRowsN: dotRowsNQ5_KAVX2}},
		},
	}, {
		name: "AVX512-VNNI",
		cpu:  archsimd.X86.AVX512VNNI,
		formats: []formatKernels{
			{Q4_0, kernels{dotRowsN: dotRowsNQ4_0VNNI}},
			{Q8_0, kernels{dotRowsN: dotRowsNQ8_0VNNI}},
			{Q4_K, kernels{dotRowsN: dotRowsNQ4_KVNNI}},
			{Q6_K, kernels{dotRowsN: dotRowsNQ6_KVNNI}},
		},
	}}
}

// simdVec is the amd64 table of vector kernels (vec.go, actquant.go), in use
// where the AVX2 table is.
type simdVec struct{}

func (simdVec) dotF16(a []float32, b []uint16) float32          { return dotF16VecAVX2(a, b) }
func (simdVec) axpyF16(y []float32, a float32, x []uint16)      { axpyF16AVX2(y, a, x) }
func (simdVec) expShift(x []float32, m float32)                 { expShiftAVX2(x, m) }
func (simdVec) swiglu(gate, up []float32)                       { swigluAVX2(gate, up) }
func (simdVec) roundFP16(x []float32, scale float32)            { roundFP16AVX2(x, scale) }
func (simdVec) quantizeAct(dst []byte, src []float32, size int) { quantizeActAVX2(dst, src, size) }

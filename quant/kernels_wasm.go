//go:build goexperiment.simd

package quant

// The wasm SIMD128 kernels (GOEXPERIMENT=simd, simd/archsimd and the
// hand-written *_wasm.s files), for every wasm runtime: a module with
// SIMD128 instructions does not load where they are missing. The
// relaxedsimd build lays the relaxed-SIMD table over them
// (relaxed_wasm.go); no other has it.
func platformTables() []kernelTable {
	return append([]kernelTable{{
		name: "SIMD128",
		formats: []formatKernels{
			{F32, kernels{dot: dotF32SIMD128, dotN: dotNF32SIMD128, dotRowsN: dotRowsNF32SIMD128}},
			{F16, kernels{dot: dotF16SIMD128, dotN: dotNF16SIMD128, dotRows: dotRowsF16SIMD128, dotRowsN: dotRowsNF16SIMD128}},
			{BF16, kernels{dot: dotBF16SIMD128, dotN: dotNBF16SIMD128, dotRowsN: dotRowsNBF16SIMD128}},
			{IQ3_S, iqGridKernels(IQ3_S)},
			{IQ3_XXS, iqGridKernels(IQ3_XXS)},
			{IQ2_XXS, iqGridKernels(IQ2_XXS)},
			{IQ2_XS, iqGridKernels(IQ2_XS)},
			{IQ2_S, iqGridKernels(IQ2_S)},
			{IQ1_S, iq1SKernels()},
			{IQ1_M, iq1MKernels()},
			{TQ2_0, kernels{dot: dotTQ2_0SIMD128, dotN: dotNTQ2_0SIMD128, dotRows: dotRowsTQ2_0SIMD128, dotRowsN: dotRowsNTQ2_0SIMD128}},
			{TQ1_0, kernels{dot: dotTQ1_0SIMD128, dotN: dotNTQ1_0SIMD128, dotRows: dotRowsTQ1_0SIMD128, dotRowsN: dotRowsNTQ1_0SIMD128}},
			{Q4_0, kernels{dot: dotQ4_0SIMD128, dotN: dotNQ4_0SIMD128, dotRows: dotRowsQ4_0SIMD128, dotRowsN: dotRowsNQ4_0SIMD128}},
			{Q8_0, kernels{fromFloat: quantizeQ8_0SIMD128, dot: dotQ8_0SIMD128, dotN: dotNQ8_0SIMD128, dotRows: dotRowsQ8_0SIMD128, dotRowsN: dotRowsNQ8_0SIMD128}},
			{Q4_K, kernels{dot: dotQ4_KSIMD128, dotN: dotNQ4_KSIMD128, dotRows: dotRowsQ4_KSIMD128, dotRowsN: dotRowsNQ4_KSIMD128}},
			{Q2_K, kernels{dot: dotQ2_KSIMD128, dotN: dotNQ2_KSIMD128, dotRows: dotRowsQ2_KSIMD128, dotRowsN: dotRowsNQ2_KSIMD128}},
			{Q3_K, kernels{dot: dotQ3_KSIMD128, dotN: dotNQ3_KSIMD128, dotRows: dotRowsQ3_KSIMD128, dotRowsN: dotRowsNQ3_KSIMD128}},
			{Q5_K, kernels{dot: dotQ5_KSIMD128, dotN: dotNQ5_KSIMD128, dotRows: dotRowsQ5_KSIMD128, dotRowsN: dotRowsNQ5_KSIMD128}},
			{Q6_K, kernels{dot: dotQ6_KSIMD128, dotN: dotNQ6_KSIMD128, dotRows: dotRowsQ6_KSIMD128, dotRowsN: dotRowsNQ6_KSIMD128}},
			{Q8_K, kernels{fromFloat: quantizeQ8_KSIMD128}},
			{Q4_1, kernels{dot: dotQ4_1SIMD128, dotRows: dotRowsQ4_1SIMD128, dotRowsN: dotRowsNQ4_1SIMD128}},
			{Q5_0, kernels{dot: dotQ5_0SIMD128, dotRows: dotRowsQ5_0SIMD128, dotRowsN: dotRowsNQ5_0SIMD128}},
			{Q5_1, kernels{dot: dotQ5_1SIMD128, dotRows: dotRowsQ5_1SIMD128, dotRowsN: dotRowsNQ5_1SIMD128}},
			{IQ4_NL, kernels{dot: dotIQ4_NLSIMD128, dotRows: dotRowsIQ4_NLSIMD128, dotRowsN: dotRowsNIQ4_NLSIMD128}},
			{E8_IQ3, e8Kernels},
			{IQ4_XS, kernels{dot: dotIQ4_XSSIMD128, dotN: dotNIQ4_XSSIMD128, dotRows: dotRowsIQ4_XSSIMD128, dotRowsN: dotRowsNIQ4_XSSIMD128}},
		},
		simdVec: true,
	}}, relaxedTables()...)
}

// simdVec is the wasm table of vector kernels (vec.go, actquant.go), in use
// with the SIMD128 table.
type simdVec struct{}

func (simdVec) dotF16(a []float32, b []uint16) float32     { return dotF16VecSIMD128(a, b) }
func (simdVec) axpyF16(y []float32, a float32, x []uint16) { axpyF16SIMD128(y, a, x) }
func (simdVec) scoresF16(sc, q []float32, keys []uint16, hd, stride, n int) {
	scoresF16SIMD128(sc, q, keys, hd, stride, n)
}
func (simdVec) accumulateF16(out, w []float32, values []uint16, hd, stride, n int) {
	accumulateF16SIMD128(out, w, values, hd, stride, n)
}
func (simdVec) expShift(x []float32, m float32, sum float64) float64 {
	return expShiftWasm(x, m, sum)
}
func (simdVec) swiglu(gate, up []float32)                       { swigluWasm(gate, up) }
func (simdVec) roundFP16(x []float32, scale float32)            { roundFP16SIMD128(x, scale) }
func (simdVec) quantizeAct(dst []byte, src []float32, size int) { quantizeActSIMD128(dst, src, size) }

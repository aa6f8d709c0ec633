//go:build goexperiment.simd && !relaxedsimd

package quant

// relaxedTables is empty outside the relaxedsimd build (relaxed_wasm.go):
// a module with any relaxed-SIMD op does not load where they are missing.
func relaxedTables() []kernelTable { return nil }

// swigluWasm and expShiftWasm are the SIMD128 ones outside the relaxedsimd
// build (exp_relaxed_wasm.go).
func swigluWasm(gate, up []float32)                            { swigluSIMD128(gate, up) }
func expShiftWasm(x []float32, m float32, sum float64) float64 { return expShiftSIMD128(x, m, sum) }

// iq4XSRowsNRelaxed is in the relaxedsimd build only (iq4_relaxed_wasm.s);
// dotRowsNIQ4_XS, which both builds share, calls it only there (fused).
func iq4XSRowsNRelaxed(*byte, int, *byte, int, *float32, *[MaxDotN][8]float32, *[MaxDotN][8]int32) {
	panic("quant: iq4XSRowsNRelaxed outside the relaxedsimd build")
}

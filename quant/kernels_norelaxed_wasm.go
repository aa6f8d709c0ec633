//go:build goexperiment.simd && !relaxedsimd

package quant

// relaxedTables is empty outside the relaxedsimd build (relaxed_wasm.go):
// a module with any relaxed-SIMD op does not load where they are missing.
func relaxedTables() []kernelTable { return nil }

// iq4XSRowsNRelaxed is in the relaxedsimd build only (iq4_relaxed_wasm.s);
// dotRowsNIQ4_XS, which both builds share, calls it only there (fused).
func iq4XSRowsNRelaxed(*byte, int, *byte, int, *float32, *[MaxDotN][8]float32, *[MaxDotN][8]int32) {
	panic("quant: iq4XSRowsNRelaxed outside the relaxedsimd build")
}

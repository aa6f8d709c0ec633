//go:build goexperiment.simd && !relaxedsimd

package quant

// relaxedTables is empty outside the relaxedsimd build (relaxed_wasm.go):
// a module with any relaxed-SIMD op does not load where they are missing.
func relaxedTables() []kernelTable { return nil }

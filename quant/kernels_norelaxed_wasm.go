//go:build goexperiment.simd && !relaxedsimd

package quant

// relaxedTables is empty outside the relaxedsimd build (relaxed_wasm.go):
// a module with any relaxed-SIMD op does not load where they are missing.
func relaxedTables() []kernelTable { return nil }

// swigluWasm and expShiftWasm are the SIMD128 ones outside the relaxedsimd
// build (exp_relaxed_wasm.go).
func swigluWasm(gate, up []float32)                            { swigluSIMD128(gate, up) }
func expShiftWasm(x []float32, m float32, sum float64) float64 { return expShiftSIMD128(x, m, sum) }

//go:build goexperiment.simd && !relaxedsimd

package quant

// relaxedTables is empty outside the relaxedsimd build (relaxed_wasm.go):
// a module with any relaxed-SIMD op does not load where they are missing.
func relaxedTables() []kernelTable { return nil }

// swigluWasm and expShiftWasm are the SIMD128 ones outside the relaxedsimd
// build (exp_relaxed_wasm.go).
func swigluWasm(gate, up []float32)                            { swigluSIMD128(gate, up) }
func expShiftWasm(x []float32, m float32, sum float64) float64 { return expShiftSIMD128(x, m, sum) }

// q5KRowsNCall is q5KRowsN: there is no relaxed kernel in this build.
func q5KRowsNCall(_ bool, x *byte, nb, rows int, yp *byte, k int, yd, tab *float32, st *byte, out *float32) {
	q5KRowsN(x, nb, rows, yp, k, yd, tab, st, out)
}

// kRowsNCall is q3KRowsN or q2KRowsN (t): there is no relaxed kernel in
// this build.
func kRowsNCall(t Type, _ bool, x *byte, nb, rows int, yp *byte, k int, yd, tab *float32, st *byte, out *float32) {
	if t == Q3_K {
		q3KRowsN(x, nb, rows, yp, k, yd, tab, st, out)
		return
	}
	q2KRowsN(x, nb, rows, yp, k, yd, tab, st, out)
}

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

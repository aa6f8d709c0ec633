//go:build goexperiment.simd && relaxedsimd

package quant

// The relaxed-SIMD Dot and DotRows kernels of the K-quants summed in
// ggml's x86 order (relaxedkx_wasm.s): the row kernels take the Q8_K
// activation as it is, so Dot is DotRows of one row, and DotRows runs all
// the rows in one call, whatever their length. Their DotRowsN kernels are
// the SIMD128 ones (q5_k_wasm.go, q3_k_wasm.go) with the float part by
// relaxed_madd (q5KRowsNRelaxed, q3KRowsNRelaxed, q2KRowsNRelaxed).

//go:noescape
func q5KDotRowsRelaxed(x *byte, nb, rows int, yp, yd *byte, tab, out *float32)

//go:noescape
func q3KDotRowsRelaxed(x *byte, nb, rows int, yp, yd *byte, tab, out *float32)

//go:noescape
func q2KDotRowsRelaxed(x *byte, nb, rows int, yp, yd *byte, tab, out *float32)

func dotQ5_KRelaxed(n int, w, act []byte) float32 { return kxDotRelaxed(Q5_K, n, w, act) }
func dotQ3_KRelaxed(n int, w, act []byte) float32 { return kxDotRelaxed(Q3_K, n, w, act) }
func dotQ2_KRelaxed(n int, w, act []byte) float32 { return kxDotRelaxed(Q2_K, n, w, act) }

func dotRowsQ5_KRelaxed(n int, w, act []byte, out []float32) { kxDotRowsRelaxed(Q5_K, n, w, act, out) }
func dotRowsQ3_KRelaxed(n int, w, act []byte, out []float32) { kxDotRowsRelaxed(Q3_K, n, w, act, out) }
func dotRowsQ2_KRelaxed(n int, w, act []byte, out []float32) { kxDotRowsRelaxed(Q2_K, n, w, act, out) }

// kxDotRelaxed is the Dot kernel of t: its DotRows of one row.
func kxDotRelaxed(t Type, n int, w, act []byte) float32 {
	var out [1]float32
	kxDotRowsRelaxed(t, n, w[:n/qkK*x86Size(t)], act, out[:])
	return out[0]
}

// kxDotRowsRelaxed is the DotRows kernel of t (Q5_K, Q3_K or Q2_K), its row
// kernel called by name (through a func value out would escape).
func kxDotRowsRelaxed(t Type, n int, w, act []byte, out []float32) {
	nb := n / qkK
	if nb == 0 || len(out) == 0 {
		clear(out)
		return
	}
	w, act = w[:len(out)*nb*x86Size(t)], act[:nb*q8_KBytes]
	// the activation's quants at act, its blocks' scales at act too
	switch t {
	case Q5_K:
		q5KDotRowsRelaxed(&w[0], nb, len(out), &act[0], &act[0], &fp16ToFP32Table[0], &out[0])
	case Q3_K:
		q3KDotRowsRelaxed(&w[0], nb, len(out), &act[0], &act[0], &fp16ToFP32Table[0], &out[0])
	case Q2_K:
		q2KDotRowsRelaxed(&w[0], nb, len(out), &act[0], &act[0], &fp16ToFP32Table[0], &out[0])
	}
}

//go:noescape
func q5KRowsNRelaxed(x *byte, nb, rows int, yp *byte, k int, yd, tab *float32, st *byte, out *float32)

// dotRowsNQ5_KRelaxed is the Q5_K DotRowsN kernel.
func dotRowsNQ5_KRelaxed(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	kRowsN(Q5_K, true, n, w, acts, outs, at)
}

// q5KRowsNCall is q5KRowsNRelaxed (relaxed) or q5KRowsN, called by name.
func q5KRowsNCall(relaxed bool, x *byte, nb, rows int, yp *byte, k int, yd, tab *float32, st *byte, out *float32) {
	if relaxed {
		q5KRowsNRelaxed(x, nb, rows, yp, k, yd, tab, st, out)
		return
	}
	q5KRowsN(x, nb, rows, yp, k, yd, tab, st, out)
}

//go:noescape
func q3KRowsNRelaxed(x *byte, nb, rows int, yp *byte, k int, yd, tab *float32, st *byte, out *float32)

//go:noescape
func q2KRowsNRelaxed(x *byte, nb, rows int, yp *byte, k int, yd, tab *float32, st *byte, out *float32)

// dotRowsNQ3_KRelaxed and dotRowsNQ2_KRelaxed are the Q3_K and Q2_K
// DotRowsN kernels (kRowsN).
func dotRowsNQ3_KRelaxed(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	kRowsN(Q3_K, true, n, w, acts, outs, at)
}

func dotRowsNQ2_KRelaxed(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	kRowsN(Q2_K, true, n, w, acts, outs, at)
}

// kRowsNCall is the batch kernel of t (Q3_K or Q2_K), the relaxed one if
// relaxed, called by name.
func kRowsNCall(t Type, relaxed bool, x *byte, nb, rows int, yp *byte, k int, yd, tab *float32, st *byte, out *float32) {
	switch {
	case t == Q3_K && relaxed:
		q3KRowsNRelaxed(x, nb, rows, yp, k, yd, tab, st, out)
	case t == Q3_K:
		q3KRowsN(x, nb, rows, yp, k, yd, tab, st, out)
	case relaxed:
		q2KRowsNRelaxed(x, nb, rows, yp, k, yd, tab, st, out)
	default:
		q2KRowsN(x, nb, rows, yp, k, yd, tab, st, out)
	}
}

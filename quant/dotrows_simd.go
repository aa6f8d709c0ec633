//go:build goexperiment.simd && wasm

package quant

// The wasm SIMD128 DotRows kernels (matrix-vector products over
// consecutive rows). The activation is prepared once per call, on the
// stack: its int8 values split into even and odd int16 lanes, the form
// i32x4.dot_i16x8_s takes (splitQ8_K, splitQ8_0 in
// dotrows_simd_wasm.s). The row kernels there then compute each block's
// exact integer sums for several rows per call, and the float part is the
// one the type's Dot uses (scaleQ4_KSums, scaleQ6_KSums, scaleQ8_0Sums),
// so every row's result is bit-identical to its Dot.

// dotRowsMaxCols is the longest row whose prepared activation (2 bytes
// per element) DotRows keeps on the stack; longer rows go to Dot per row.
const dotRowsMaxCols = 16384

// dotRowsSums is the number of blocks (of all rows) whose integer sums a
// row kernel computes per call.
const dotRowsSums = 64

//go:noescape
func splitQ8_K(dst, src *byte, nb int)

//go:noescape
func splitQ8_0(dst *byte, ysum *int32, src *byte, nb int)

//go:noescape
func q4KRowSums(x, yp, y *byte, nb, rows int, out *int32)

//go:noescape
func q6KRowSums(x, yp *byte, nb, rows int, out *int32)

//go:noescape
func q8_0RowSums(x, yp *byte, nb, rows int, out *int32)

//go:noescape
func q4_0RowSums(x, yp *byte, ysum *int32, nb, rows int, out *int32)

// dotRowsQ4_Kis the Q4_K DotRows kernel.
func dotRowsQ4_K(n int, w, act []byte, out []float32) {
	nb := n / qkK
	rowBytes := nb * q4_KBytes
	if n > dotRowsMaxCols || nb == 0 {
		dotRows(dotQ4_K, n, rowBytes, w, act, out)
		return
	}
	w, act = w[:len(out)*rowBytes], act[:nb*q8_KBytes]
	var yp [2 * dotRowsMaxCols]byte
	splitQ8_K(&yp[0], &act[0], nb)
	var sums [2 * dotRowsSums]int32
	per := dotRowsSums / nb
	for r := 0; r < len(out); r += per {
		k := min(per, len(out)-r)
		q4KRowSums(&w[r*rowBytes], &yp[0], &act[0], nb, k, &sums[0])
		for i := range k {
			s := sums[2*nb*i : 2*nb*(i+1)]
			out[r+i] = scaleQ4_KSums(0, s[:nb], s[nb:], w[(r+i)*rowBytes:], act)
		}
	}
}

// dotRowsQ6_Kis the Q6_K DotRows kernel.
func dotRowsQ6_K(n int, w, act []byte, out []float32) {
	nb := n / qkK
	rowBytes := nb * q6_KBytes
	if n > dotRowsMaxCols || nb == 0 {
		dotRows(dotQ6_K, n, rowBytes, w, act, out)
		return
	}
	w, act = w[:len(out)*rowBytes], act[:nb*q8_KBytes]
	var yp [2 * dotRowsMaxCols]byte
	splitQ8_K(&yp[0], &act[0], nb)
	var sums [dotRowsSums]int32
	per := dotRowsSums / nb
	for r := 0; r < len(out); r += per {
		k := min(per, len(out)-r)
		q6KRowSums(&w[r*rowBytes], &yp[0], nb, k, &sums[0])
		for i := range k {
			out[r+i] = scaleQ6_KSums(0, sums[nb*i:nb*(i+1)], w[(r+i)*rowBytes:], act)
		}
	}
}

// dotRowsQ8_0is the Q8_0 DotRows kernel.
func dotRowsQ8_0(n int, w, act []byte, out []float32) {
	nb := n / qk
	rowBytes := nb * q8_0Bytes
	if n > dotRowsMaxCols || nb == 0 {
		dotRows(dotQ8_0, n, rowBytes, w, act, out)
		return
	}
	w, act = w[:len(out)*rowBytes], act[:nb*q8_0Bytes]
	var yp [2 * dotRowsMaxCols]byte
	var ysum [dotRowsMaxCols / qk]int32
	splitQ8_0(&yp[0], &ysum[0], &act[0], nb)
	var sums [dotRowsMaxCols / qk]int32
	per := len(sums) / nb
	for r := 0; r < len(out); r += per {
		k := min(per, len(out)-r)
		q8_0RowSums(&w[r*rowBytes], &yp[0], nb, k, &sums[0])
		for i := range k {
			out[r+i] = scaleQ8_0Sums(0, sums[nb*i:nb*(i+1)], w[(r+i)*rowBytes:], act, q8_0Bytes)
		}
	}
}

// dotRowsQ4_0is the Q4_0 DotRows kernel.
func dotRowsQ4_0(n int, w, act []byte, out []float32) {
	nb := n / qk
	rowBytes := nb * q4_0Bytes
	if n > dotRowsMaxCols || nb == 0 {
		dotRows(dotQ4_0, n, rowBytes, w, act, out)
		return
	}
	w, act = w[:len(out)*rowBytes], act[:nb*q8_0Bytes]
	var yp [2 * dotRowsMaxCols]byte
	var ysum [dotRowsMaxCols / qk]int32
	splitQ8_0(&yp[0], &ysum[0], &act[0], nb)
	var sums [dotRowsMaxCols / qk]int32
	per := len(sums) / nb
	for r := 0; r < len(out); r += per {
		k := min(per, len(out)-r)
		q4_0RowSums(&w[r*rowBytes], &yp[0], &ysum[0], nb, k, &sums[0])
		for i := range k {
			out[r+i] = scaleQ8_0Sums(0, sums[nb*i:nb*(i+1)], w[(r+i)*rowBytes:], act, q4_0Bytes)
		}
	}
}

//go:build goexperiment.simd

package quant

// The wasm SIMD128 DotRows kernels (matrix-vector products over
// consecutive rows). The activation is prepared once per call, on the
// stack: its int8 values split into even and odd int16 lanes, the form
// i32x4.dot_i16x8_s takes (splitQ8_K, splitQ8_0 in
// dotrows_wasm.s). The K-quant row kernels there then compute each block's
// exact integer sums for several rows per call, stored block-major so
// that the sums of four consecutive rows are one vector. The float part
// then takes four rows at a time, one row per float32 lane: block j's
// term of each row is computed with the IEEE operations of the type's Dot
// and added to the lane's running sum, in block order, from zero, so
// every row's result is bit-identical to its Dot (and the chain of
// dependent additions, a row's latency, is shared by four rows). The
// last len(out)%4 rows are scaled one at a time by the Dot's own float
// part (scaleQ4_KSums, scaleQ6_KSums). Q8_0 and Q4_0, whose blocks are
// 32 weights, do both parts in asm, four rows at a time (rows4_wasm.s).

// dotRowsMaxCols is the longest row whose prepared activation (2 bytes
// per element) DotRows keeps on the stack; longer rows go to Dot per row.
const dotRowsMaxCols = 16384

// q8KPrepBytes is the size of a prepared Q8_K block: the 256 activations
// split (512 bytes), then the int16 sums of their 16 sub-blocks.
const q8KPrepBytes = 2*qkK + 2*qkK/16

// dotRowsSums is the number of blocks (of all rows) whose integer sums a
// K-quant row kernel computes per call: at least four rows.
const dotRowsSums = 256

//go:noescape
func splitQ8_K(dst, src *byte, nb int)

//go:noescape
func splitQ8_0(dst *byte, ysum *int32, src *byte, nb int)

//go:noescape
func q4KRowSums(x, yp, y *byte, nb, rows int, out *int32)

//go:noescape
func q6KRowSums(x, yp *byte, nb, rows int, out *int32)

//go:noescape
func q8_0Rows4(x, yp *byte, yd *float32, ysum *int32, tab *float32, nb, rowBytes, groups int, out *float32)

//go:noescape
func q4_0Rows4(x, yp *byte, yd *float32, ysum *int32, tab *float32, nb, rowBytes, groups int, out *float32)

// dotRowsQ4_KSIMD128 is the Q4_K DotRows kernel.
func dotRowsQ4_KSIMD128(n int, w, act []byte, out []float32) {
	nb := n / qkK
	rowBytes := nb * q4_KBytes
	if n > dotRowsMaxCols || nb == 0 {
		dotRows(dotQ4_KSIMD128, n, rowBytes, w, act, out)
		return
	}
	w, act = w[:len(out)*rowBytes], act[:nb*q8_KBytes]
	var yp [dotRowsMaxCols / qkK * q8KPrepBytes]byte
	splitQ8_K(&yp[0], &act[0], nb)
	var sums [2 * dotRowsSums]int32
	per := dotRowsSums / nb &^ 3
	r := 0
	for r+4 <= len(out) {
		k := min(per, (len(out)-r)&^3)
		q4KRowSums(&w[r*rowBytes], &yp[0], &act[0], nb, k, &sums[0])
		scaleRowsQ4_K(out[r:r+k], sums[:k*nb], sums[k*nb:2*k*nb], w[r*rowBytes:], act, rowBytes)
		r += k
	}
	for ; r < len(out); r++ {
		q4KRowSums(&w[r*rowBytes], &yp[0], &act[0], nb, 1, &sums[0])
		out[r] = scaleQ4_KSums(0, sums[:nb], sums[nb:2*nb], w[r*rowBytes:], act)
	}
}

// dotRowsQ6_KSIMD128 is the Q6_K DotRows kernel.
func dotRowsQ6_KSIMD128(n int, w, act []byte, out []float32) {
	nb := n / qkK
	rowBytes := nb * q6_KBytes
	if n > dotRowsMaxCols || nb == 0 {
		dotRows(dotQ6_KSIMD128, n, rowBytes, w, act, out)
		return
	}
	w, act = w[:len(out)*rowBytes], act[:nb*q8_KBytes]
	var yp [dotRowsMaxCols / qkK * q8KPrepBytes]byte
	splitQ8_K(&yp[0], &act[0], nb)
	var sums [dotRowsSums]int32
	per := dotRowsSums / nb &^ 3
	r := 0
	for r+4 <= len(out) {
		k := min(per, (len(out)-r)&^3)
		q6KRowSums(&w[r*rowBytes], &yp[0], nb, k, &sums[0])
		scaleRowsQ6_K(out[r:r+k], sums[:k*nb], w[r*rowBytes:], act, rowBytes)
		r += k
	}
	for ; r < len(out); r++ {
		q6KRowSums(&w[r*rowBytes], &yp[0], nb, 1, &sums[0])
		out[r] = scaleQ6_KSums(0, sums[:nb], w[r*rowBytes:], act)
	}
}

//go:noescape
func q4KScaleRows(out *float32, is, ms *int32, w, act *byte, tab *float32, k, nb, rowBytes int)

//go:noescape
func q6KScaleRows(out *float32, is, ms *int32, w, act *byte, tab *float32, k, nb, rowBytes int)

// scaleRowsQ4_K is the float part of Q4_K's DotRows for the k = len(out)
// rows (a multiple of four) at w, from the integer sums of their blocks,
// block-major (is[k*j+i] and ms[k*j+i] row i's block j's): four rows in
// the lanes of a vector, each lane the terms of scaleQ4_KSums in block
// order from zero (q4KScaleRows in rows4_wasm.s).
func scaleRowsQ4_K(out []float32, is, ms []int32, w, act []byte, rowBytes int) {
	k := len(out)
	nb := len(is) / k
	w, ms, act = w[:k*rowBytes], ms[:k*nb], act[:nb*q8_KBytes]
	q4KScaleRows(&out[0], &is[0], &ms[0], &w[0], &act[0], &fp16ToFP32Table[0], k, nb, rowBytes)
}

// scaleRowsQ6_K is scaleRowsQ4_K for Q6_K (the terms of scaleQ6_KSums).
func scaleRowsQ6_K(out []float32, sums []int32, w, act []byte, rowBytes int) {
	k := len(out)
	nb := len(sums) / k
	w, act = w[:k*rowBytes], act[:nb*q8_KBytes]
	q6KScaleRows(&out[0], &sums[0], &sums[0], &w[0], &act[0], &fp16ToFP32Table[0], k, nb, rowBytes)
}

// dotRowsQ8_0SIMD128 is the Q8_0 DotRows kernel: the rows four at a time
// in asm (q8_0Rows4: integer and float part), the last len(out)%4 by the Dot.
func dotRowsQ8_0SIMD128(n int, w, act []byte, out []float32) {
	var a q8_0Act
	if !a.prepare(n, q8_0Bytes, w, act, out) {
		dotRows(dotQ8_0SIMD128, n, n/qk*q8_0Bytes, w, act, out)
		return
	}
	if g := len(out) / 4; g > 0 {
		q8_0Rows4(&w[0], &a.yp[0], &a.yd[0], &a.ysum[0], &fp16ToFP32Table[0], a.nb, a.rowBytes, g, &out[0])
	}
	a.tail(dotQ8_0SIMD128, n, w, act, out)
}

// dotRowsQ4_0SIMD128 is the Q4_0 DotRows kernel, as dotRowsQ8_0SIMD128 (q4_0Rows4).
func dotRowsQ4_0SIMD128(n int, w, act []byte, out []float32) {
	var a q8_0Act
	if !a.prepare(n, q4_0Bytes, w, act, out) {
		dotRows(dotQ4_0SIMD128, n, n/qk*q4_0Bytes, w, act, out)
		return
	}
	if g := len(out) / 4; g > 0 {
		q4_0Rows4(&w[0], &a.yp[0], &a.yd[0], &a.ysum[0], &fp16ToFP32Table[0], a.nb, a.rowBytes, g, &out[0])
	}
	a.tail(dotQ4_0SIMD128, n, w, act, out)
}

// q8_0Act is a Q8_0 activation prepared for the four-row kernels of
// 32-weight rows (q8_0Rows4, q4_0Rows4, q4_0Rows4Relaxed): split once by
// splitQ8_0 (yp, and its blocks' sums ysum), its blocks' scales as float32
// (yd); the relaxed Q8_0 kernel (q8_0Rows4Relaxed) fills yp with the
// magnitudes and signs instead (absSignQ8_0). It lives on the caller's
// stack: the asm takes pointers into it.
type q8_0Act struct {
	yp           [2 * dotRowsMaxCols]byte
	ysum         [dotRowsMaxCols / qk]int32
	yd           [dotRowsMaxCols / qk]float32
	nb, rowBytes int
}

// prepare splits act for rows of n weights, xsize bytes a block; false
// when the rows are too long for the buffers (or empty): the caller then
// takes the Dot for each row.
func (a *q8_0Act) prepare(n, xsize int, w, act []byte, out []float32) bool {
	if !a.prepareScales(n, xsize, w, act, out) {
		return false
	}
	splitQ8_0(&a.yp[0], &a.ysum[0], &act[0], a.nb)
	return true
}

// prepareScales is prepare without the split: the checks, nb, rowBytes
// and yd (the relaxed Q8_0 kernel prepares yp its own way).
func (a *q8_0Act) prepareScales(n, xsize int, w, act []byte, out []float32) bool {
	a.nb, a.rowBytes = n/qk, n/qk*xsize
	if n > dotRowsMaxCols || a.nb == 0 || len(w) < len(out)*a.rowBytes || len(act) < a.nb*q8_0Bytes {
		return false
	}
	for j := range a.nb {
		a.yd[j] = fp16At(act[j*q8_0Bytes:])
	}
	return true
}

// tail takes the Dot for the last len(out)%4 rows, which the four-row
// kernels leave.
func (a *q8_0Act) tail(dot func(n int, w, act []byte) float32, n int, w, act []byte, out []float32) {
	for r := len(out) &^ 3; r < len(out); r++ {
		out[r] = dot(n, w[r*a.rowBytes:], act)
	}
}

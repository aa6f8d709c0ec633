//go:build goexperiment.simd

package quant

// The wasm SIMD128 DotRowsN kernels of Q4_K and Q6_K (a matrix times a
// prefill batch). The activations are prepared once per call, as the
// DotRows kernels prepare theirs (splitQ8_K), into a buffer on the stack,
// as many at a time as it holds; then each weight row's blocks are decoded
// once and dotted with every prepared activation (q4KRowSumsN, q6KRowSumsN
// in dotrowsn_wasm.s), and the exact integer block sums of each row and
// activation are scaled and added in block order by the Dot's own float
// part (scaleQ4_KSums, scaleQ6_KSums), so every result is bit-identical to
// Dot's. Rows too long for the buffer (none in the models we know) take
// the DotN kernels row by row. (Q8_0 and Q4_0 keep eachRow over their DotN
// kernels, dotn_wasm.go: a kernel like these measured no faster for Q8_0
// and slower for Q4_0, whose 32-weight blocks leave the float part per
// activation as costly as the integer sums.)

// dotRowsNPrep is the room for prepared activations, as large as a
// variable on the stack can be (the compiler moves larger ones to the
// heap): a whole batch for rows up to 3840 long (TinyLlama's 2048), 10
// activations at a time for TinyLlama's FFN rows (5632).
const dotRowsNPrep = 128 << 10

// dotRowsNBlocks is the most blocks of prepared activations it holds.
const dotRowsNBlocks = dotRowsNPrep / q8KPrepBytes

//go:noescape
func q4KRowSumsN(x, yp *byte, acc *int32, nb, acts int, out *int32)

//go:noescape
func q6KRowSumsN(x, yp *byte, acc *int32, nb, acts int, out *int32)

// prepareQ8_K splits acts (Q8_K, nb blocks each) into yp, one after the
// other (nb·q8KPrepBytes bytes each).
func prepareQ8_K(yp []byte, acts [][]byte, nb int) {
	for i, a := range acts {
		a = a[:nb*q8_KBytes]
		p := yp[i*nb*q8KPrepBytes : (i+1)*nb*q8KPrepBytes]
		splitQ8_K(&p[0], &a[0], nb)
	}
}

// actsPerPass is how many activations of nb blocks the prepared buffer
// holds (0: not one).
func actsPerPass(nb, acts int) int {
	return min(acts, MaxDotN, dotRowsNBlocks/nb)
}

// dotRowsNQ4_KSIMD128 is the Q4_K DotRowsN kernel.
func dotRowsNQ4_KSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qkK
	rowBytes := nb * q4_KBytes
	if nb == 0 || actsPerPass(nb, len(acts)) == 0 {
		eachRow(dotNQ4_KSIMD128, rowBytes, n, w, acts, outs, at)
		return
	}
	rows := len(w) / rowBytes
	w = w[:rows*rowBytes]
	var yp [dotRowsNPrep]byte
	var acc [4 * MaxDotN]int32
	var sums [2 * dotRowsNBlocks]int32 // [2][nb][k]: Σ scale·q·y, then Σ min·bsum
	var is, ms [dotRowsNBlocks]int32
	for len(acts) > 0 {
		k := actsPerPass(nb, len(acts))
		prepareQ8_K(yp[:], acts[:k], nb)
		s := sums[:2*nb*k]
		for r := range rows {
			x := w[r*rowBytes : (r+1)*rowBytes]
			q4KRowSumsN(&x[0], &yp[0], &acc[0], nb, k, &s[0])
			for i, a := range acts[:k] {
				for j := range nb {
					is[j], ms[j] = s[j*k+i], s[(nb+j)*k+i]
				}
				outs[i][at+r] = scaleQ4_KSums(0, is[:nb], ms[:nb], x, a)
			}
		}
		acts, outs = acts[k:], outs[k:]
	}
}

// dotRowsNQ6_KSIMD128 is the Q6_K DotRowsN kernel.
func dotRowsNQ6_KSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qkK
	rowBytes := nb * q6_KBytes
	if nb == 0 || actsPerPass(nb, len(acts)) == 0 {
		eachRow(dotNQ6_KSIMD128, rowBytes, n, w, acts, outs, at)
		return
	}
	rows := len(w) / rowBytes
	w = w[:rows*rowBytes]
	var yp [dotRowsNPrep]byte
	var acc [4 * MaxDotN]int32
	var sums [dotRowsNBlocks]int32 // [nb][k]
	var is [dotRowsNBlocks]int32
	for len(acts) > 0 {
		k := actsPerPass(nb, len(acts))
		prepareQ8_K(yp[:], acts[:k], nb)
		s := sums[:nb*k]
		for r := range rows {
			x := w[r*rowBytes : (r+1)*rowBytes]
			q6KRowSumsN(&x[0], &yp[0], &acc[0], nb, k, &s[0])
			for i, a := range acts[:k] {
				for j := range nb {
					is[j] = s[j*k+i]
				}
				outs[i][at+r] = scaleQ6_KSums(0, is[:nb], x, a)
			}
		}
		acts, outs = acts[k:], outs[k:]
	}
}

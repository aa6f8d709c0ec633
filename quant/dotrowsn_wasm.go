//go:build goexperiment.simd

package quant

import "simd/archsimd"

// The wasm SIMD128 DotRowsN kernels (a matrix times a prefill batch) of
// Q4_K, Q6_K, Q8_0 and Q4_0. The activations are prepared once per call,
// as the DotRows kernels prepare theirs (splitQ8_K, splitQ8_0), into a
// buffer on the stack, as many at a time as it holds; then each weight
// row's blocks are decoded once and dotted with every prepared activation
// (the RowSumsN kernels in dotrowsn_wasm.s), and the exact integer block
// sums of each row and activation are scaled and added in block order by
// the Dot's own float part (scaleQ4_KSums, scaleQ6_KSums, scaleQ8_0Sums),
// so every result is bit-identical to Dot's. Rows too long for the buffer
// (none in the models we know) take the DotN kernels row by row.

// dotRowsNPrep is the room for prepared activations, as large as a
// variable on the stack can be (the compiler moves larger ones to the
// heap): a whole batch for rows up to 3840 long with Q8_K activations
// (TinyLlama's 2048), 10 activations at a time for its FFN rows (5632);
// with Q8_0 activations a whole batch for rows up to 4096, 11 at a time
// for 5632.
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

// dotRowsNQ8_0Prep is the same for Q8_0 activations.
const dotRowsNQ8_0Prep = dotRowsNPrep

// dotRowsNQ8_0Blocks is the most blocks of prepared activations it holds.
const dotRowsNQ8_0Blocks = dotRowsNQ8_0Prep / 64

//go:noescape
func q8_0RowSumsN(x, yp *byte, nb, acts int, out *int32)

//go:noescape
func q4_0RowSumsN(x, yp *byte, nb, acts int, out *int32)

// dotRowsNQ8_0SIMD128 is the Q8_0 DotRowsN kernel.
func dotRowsNQ8_0SIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	dotRowsNQ8_0Acts(false, n, w, acts, outs, at)
}

// dotRowsNQ4_0SIMD128 is the Q4_0 DotRowsN kernel.
func dotRowsNQ4_0SIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	dotRowsNQ8_0Acts(true, n, w, acts, outs, at)
}

// dotRowsNQ8_0Acts is the DotRowsN kernel of Q4_0 (q4) or Q8_0 weights:
// the activations split once (splitQ8_0), each row's blocks decoded once
// and dotted with all of them (q4_0RowSumsN, q8_0RowSumsN), the lanes of
// each block's sums added four blocks at a time (hsum4; Q4_0's offset of 8
// taken off with the activation's block sums), and the float part the
// Dot's (scaleQ8_0Sums).
func dotRowsNQ8_0Acts(q4 bool, n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qk
	xsize := q8_0Bytes
	if q4 {
		xsize = q4_0Bytes
	}
	rowBytes := nb * xsize
	if nb == 0 || min(MaxDotN, dotRowsNQ8_0Blocks/nb) == 0 {
		if q4 {
			eachRow(dotNQ4_0SIMD128, rowBytes, n, w, acts, outs, at)
		} else {
			eachRow(dotNQ8_0SIMD128, rowBytes, n, w, acts, outs, at)
		}
		return
	}
	rows := len(w) / rowBytes
	w = w[:rows*rowBytes]
	var yp [dotRowsNQ8_0Prep]byte
	var ysum [dotRowsNQ8_0Blocks]int32      // [k][nb] the activations' block sums
	var lanes [4 * dotRowsNQ8_0Blocks]int32 // [nb][k][4] a row's block sums, in lanes
	var sums [dotRowsNQ8_0Blocks]int32      // [nb] one activation's
	for len(acts) > 0 {
		k := min(len(acts), MaxDotN, dotRowsNQ8_0Blocks/nb)
		for i, a := range acts[:k] {
			a = a[:nb*q8_0Bytes]
			p := yp[i*nb*64 : (i+1)*nb*64]
			splitQ8_0(&p[0], &ysum[i*nb], &a[0], nb)
		}
		l := lanes[:4*nb*k]
		for r := range rows {
			x := w[r*rowBytes : (r+1)*rowBytes]
			if q4 {
				q4_0RowSumsN(&x[0], &yp[0], nb, k, &l[0])
			} else {
				q8_0RowSumsN(&x[0], &yp[0], nb, k, &l[0])
			}
			for i, a := range acts[:k] {
				j := 0
				for ; j+4 <= nb; j += 4 {
					hsum4(lanesAt(l, 4*(k*j+i)), lanesAt(l, 4*(k*(j+1)+i)), lanesAt(l, 4*(k*(j+2)+i)), lanesAt(l, 4*(k*(j+3)+i))).
						StoreArray((*[4]int32)(sums[j:]))
				}
				for ; j < nb; j++ {
					sums[j] = hsum(lanesAt(l, 4*(k*j+i)))
				}
				if q4 {
					for j, y := range ysum[i*nb : (i+1)*nb] {
						sums[j] -= 8 * y
					}
				}
				outs[i][at+r] = scaleQ8_0Sums(0, sums[:nb], x, a, xsize)
			}
		}
		acts, outs = acts[k:], outs[k:]
	}
}

// lanesAt loads the four int32 lanes at l[o:].
func lanesAt(l []int32, o int) archsimd.Int32x4 {
	return archsimd.LoadInt32x4Array((*[4]int32)(l[o:]))
}

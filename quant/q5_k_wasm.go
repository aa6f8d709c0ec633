//go:build goexperiment.simd

package quant

// The wasm SIMD128 DotRows kernel of Q5_K (kernels_wasm.go): the
// activation prepared once per call (prepareQ8_KX86), then all the rows
// by q5KDotRows (q5_k_wasm.s), which sums in the reference's order.

//go:noescape
func q5KDotRows(x *byte, nb, rows int, yp *byte, yd, tab, out *float32)

// dotRowsQ5_KSIMD128 is the Q5_K DotRows kernel; rows longer than
// dotRowsMaxCols take the Dot.
func dotRowsQ5_KSIMD128(n int, w, act []byte, out []float32) {
	nb := n / qkK
	rowBytes := nb * q5_KBytes
	if n > dotRowsMaxCols || nb == 0 {
		for r := range out {
			out[r] = dotQ5_KSIMD128(n, w[r*rowBytes:], act)
		}
		return
	}
	rows := len(out)
	w, act = w[:rows*rowBytes], act[:nb*q8_KBytes]
	var (
		yp [dotRowsMaxCols / qkK * q8KPrepBytes]byte
		yd [dotRowsMaxCols / qkK]float32
	)
	prepareQ8_KX86(yp[:], act, nb)
	for j := range nb {
		yd[j] = f32At(act[j*q8_KBytes:])
	}
	if rows > 0 {
		q5KDotRows(&w[0], nb, rows, &yp[0], &yd[0], &fp16ToFP32Table[0], &out[0])
	}
}

//go:noescape
func q5KRowsN(x *byte, nb, rows int, yp *byte, k int, yd, tab *float32, st *byte, out *float32)

// kRowsNChunk is how many rows a DotRowsN kernel's asm call covers (its
// results then go to the outputs).
const kRowsNChunk = 64

// dotRowsNQ5_KSIMD128 is the Q5_K DotRowsN kernel (q5KDotRowsN).
func dotRowsNQ5_KSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	q5KDotRowsN(false, n, w, acts, outs, at)
}

// q5KDotRowsN is the Q5_K DotRowsN kernel: up to MaxDotN activations
// prepared at once (as many as x86Prep holds), then q5KRowsN, or (relaxed,
// in the relaxedsimd build) q5KRowsNRelaxed (q5KRowsNCall), over
// kRowsNChunk rows at a time; rows too long for one activation in the
// buffer take x86RowsN (Dot).
func q5KDotRowsN(relaxed bool, n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qkK
	rowBytes := nb * q5_KBytes
	if nb == 0 || len(acts) == 0 {
		return
	}
	if nb > x86PrepBlocks {
		x86RowsN(Q5_K, n, w, acts, outs, at)
		return
	}
	rows := len(w) / rowBytes
	w = w[:rows*rowBytes]
	var (
		yp [x86Prep]byte
		yd [x86PrepBlocks]float32
		st [1536 + 64*MaxDotN]byte
		ob [kRowsNChunk * MaxDotN]float32
	)
	for len(acts) > 0 {
		k := min(len(acts), MaxDotN, x86PrepBlocks/nb)
		for i, a := range acts[:k] {
			prepareQ8_KX86(yp[i*nb*q8KPrepBytes:], a, nb)
			for j := range nb {
				yd[i*nb+j] = f32At(a[j*q8_KBytes:])
			}
		}
		for r0 := 0; r0 < rows; r0 += kRowsNChunk {
			c := min(kRowsNChunk, rows-r0)
			q5KRowsNCall(relaxed, &w[r0*rowBytes], nb, c, &yp[0], k, &yd[0], &fp16ToFP32Table[0], &st[0], &ob[0])
			for i, o := range outs[:k] {
				o = o[at+r0 : at+r0+c]
				for r := range o {
					o[r] = ob[r*k+i]
				}
			}
		}
		acts, outs = acts[k:], outs[k:]
	}
}

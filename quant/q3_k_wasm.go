//go:build goexperiment.simd

package quant

// The wasm SIMD128 DotRows kernel of Q3_K (kernels_wasm.go): the
// activation prepared once per call (prepareQ8_KX86), then all the rows
// by q3KDotRows (q3_k_wasm.s), which sums in the reference's order.

//go:noescape
func q3KDotRows(x *byte, nb, rows int, yp *byte, yd, tab, out *float32)

// dotRowsQ3_KSIMD128 is the Q3_K DotRows kernel; rows longer than
// dotRowsMaxCols take the Dot.
func dotRowsQ3_KSIMD128(n int, w, act []byte, out []float32) {
	kDotRows(Q3_K, n, w, act, out)
}

// kDotRows is the DotRows kernel of t (Q3_K or Q2_K) with its row kernel
// (q3KDotRows, q2KDotRows: called by name, as through a func value the
// stack arrays would escape); rows longer than dotRowsMaxCols take Dot.
func kDotRows(t Type, n int, w, act []byte, out []float32) {
	nb := n / qkK
	rowBytes := nb * x86Size(t)
	if n > dotRowsMaxCols || nb == 0 {
		for r := range out {
			out[r] = x86Dot(t, n, w[r*rowBytes:], act)
		}
		return
	}
	if len(out) == 0 {
		return
	}
	w, act = w[:len(out)*rowBytes], act[:nb*q8_KBytes]
	var (
		yp [dotRowsMaxCols / qkK * q8KPrepBytes]byte
		yd [dotRowsMaxCols / qkK]float32
	)
	prepareQ8_KX86(yp[:], act, nb)
	for j := range nb {
		yd[j] = f32At(act[j*q8_KBytes:])
	}
	if t == Q3_K {
		q3KDotRows(&w[0], nb, len(out), &yp[0], &yd[0], &fp16ToFP32Table[0], &out[0])
	} else {
		q2KDotRows(&w[0], nb, len(out), &yp[0], &yd[0], &fp16ToFP32Table[0], &out[0])
	}
}

//go:noescape
func q3KRowsN(x *byte, nb, rows int, yp *byte, k int, yd, tab *float32, st *byte, out *float32)

// dotRowsNQ3_KSIMD128 is the Q3_K DotRowsN kernel (kRowsN).
func dotRowsNQ3_KSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	kRowsN(Q3_K, false, n, w, acts, outs, at)
}

// kRowsN is the DotRowsN kernel of t (Q3_K, Q2_K or Q5_K) with its batch
// kernel (q3KRowsN, q2KRowsN: kkq_wasm.h's KROWSN; q5KRowsN: q5kn_wasm.h's
// Q5KROWSN; or with relaxed in the relaxedsimd build their Relaxed twins;
// called by name, kRowsNCall and q5KRowsNCall): up to
// MaxDotN activations prepared at once (as many as x86Prep holds), then
// the batch kernel over kRowsNChunk rows at a time; rows too long for one
// activation in the buffer take x86RowsN (Dot).
func kRowsN(t Type, relaxed bool, n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qkK
	rowBytes := nb * x86Size(t)
	if nb == 0 || len(acts) == 0 {
		return
	}
	if nb > x86PrepBlocks {
		x86RowsN(t, n, w, acts, outs, at)
		return
	}
	rows := len(w) / rowBytes
	w = w[:rows*rowBytes]
	var (
		yp [x86Prep]byte
		yd [x86PrepBlocks]float32
		st [1536 + 64*MaxDotN]byte // the batch kernel's scratch (Q5_K's is the largest)
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
			if t == Q5_K {
				q5KRowsNCall(relaxed, &w[r0*rowBytes], nb, c, &yp[0], k, &yd[0], &fp16ToFP32Table[0], &st[0], &ob[0])
			} else {
				kRowsNCall(t, relaxed, &w[r0*rowBytes], nb, c, &yp[0], k, &yd[0], &fp16ToFP32Table[0], &st[0], &ob[0])
			}
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

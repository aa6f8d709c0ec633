//go:build goexperiment.simd && relaxedsimd

package quant

// The relaxed-SIMD DotRowsN kernels of Q4_K, Q6_K and Q4_0
// (relaxedn_wasm.s): the activations prepared four at a time into quads
// (prepQ8_KQuad, prepQ8_0QuadRelaxed), as many as the buffer on the stack
// holds (all of a batch for K-quant rows up to 7168 long), then the rows
// against all of them, dotRowsNRowsPerCall at a time, each result
// bit-identical to its Dot. Longer rows take the SIMD128 kernels. (The
// Q4_0 driver is dotRowsNQ8_0Acts's, dotrowsn_wasm.go, with the relaxed
// kernels.)

// q8KQuadBytes is the size of a prepared Q8_K quad block.
const q8KQuadBytes = 1168

// dotRowsNQ8KBlocks is the most quad blocks the prepared buffer holds.
const dotRowsNQ8KBlocks = dotRowsNPrep / q8KQuadBytes

//go:noescape
func prepQ8_KQuad(dst *byte, ys *[4]*byte, nb int)

//go:noescape
func q4KRowsNRelaxed(x, yq *byte, tab *float32, scr *byte, nb, rows, quads int, out *float32)

//go:noescape
func q6KRowsNRelaxed(x, yq *byte, tab *float32, scr *byte, nb, rows, quads int, out *float32)

// dotRowsNQ4_KRelaxed is the Q4_K DotRowsN kernel.
func dotRowsNQ4_KRelaxed(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	if nb := n / qkK; nb == 0 || nb > dotRowsNQ8KBlocks {
		dotRowsNQ4_KSIMD128(n, w, acts, outs, at)
		return
	}
	dotRowsNKRelaxed(false, n, w, acts, outs, at)
}

// dotRowsNQ6_KRelaxed is the Q6_K DotRowsN kernel.
func dotRowsNQ6_KRelaxed(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	if nb := n / qkK; nb == 0 || nb > dotRowsNQ8KBlocks {
		dotRowsNQ6_KSIMD128(n, w, acts, outs, at)
		return
	}
	dotRowsNKRelaxed(true, n, w, acts, outs, at)
}

// dotRowsNKRelaxed is the DotRowsN kernel of Q4_K or Q6_K (q6) weights,
// rows of 1 to dotRowsNQ8KBlocks blocks.
func dotRowsNKRelaxed(q6 bool, n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qkK
	rowBytes := nb * q4_KBytes
	if q6 {
		rowBytes = nb * q6_KBytes
	}
	rows := len(w) / rowBytes
	w = w[:rows*rowBytes]
	tab := &fp16ToFP32Table[0]
	var yq [dotRowsNPrep]byte
	var scr [8 * 16]byte
	var res [16 * dotRowsNRowsPerCall]float32 // [row][quad][lane]
	for len(acts) > 0 {
		quads := min((len(acts)+3)/4, MaxDotN/4, dotRowsNQ8KBlocks/nb)
		k := min(len(acts), 4*quads)
		for q := range quads {
			var ys [4]*byte
			for l := range ys {
				a := acts[min(4*q+l, k-1)] // a short quad repeats its last activation
				ys[l] = &a[:nb*q8_KBytes][0]
			}
			prepQ8_KQuad(&yq[q*nb*q8KQuadBytes], &ys, nb)
		}
		for r := 0; r < rows; r += dotRowsNRowsPerCall {
			m := min(dotRowsNRowsPerCall, rows-r)
			if q6 {
				q6KRowsNRelaxed(&w[r*rowBytes], &yq[0], tab, &scr[0], nb, m, quads, &res[0])
			} else {
				q4KRowsNRelaxed(&w[r*rowBytes], &yq[0], tab, &scr[0], nb, m, quads, &res[0])
			}
			for i, o := range outs[:k] {
				o = o[at+r : at+r+m]
				for t := range o {
					o[t] = res[16*t+i]
				}
			}
		}
		acts, outs = acts[k:], outs[k:]
	}
}

// q8QuadRelaxedBytes is the size of a prepared Q8_0 quad block
// (prepQ8_0QuadRelaxed in relaxedn_wasm.s).
const q8QuadRelaxedBytes = 160

// dotRowsNQ8RelaxedBlocks is the most such blocks the buffer holds.
const dotRowsNQ8RelaxedBlocks = dotRowsNPrep / q8QuadRelaxedBytes

//go:noescape
func prepQ8_0QuadRelaxed(dst *byte, ys *[4]*byte, tab *float32, nb int)

//go:noescape
func q4_0RowsNRelaxed(x, yq *byte, tab *float32, nb, rows, quads int, out *float32)

// dotRowsNQ4_0Relaxed is the Q4_0 DotRowsN kernel: dotRowsNQ8_0Acts's
// (dotrowsn_wasm.go) with q4_0RowsNRelaxed (dotRowsNQ8Relaxed).
func dotRowsNQ4_0Relaxed(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	if nb := n / qk; nb == 0 || nb > dotRowsNQ8RelaxedBlocks {
		dotRowsNQ4_0SIMD128(n, w, acts, outs, at)
		return
	}
	dotRowsNQ8Relaxed(false, n, w, acts, outs, at)
}

// dotRowsNQ8Relaxed is the DotRowsN kernel of the 32-weight formats of
// 18-byte blocks against Q8_0 activations: Q4_0 (prepQ8_0QuadRelaxed,
// q4_0RowsNRelaxed) or IQ4_NL (iq4nl: prepQ8_0Quad, iq4NLRowsNRelaxed in
// iq4_relaxed_wasm.s), rows of 1 to as many blocks as the buffer holds.
func dotRowsNQ8Relaxed(iq4nl bool, n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qk
	rowBytes := nb * q4_0Bytes // = nb * iq4_NLBytes
	qb := q8QuadRelaxedBytes
	if iq4nl {
		qb = q8PrepBlock
	}
	rows := len(w) / rowBytes
	w = w[:rows*rowBytes]
	tab := &fp16ToFP32Table[0]
	var yq [dotRowsNPrep]byte
	var res [16 * dotRowsNRowsPerCall]float32 // [row][quad][lane]
	for len(acts) > 0 {
		quads := min((len(acts)+3)/4, MaxDotN/4, dotRowsNPrep/qb/nb)
		k := min(len(acts), 4*quads)
		for q := range quads {
			var ys [4]*byte
			for l := range ys {
				a := acts[min(4*q+l, k-1)] // a short quad repeats its last activation
				ys[l] = &a[:nb*q8_0Bytes][0]
			}
			if iq4nl {
				prepQ8_0Quad(&yq[q*nb*qb], &ys, tab, nb)
			} else {
				prepQ8_0QuadRelaxed(&yq[q*nb*qb], &ys, tab, nb)
			}
		}
		for r := 0; r < rows; r += dotRowsNRowsPerCall {
			m := min(dotRowsNRowsPerCall, rows-r)
			if iq4nl {
				iq4NLRowsNRelaxed(&w[r*rowBytes], &yq[0], tab, nb, m, quads, &res[0])
			} else {
				q4_0RowsNRelaxed(&w[r*rowBytes], &yq[0], tab, nb, m, quads, &res[0])
			}
			for i, o := range outs[:k] {
				o = o[at+r : at+r+m]
				for t := range o {
					o[t] = res[16*t+i]
				}
			}
		}
		acts, outs = acts[k:], outs[k:]
	}
}

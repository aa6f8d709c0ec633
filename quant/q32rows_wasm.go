//go:build goexperiment.simd

package quant

import "simd/archsimd"

// The wasm SIMD128 DotRows and DotRowsN kernels of the 32-weight formats
// whose references add each block's terms by fused multiply-adds (fma32):
// IQ4_NL's DotRowsN, Q5_0, Q5_1 and Q4_1 (kernels_wasm.go; their Dot
// kernels are in iq4_nl_wasm.go and q5_wasm.go, IQ4_NL's DotRows in
// iq4_nl_rows_wasm.go).
//
// IQ4_NL: the activations are prepared once per call, four to a vector
// (prepQ8_0Quad); the asm (q32rows_wasm.s) computes each block's exact
// integer sums, and fmaLanes adds them times the blocks' scales to four
// float32 lanes (four activations) in block order with the reference's
// fused multiply-adds, emulated exactly, so every result is bit-identical
// to the Dot's.
//
// Q5_0, Q5_1, Q4_1 (ggml's x86 order, eight lanes per block): the
// activations are split once per call (splitQ8), then the asm decodes each
// weight block once and adds its lanes to each row's (DotRows) or
// activation's (DotRowsN) eight float32 accumulators with the exact fused
// multiply-adds (FMA8M, FMA8X), and the min terms to their own sum;
// hsumX86 of the lanes plus that sum is the Dot's result.

//go:noescape
func iq4NLRowSumsN(x, yq *byte, tab *int8, nb, quads int, out *int32)

//go:noescape
func fmaLanes(s *int32, d *float32, n, stride int, acc *[4]float32)

// dotRowsNIQ4_NLSIMD128 is the IQ4_NL DotRowsN kernel: the activations
// prepared into quads (up to four, as many as the buffer holds), then each
// row's block sums against all of them in asm and their float part per
// quad (fmaLanes); rows too long for one quad in the buffer take the Dot.
func dotRowsNIQ4_NLSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qk
	rowBytes := nb * iq4_NLBytes
	if nb == 0 || nb > dotRowsNQ8Blocks {
		matMul(dotIQ4_NLSIMD128, n, rowBytes, w, acts, outs, at)
		return
	}
	rows := len(w) / rowBytes
	w = w[:rows*rowBytes]
	tab := &fp16ToFP32Table[0]
	var yq [dotRowsNPrep]byte
	var s [MaxDotN * dotRowsNQ8Blocks]int32 // [block][quad][lane]
	var d [MaxDotN * dotRowsNQ8Blocks]float32
	var dy [MaxDotN * dotRowsNQ8Blocks]float32 // [quad][block][lane]: the activations' scales
	for len(acts) > 0 {
		quads := min((len(acts)+3)/4, MaxDotN/4, dotRowsNQ8Blocks/nb)
		k := min(len(acts), 4*quads)
		for q := range quads {
			var ys [4]*byte
			for l := range ys {
				a := acts[min(4*q+l, k-1)] // a short quad repeats its last activation
				ys[l] = &a[:nb*q8_0Bytes][0]
			}
			prepQ8_0Quad(&yq[q*nb*q8PrepBlock], &ys, tab, nb)
			for j := range nb {
				for l := range 4 {
					dy[(q*nb+j)*4+l] = fp16At(acts[min(4*q+l, k-1)][j*q8_0Bytes:])
				}
			}
		}
		for r := range rows {
			x := w[r*rowBytes : (r+1)*rowBytes]
			iq4NLRowSumsN(&x[0], &yq[0], &kvaluesIQ4NL[0], nb, quads, &s[0])
			for j := range nb {
				dx := archsimd.BroadcastFloat32x4(fp16At(x[j*iq4_NLBytes:]))
				for q := range quads {
					y := archsimd.LoadFloat32x4Array((*[4]float32)(dy[(q*nb+j)*4:]))
					dx.Mul(y).StoreArray((*[4]float32)(d[16*j+4*q:]))
				}
			}
			for q := range quads {
				var acc [4]float32
				fmaLanes(&s[4*q], &d[4*q], nb, 64, &acc)
				for l := range min(4, k-4*q) {
					outs[4*q+l][at+r] = acc[l]
				}
			}
		}
		acts, outs = acts[k:], outs[k:]
	}
}

//go:noescape
func splitQ8(dst, src *byte, nb, stride int)

//go:noescape
func q5_0RowsAcc(x, yp *byte, dy, sy, tab *float32, nb, rows int, acc *float32)

//go:noescape
func q5_1RowsAcc(x, yp *byte, dy, sy, tab *float32, nb, rows int, acc *float32)

//go:noescape
func q4_1RowsAcc(x, yp *byte, dy, sy, tab *float32, nb, rows int, acc *float32)

//go:noescape
func q5_0RowAccN(x, yp *byte, dy, sy, tab *float32, nb, k int, acc *float32, wd *[32]int16)

//go:noescape
func q5_1RowAccN(x, yp *byte, dy, sy, tab *float32, nb, k int, acc *float32, wd *[32]int16)

//go:noescape
func q4_1RowAccN(x, yp *byte, dy, sy, tab *float32, nb, k int, acc *float32, wd *[32]int16)

// q5Acc is the room of one row's (or activation's) sums in the Q5_0, Q5_1
// and Q4_1 kernels: 8 lanes, the min sum, padding.
const q5Acc = 12

// q5RowsPerCall is the rows a Q5_0, Q5_1 or Q4_1 DotRows call sums.
const q5RowsPerCall = 64

// q5Format is the layout of Q5_0 (Q8_0 activations), Q5_1 or Q4_1 (Q8_1
// activations): block sizes and whether a min sum is added.
func q5Format(t Type) (xsize, ysize int, mins bool, dot func(int, []byte, []byte) float32) {
	switch t {
	case Q5_0:
		return q5_0Bytes, q8_0Bytes, false, dotQ5_0SIMD128
	case Q5_1:
		return q5_1Bytes, q8_1Bytes, true, dotQ5_1SIMD128
	}
	return q4_1Bytes, q8_1Bytes, true, dotQ4_1SIMD128
}

// prepareQ5 splits the nb activation blocks of act (Q8_0 or Q8_1 of
// ysize bytes) into yp, their scales into dy and (Q8_1) their s into sy.
func prepareQ5(yp []byte, dy, sy []float32, act []byte, nb, ysize int) {
	act = act[:nb*ysize]
	splitQ8(&yp[:nb*64][0], &act[ysize-qk], nb, ysize)
	dy, sy = dy[:nb], sy[:nb]
	for j := range nb {
		dy[j] = fp16At(act[j*ysize:])
		if ysize == q8_1Bytes {
			sy[j] = fp16At(act[j*ysize+2:])
		}
	}
}

// q5Result is a row's dot from its sums: hsumX86 of the lanes, plus the
// min sum where the format has one.
func q5Result(acc []float32, mins bool) float32 {
	s := hsumX86((*[8]float32)(acc[:8]))
	if mins {
		s += acc[8]
	}
	return s
}

// dotRowsQ5 is the DotRows kernel of Q5_0, Q5_1 and Q4_1: the activation
// split once, then q5RowsPerCall rows per asm call, each row summed as
// its Dot sums it.
func dotRowsQ5(t Type, n int, w, act []byte, out []float32) {
	xsize, ysize, mins, dot := q5Format(t)
	nb := n / qk
	rowBytes := nb * xsize
	if n > dotRowsMaxCols || nb == 0 {
		dotRows(dot, n, rowBytes, w, act, out)
		return
	}
	w = w[:len(out)*rowBytes]
	var yp [2 * dotRowsMaxCols]byte
	var dy, sy [dotRowsMaxCols / qk]float32
	prepareQ5(yp[:], dy[:], sy[:], act, nb, ysize)
	tab := &fp16ToFP32Table[0]
	var acc [q5RowsPerCall * q5Acc]float32
	for r := 0; r < len(out); r += q5RowsPerCall {
		m := min(q5RowsPerCall, len(out)-r)
		x := &w[r*rowBytes]
		switch t {
		case Q5_0:
			q5_0RowsAcc(x, &yp[0], &dy[0], &sy[0], tab, nb, m, &acc[0])
		case Q5_1:
			q5_1RowsAcc(x, &yp[0], &dy[0], &sy[0], tab, nb, m, &acc[0])
		default:
			q4_1RowsAcc(x, &yp[0], &dy[0], &sy[0], tab, nb, m, &acc[0])
		}
		for i := range m {
			out[r+i] = q5Result(acc[i*q5Acc:], mins)
		}
	}
}

// dotRowsNQ5 is the DotRowsN kernel of Q5_0, Q5_1 and Q4_1: as many
// activations split at a time as dotRowsNPrep bytes hold (up to MaxDotN),
// then each row's blocks decoded once against all of them; rows too long
// for one activation in the buffer take the Dot.
func dotRowsNQ5(t Type, n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	xsize, ysize, mins, dot := q5Format(t)
	nb := n / qk
	rowBytes := nb * xsize
	const maxBlocks = dotRowsNPrep / 64
	if nb == 0 || nb > maxBlocks {
		matMul(dot, n, rowBytes, w, acts, outs, at)
		return
	}
	rows := len(w) / rowBytes
	w = w[:rows*rowBytes]
	tab := &fp16ToFP32Table[0]
	var yp [dotRowsNPrep]byte
	var dy, sy [maxBlocks]float32
	var acc [MaxDotN * q5Acc]float32
	var wd [32]int16 // a block's weights 16..31, split
	for len(acts) > 0 {
		k := min(len(acts), MaxDotN, maxBlocks/nb)
		for i, a := range acts[:k] {
			prepareQ5(yp[i*nb*64:], dy[i*nb:], sy[i*nb:], a, nb, ysize)
		}
		for r := range rows {
			clear(acc[:k*q5Acc])
			x := &w[r*rowBytes]
			switch t {
			case Q5_0:
				q5_0RowAccN(x, &yp[0], &dy[0], &sy[0], tab, nb, k, &acc[0], &wd)
			case Q5_1:
				q5_1RowAccN(x, &yp[0], &dy[0], &sy[0], tab, nb, k, &acc[0], &wd)
			default:
				q4_1RowAccN(x, &yp[0], &dy[0], &sy[0], tab, nb, k, &acc[0], &wd)
			}
			for i := range k {
				outs[i][at+r] = q5Result(acc[i*q5Acc:], mins)
			}
		}
		acts, outs = acts[k:], outs[k:]
	}
}

func dotRowsQ5_0SIMD128(n int, w, act []byte, out []float32) { dotRowsQ5(Q5_0, n, w, act, out) }
func dotRowsQ5_1SIMD128(n int, w, act []byte, out []float32) { dotRowsQ5(Q5_1, n, w, act, out) }
func dotRowsQ4_1SIMD128(n int, w, act []byte, out []float32) { dotRowsQ5(Q4_1, n, w, act, out) }

func dotRowsNQ5_0SIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	dotRowsNQ5(Q5_0, n, w, acts, outs, at)
}
func dotRowsNQ5_1SIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	dotRowsNQ5(Q5_1, n, w, acts, outs, at)
}
func dotRowsNQ4_1SIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	dotRowsNQ5(Q4_1, n, w, acts, outs, at)
}

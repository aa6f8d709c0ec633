//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"math"
)

// The wasm SIMD128 DotRows and DotRowsN kernels of Q5_0, Q5_1 and Q4_1
// (kernels_wasm.go; their Dot kernels are in q5_wasm.go): the activations
// are prepared once per call (q5Prep), then the asm (q5rows_wasm.s) sums
// each row as its Dot sums it, in ggml's x86 order with the exact fused
// multiply-adds, into eight float32 lanes and (Q5_1, Q4_1) the min sum;
// hsumX86 of the lanes plus that sum is the Dot's result. DotRows decodes
// each weight block as it goes; DotRowsN decodes a row once and sums it
// against every activation. The same drivers run the relaxed-SIMD kernels
// (relaxed true; q5rows_relaxed_wasm.go), whose activations are prepared
// by q5PrepRelaxed and need no ratio: their fused multiply-adds are
// f32x4.relaxed_madd.

//go:noescape
func q5Prep(dst, src *byte, tab *float32, nb, ysize int)

//go:noescape
func q5_0RowsF(x, yp *byte, tab *float32, nb, rows int, out *float32, ry float64)

//go:noescape
func q5_1RowsF(x, yp *byte, tab *float32, nb, rows int, out *float32, ry float64)

//go:noescape
func q4_1RowsF(x, yp *byte, tab *float32, nb, rows int, out *float32, ry float64)

//go:noescape
func q5_0RowNF(x, yp *byte, tab *float32, nb, k int, out *float32, wd *byte, ry *float64)

//go:noescape
func q5_1RowNF(x, yp *byte, tab *float32, nb, k int, out *float32, wd *byte, ry *float64)

//go:noescape
func q4_1RowNF(x, yp *byte, tab *float32, nb, k int, out *float32, wd *byte, ry *float64)

// q5Block is the bytes of a prepared activation block or a decoded weight
// block: 32 int16, then two float32 (dy and s, or dx and m).
const q5Block = 72

// q5BlockRelaxed is the bytes of a block prepared or decoded for the
// relaxed-SIMD kernels (q5rows_relaxed_wasm.s).
const q5BlockRelaxed = 80

// q5MaxBlocks is the longest row (in blocks) the kernels prepare on the
// stack; longer rows take the Dot.
const q5MaxBlocks = dotRowsMaxCols / qk

// q5QuadBytes is the bytes of a quad block prepared for the relaxed-SIMD
// DotRowsN kernels (q5PrepQuadRelaxed) from Q8_0 (ysize 34: with Q5_0's
// offsets) or Q8_1 activations.
func q5QuadBytes(ysize int) int {
	if ysize == q8_0Bytes {
		return 288
	}
	return 160
}

// q5WdRelaxed is the bytes of a weight block decoded for them.
const q5WdRelaxed = 144

// q5QuadAcc is the room of a quad's sums in their results: the eight
// lanes, then the min sums, each a vector of the four activations.
const q5QuadAcc = 36

// q5ResultQuad is q5Result of activation l of a quad whose sums are acc.
func q5ResultQuad(acc []float32, l int, mins bool) float32 {
	acc = acc[:q5QuadAcc]
	var lanes [8]float32
	for k := range lanes {
		lanes[k] = acc[4*k+l]
	}
	s := hsumX86(&lanes)
	if mins {
		s += acc[32+l]
	}
	return s
}

// q5Acc is the room of one row's (or activation's) sums: 8 lanes, the
// min sum, padding.
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

// q5Ratio returns Σ|dy| / min|dy| over the nonzero scales dy of the
// prepared activation blocks in yp (0 if all are zero, +Inf if one is not
// finite): the asm's test of whether a row's fast sums are exact
// (ROWRATIO in q5rows_wasm.s) multiplies it by the row's max|dx|.
func q5Ratio(yp []byte) float64 {
	var sum float64
	mn := math.Inf(1)
	for b := 0; b+q5Block <= len(yp); b += q5Block {
		d := math.Abs(float64(math.Float32frombits(binary.LittleEndian.Uint32(yp[b+64:]))))
		sum += d
		if d != 0 && d < mn {
			mn = d
		}
	}
	switch {
	case sum == 0:
		return 0
	case math.IsInf(sum, 0) || math.IsNaN(sum):
		return math.Inf(1)
	}
	return sum / mn
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
// prepared once, then q5RowsPerCall rows per asm call (the relaxed-SIMD
// kernels where relaxed).
func dotRowsQ5(t Type, relaxed bool, n int, w, act []byte, out []float32) {
	xsize, ysize, mins, dot := q5Format(t)
	nb := n / qk
	rowBytes := nb * xsize
	if nb > q5MaxBlocks || nb == 0 {
		dotRows(dot, n, rowBytes, w, act, out)
		return
	}
	w, act = w[:len(out)*rowBytes], act[:nb*ysize]
	tab := &fp16ToFP32Table[0]
	var yp [q5MaxBlocks * q5BlockRelaxed]byte
	var ry float64
	if relaxed {
		q5PrepRelaxed(&yp[0], &act[0], tab, nb, ysize)
	} else {
		q5Prep(&yp[0], &act[0], tab, nb, ysize)
		ry = q5Ratio(yp[:nb*q5Block])
	}
	var acc [q5RowsPerCall * q5Acc]float32
	for r := 0; r < len(out); r += q5RowsPerCall {
		m := min(q5RowsPerCall, len(out)-r)
		x := &w[r*rowBytes]
		switch {
		case relaxed:
			q5RowsRelaxed(t, x, &yp[0], tab, nb, m, &acc[0])
		case t == Q5_0:
			q5_0RowsF(x, &yp[0], tab, nb, m, &acc[0], ry)
		case t == Q5_1:
			q5_1RowsF(x, &yp[0], tab, nb, m, &acc[0], ry)
		default:
			q4_1RowsF(x, &yp[0], tab, nb, m, &acc[0], ry)
		}
		for i := range m {
			out[r+i] = q5Result(acc[i*q5Acc:], mins)
		}
	}
}

// dotRowsNQ5 is the DotRowsN kernel of Q5_0, Q5_1 and Q4_1: as many
// activations prepared at a time as dotRowsNPrep bytes hold (up to
// MaxDotN), then each row decoded once and summed against all of them.
// The relaxed-SIMD kernels (relaxed) take the activations four at a time
// in the lanes of a vector (quads, q5PrepQuadRelaxed; a short quad repeats
// its last activation), rows up to q5QuadMaxBlocks blocks long.
func dotRowsNQ5(t Type, relaxed bool, n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	xsize, ysize, mins, dot := q5Format(t)
	nb := n / qk
	rowBytes := nb * xsize
	if nb == 0 || nb > q5MaxBlocks {
		matMul(dot, n, rowBytes, w, acts, outs, at)
		return
	}
	qb := q5QuadBytes(ysize)
	relaxed = relaxed && nb <= dotRowsNPrep/qb
	rows := len(w) / rowBytes
	w = w[:rows*rowBytes]
	tab := &fp16ToFP32Table[0]
	var yp [dotRowsNPrep]byte
	var wd [q5MaxBlocks * q5WdRelaxed]byte
	var acc [MaxDotN * q5Acc]float32
	var ry [MaxDotN]float64
	for len(acts) > 0 {
		var k, quads int
		if relaxed {
			quads = min((len(acts)+3)/4, MaxDotN/4, len(yp)/(nb*qb))
			k = min(len(acts), 4*quads)
			for q := range quads {
				var ys [4]*byte
				for l := range ys {
					ys[l] = &acts[min(4*q+l, k-1)][:nb*ysize][0]
				}
				q5PrepQuadRelaxed(&yp[q*nb*qb], &ys, tab, nb, ysize)
			}
		} else {
			k = min(len(acts), MaxDotN, len(yp)/(nb*q5Block))
			for i, a := range acts[:k] {
				q5Prep(&yp[i*nb*q5Block], &a[:nb*ysize][0], tab, nb, ysize)
				ry[i] = q5Ratio(yp[i*nb*q5Block : (i+1)*nb*q5Block])
			}
		}
		for r := range rows {
			x := &w[r*rowBytes]
			switch {
			case relaxed:
				q5RowNRelaxed(t, x, &yp[0], tab, nb, quads, &acc[0], &wd[0])
				for i := range k {
					outs[i][at+r] = q5ResultQuad(acc[i/4*q5QuadAcc:], i%4, mins)
				}
				continue
			case t == Q5_0:
				q5_0RowNF(x, &yp[0], tab, nb, k, &acc[0], &wd[0], &ry[0])
			case t == Q5_1:
				q5_1RowNF(x, &yp[0], tab, nb, k, &acc[0], &wd[0], &ry[0])
			default:
				q4_1RowNF(x, &yp[0], tab, nb, k, &acc[0], &wd[0], &ry[0])
			}
			for i := range k {
				outs[i][at+r] = q5Result(acc[i*q5Acc:], mins)
			}
		}
		acts, outs = acts[k:], outs[k:]
	}
}

func dotRowsQ5_0SIMD128(n int, w, act []byte, out []float32) { dotRowsQ5(Q5_0, false, n, w, act, out) }
func dotRowsQ5_1SIMD128(n int, w, act []byte, out []float32) { dotRowsQ5(Q5_1, false, n, w, act, out) }
func dotRowsQ4_1SIMD128(n int, w, act []byte, out []float32) { dotRowsQ5(Q4_1, false, n, w, act, out) }

func dotRowsNQ5_0SIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	dotRowsNQ5(Q5_0, false, n, w, acts, outs, at)
}
func dotRowsNQ5_1SIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	dotRowsNQ5(Q5_1, false, n, w, acts, outs, at)
}
func dotRowsNQ4_1SIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	dotRowsNQ5(Q4_1, false, n, w, acts, outs, at)
}

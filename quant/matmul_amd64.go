//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"simd/archsimd"
)

// The native AVX2 DotRowsN kernels of Q4_0 and Q8_0: consecutive weight
// rows against up to MaxDotN Q8_0 activations, bit-identical to Dot.
//
// A row's terms must be added one by one in block order (the reference's
// running sum). Here the activations are in the lanes: eight activations'
// running sums of a row are one float32 vector, so one vector addition per
// block serves eight of them. Per block, each activation's integer sum is
// taken with VPMADDUBSW and the eight results reduced together so that
// lane k holds activation k's sum; the activations' scales (and Q4_0's
// 8·Σy) are prepared once per call in the same [block][activation] layout,
// and each weight block is decoded once per row for all activations.
//
// The VNNI kernels (for CPUs with AVX512-VNNI) run the rows in
// matmul_vnni_amd64.s instead: its
// VPDPBUSD adds four u8·s8 products to an int32 lane, exactly, so a row's
// quants (made unsigned) meet the activations in a transposed layout and
// every lane's sum comes out in place, with no horizontal additions.

// batchBlocks is how many blocks of the activations a DotRowsN kernel
// prepares at a time (2048 columns: 40 KB; spans of 32 blocks measured no
// faster); longer rows are done in spans of batchBlocks blocks, each row's
// running sums kept in outs between spans.
const batchBlocks = 64

// batchQ8_0 holds a span of a batch of Q8_0 activations prepared for the
// DotRowsN kernels: block j of activation i has its quants at q[j][i] (or
// transposed, see prepare), its scale at fy[j][i] and the Σy its kernel
// needs at sy[j][i]; lanes past the batch repeat its last activation.
type batchQ8_0 struct {
	q  [batchBlocks][MaxDotN][qk]int8
	fy [batchBlocks][MaxDotN]float32
	sy [batchBlocks][MaxDotN]int32
}

// How prepare lays out the activations, for which kernel.
const (
	prepQ4_0  = iota // q[j][i] the quants, sy 8·Σy (q4_0RowN16)
	prepQ8_0         // q[j][i] the quants, no -128 (q8_0RowN16)
	prepVNNI4        // transposed, sy 8·Σy (q4_0RowVNNI)
	prepVNNI8        // transposed, sy 128·Σy (q8_0RowVNNI)
)

// prepare fills b with blocks [j0, j0+nb) of the activations acts, laid
// out for kind. In the transposed layout (VNNI), vector 8·(i/8)+e of block
// j holds quants 4e..4e+3 of activation i in dword i%8. For prepQ8_0 it
// reports false if an activation quant is -128 (VPSIGNB of -128 overflows;
// quantizeQ8_0 never makes one).
func (b *batchQ8_0) prepare(acts [][]byte, j0, nb, kind int) bool {
	m128 := archsimd.BroadcastInt8x32(-128)
	ones := archsimd.BroadcastInt16x16(1)
	off := archsimd.BroadcastUint8x32(8)
	if kind == prepVNNI8 {
		off = archsimd.BroadcastUint8x32(128) // VPMADDUBSW's pairs stay below 2^15 in magnitude
	}
	last := len(acts) - 1
	for i := range MaxDotN {
		a := acts[min(i, last)][j0*q8_0Bytes : (j0+nb)*q8_0Bytes]
		for j := range nb {
			y := (*[q8_0Bytes]byte)(a[j*q8_0Bytes:])
			v := load32((*[32]byte)(y[2:])).BitsToInt8()
			b.fy[j][i] = FP16ToFP32(binary.LittleEndian.Uint16(y[:]))
			switch kind {
			case prepQ8_0:
				if v.Equal(m128).ToBits() != 0 {
					return false
				}
				v.StoreArray(&b.q[j][i])
				continue
			case prepQ4_0:
				v.StoreArray(&b.q[j][i])
			default:
				t := &b.q[j]
				for e := range 8 {
					d := (*[4]int8)(t[i/8*8+e][i%8*4:])
					d[0], d[1], d[2], d[3] = int8(y[2+4*e]), int8(y[3+4*e]), int8(y[4+4*e]), int8(y[5+4*e])
				}
			}
			// Σ off·y (with off 128 a pair sum is at most 2·128·127 and at
			// least -2^15: VPMADDUBSW does not saturate)
			b.sy[j][i] = hsum8(off.DotProductPairsSaturated(v).DotProductPairs(ones))
		}
	}
	return true
}

// dotRowsNQ4_0AVX2 is dotQ4_0AVX2 for rows × activations.
func dotRowsNQ4_0AVX2(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	matMulQ8_0Acts(prepQ4_0, n, w, acts, outs, at)
}

// dotRowsNQ8_0AVX2 is dotQ8_0AVX2 for rows × activations. When no
// activation quant is -128 (always, for activations quantized by
// quantizeQ8_0), a block's products are VPMADDUBSW's of |x| and y·sign(x):
// each pair sum is at most 2·128·127 in magnitude, clear of saturation.
func dotRowsNQ8_0AVX2(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	matMulQ8_0Acts(prepQ8_0, n, w, acts, outs, at)
}

// dotRowsNQ4_0VNNI is dotRowsNQ4_0AVX2 with the rows in
// matmul_vnni_amd64.s.
func dotRowsNQ4_0VNNI(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	matMulQ8_0Acts(prepVNNI4, n, w, acts, outs, at)
}

// dotRowsNQ8_0VNNI is dotRowsNQ8_0AVX2 with the rows in
// matmul_vnni_amd64.s.
func dotRowsNQ8_0VNNI(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	matMulQ8_0Acts(prepVNNI8, n, w, acts, outs, at)
}

// matMulQ8_0Acts runs the DotRowsN kernel of the weight type and
// instructions kind stands for (Q4_0 weights for prepQ4_0 and prepVNNI4,
// Q8_0 for the others) over the rows of w, in spans of batchBlocks blocks.
func matMulQ8_0Acts(kind, n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qk
	size := q8_0Bytes
	if kind == prepQ4_0 || kind == prepVNNI4 {
		size = q4_0Bytes
	}
	rowBytes := nb * size
	if len(acts) == 0 {
		return
	}
	var b batchQ8_0
	for j0 := 0; j0 < nb; j0 += batchBlocks {
		m := min(batchBlocks, nb-j0)
		if !b.prepare(acts, j0, m, kind) { // an activation quant is -128
			// DotN row by row instead (overwriting the sums made so far)
			eachRow(dotNQ8_0AVX2, rowBytes, n, w, acts, outs, at)
			return
		}
		for r := 0; (r+1)*rowBytes <= len(w); r++ {
			x := w[r*rowBytes+j0*size : r*rowBytes+(j0+m)*size]
			sums := spanSums(outs, at+r, j0)
			switch kind {
			case prepVNNI4:
				q4_0RowVNNI(&x[0], m, &b, &sums, nextSpan(w, r, rowBytes, j0*size))
			case prepVNNI8:
				q8_0RowVNNI(&x[0], m, &b, &sums, nextSpan(w, r, rowBytes, j0*size))
			default:
				lo, hi := archsimd.LoadFloat32x8Array((*[8]float32)(sums[:8])), archsimd.LoadFloat32x8Array((*[8]float32)(sums[8:]))
				if kind == prepQ4_0 {
					lo, hi = q4_0RowN16(lo, hi, x, &b, len(acts) > 8)
				} else {
					lo, hi = q8_0RowN16(lo, hi, x, &b, len(acts) > 8)
				}
				lo.StoreArray((*[8]float32)(sums[:8]))
				hi.StoreArray((*[8]float32)(sums[8:]))
			}
			putSums(outs, at+r, &sums)
		}
	}
}

// spanSums returns row r's running sums for a span of its blocks starting
// at block j0: zero for the first, else what the spans before it left in
// outs[i][r].
func spanSums(outs [][]float32, r, j0 int) (sums [MaxDotN]float32) {
	if j0 > 0 {
		for i := range outs {
			sums[i] = outs[i][r]
		}
	}
	return sums
}

// putSums sets outs[i][r] to sums[i].
func putSums(outs [][]float32, r int, sums *[MaxDotN]float32) {
	for i := range outs {
		outs[i][r] = sums[i]
	}
}

// nextSpan returns where row r+1's span (at byte off of a row) starts in w,
// for a kernel to prefetch while it runs row r's (row r's own on the last
// row).
func nextSpan(w []byte, r, rowBytes, off int) *byte {
	if (r+2)*rowBytes <= len(w) {
		r++
	}
	return &w[r*rowBytes+off]
}

// q4_0RowVNNI and q8_0RowVNNI (matmul_vnni_amd64.s) add to acc the terms
// of the nb blocks of the row at x and of the sixteen activations of b
// (prepared as prepVNNI4, prepVNNI8), block by block, as q4_0RowN16 and
// q8_0RowN16 do, and prefetch the blocks at next (the next row's: without
// it, the loads of each row's first blocks wait on memory).
//
//go:noescape
func q4_0RowVNNI(x *byte, nb int, b *batchQ8_0, acc *[MaxDotN]float32, next *byte)

//go:noescape
func q8_0RowVNNI(x *byte, nb int, b *batchQ8_0, acc *[MaxDotN]float32, next *byte)

// q4_0RowN16 returns lo and hi plus, in lane k, the terms of the blocks
// of the Q4_0 row x and of activation k (lo) and 8+k (hi) of b, added one
// by one as dotQ4_0AVX2 adds them; with !both, hi is returned unchanged.
//
//go:noinline
func q4_0RowN16(lo, hi archsimd.Float32x8, x []byte, b *batchQ8_0, both bool) (archsimd.Float32x8, archsimd.Float32x8) {
	m4 := archsimd.BroadcastUint8x16(0x0f)
	for j := range len(x) / q4_0Bytes {
		xb := (*[q4_0Bytes]byte)(x[j*q4_0Bytes:])
		qv := load16((*[16]byte)(xb[2:]))
		var q archsimd.Uint8x32 // the low nibbles, then the high ones
		q = q.SetLo(qv.And(m4)).SetHi(qv.ReshapeToUint16s().ShiftAllRight(4).ReshapeToUint8s().And(m4))
		d := archsimd.BroadcastFloat32x8(halfToFloat(binary.LittleEndian.Uint16(xb[:])))
		y := &b.q[j]
		p := func(k int) archsimd.Int16x16 { return q.DotProductPairsSaturated(archsimd.LoadInt8x32Array(&y[k])) }
		// VPHADDW thrice: per 128-bit half, lane k the sum of activation
		// k's eight pair sums there (|·| ≤ 8·3840 < 2^15)
		h := p(0).ConcatAddPairsGrouped(p(1)).ConcatAddPairsGrouped(p(2).ConcatAddPairsGrouped(p(3))).
			ConcatAddPairsGrouped(p(4).ConcatAddPairsGrouped(p(5)).ConcatAddPairsGrouped(p(6).ConcatAddPairsGrouped(p(7))))
		s := h.GetLo().ExtendToInt32().Add(h.GetHi().ExtendToInt32()).Sub(archsimd.LoadInt32x8Array((*[8]int32)(b.sy[j][:8])))
		lo = lo.Add(s.ConvertToFloat32().Mul(d.Mul(archsimd.LoadFloat32x8Array((*[8]float32)(b.fy[j][:8])))))
		if !both {
			continue
		}
		h = p(8).ConcatAddPairsGrouped(p(9)).ConcatAddPairsGrouped(p(10).ConcatAddPairsGrouped(p(11))).
			ConcatAddPairsGrouped(p(12).ConcatAddPairsGrouped(p(13)).ConcatAddPairsGrouped(p(14).ConcatAddPairsGrouped(p(15))))
		s = h.GetLo().ExtendToInt32().Add(h.GetHi().ExtendToInt32()).Sub(archsimd.LoadInt32x8Array((*[8]int32)(b.sy[j][8:])))
		hi = hi.Add(s.ConvertToFloat32().Mul(d.Mul(archsimd.LoadFloat32x8Array((*[8]float32)(b.fy[j][8:])))))
	}
	return lo, hi
}

// q8_0RowN16 is q4_0RowN16 for a Q8_0 row x (no quant of b is -128).
//
//go:noinline
func q8_0RowN16(lo, hi archsimd.Float32x8, x []byte, b *batchQ8_0, both bool) (archsimd.Float32x8, archsimd.Float32x8) {
	ones := archsimd.BroadcastInt16x16(1)
	for j := range len(x) / q8_0Bytes {
		xb := (*[q8_0Bytes]byte)(x[j*q8_0Bytes:])
		xv := load32((*[32]byte)(xb[2:])).BitsToInt8()
		ax := xv.Abs().ToBits()
		d := archsimd.BroadcastFloat32x8(halfToFloat(binary.LittleEndian.Uint16(xb[:])))
		y := &b.q[j]
		p := func(k int) archsimd.Int32x8 {
			return ax.DotProductPairsSaturated(archsimd.LoadInt8x32Array(&y[k]).MulSign(xv)).DotProductPairs(ones)
		}
		s := hsum8x8(p(0), p(1), p(2), p(3), p(4), p(5), p(6), p(7))
		lo = lo.Add(s.ConvertToFloat32().Mul(d.Mul(archsimd.LoadFloat32x8Array((*[8]float32)(b.fy[j][:8])))))
		if !both {
			continue
		}
		s = hsum8x8(p(8), p(9), p(10), p(11), p(12), p(13), p(14), p(15))
		hi = hi.Add(s.ConvertToFloat32().Mul(d.Mul(archsimd.LoadFloat32x8Array((*[8]float32)(b.fy[j][8:])))))
	}
	return lo, hi
}

//go:build goexperiment.simd && amd64

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

// batchBlocks is how many blocks of the activations a DotRowsN kernel
// prepares at a time (2048 columns of Q8_0: 36 KB, in L1 with a row's
// blocks); longer rows are done in spans of batchBlocks blocks, each row's
// running sums kept in outs between spans.
const batchBlocks = 64

// batchQ8_0 holds a span of a batch of Q8_0 activations prepared for the
// DotRowsN kernels: block j of activation i has its quants at q[j][i], its
// scale at fy[j][i] and 8·Σy at sy[j][i]; lanes past the batch repeat its
// last activation.
type batchQ8_0 struct {
	q  [batchBlocks][MaxDotN][qk]int8
	fy [batchBlocks][MaxDotN]float32
	sy [batchBlocks][MaxDotN]int32
}

// prepare fills b with blocks [j0, j0+nb) of the activations acts; with
// sums, 8·Σy too. It reports false if an activation quant is -128
// (VPSIGNB of -128 overflows; quantizeQ8_0 never makes one).
func (b *batchQ8_0) prepare(acts [][]byte, j0, nb int, sums bool) bool {
	m128 := archsimd.BroadcastInt8x32(-128)
	eight, ones := archsimd.BroadcastUint8x32(8), archsimd.BroadcastInt16x16(1)
	last := len(acts) - 1
	for i := range MaxDotN {
		if i > last {
			for j := range nb {
				b.q[j][i], b.fy[j][i], b.sy[j][i] = b.q[j][last], b.fy[j][last], b.sy[j][last]
			}
			continue
		}
		a := acts[i][j0*q8_0Bytes : (j0+nb)*q8_0Bytes]
		for j := range nb {
			y := (*[q8_0Bytes]byte)(a[j*q8_0Bytes:])
			v := load32((*[32]byte)(y[2:])).BitsToInt8()
			if !sums && v.Equal(m128).ToBits() != 0 {
				return false
			}
			v.StoreArray(&b.q[j][i])
			b.fy[j][i] = FP16ToFP32(binary.LittleEndian.Uint16(y[:]))
			if sums {
				b.sy[j][i] = hsum8(eight.DotProductPairsSaturated(v).DotProductPairs(ones))
			}
		}
	}
	return true
}

// dotRowsNQ4_0 is dotQ4_0 for rows × activations.
func dotRowsNQ4_0(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qk
	rowBytes := nb * q4_0Bytes
	if !hasAVX2 || len(acts) == 0 {
		eachRowQ4_0(n, w, acts, outs, at)
		return
	}
	var b batchQ8_0
	for j0 := 0; j0 < nb; j0 += batchBlocks {
		m := min(batchBlocks, nb-j0)
		b.prepare(acts, j0, m, true)
		for r := 0; (r+1)*rowBytes <= len(w); r++ {
			x := w[r*rowBytes+j0*q4_0Bytes : r*rowBytes+(j0+m)*q4_0Bytes]
			var sums [MaxDotN]float32
			if j0 > 0 {
				for i := range acts {
					sums[i] = outs[i][at+r]
				}
			}
			lo, hi := archsimd.LoadFloat32x8Array((*[8]float32)(sums[:8])), archsimd.LoadFloat32x8Array((*[8]float32)(sums[8:]))
			lo, hi = q4_0RowN16(lo, hi, x, &b, len(acts) > 8)
			lo.StoreArray((*[8]float32)(sums[:8]))
			hi.StoreArray((*[8]float32)(sums[8:]))
			for i := range acts {
				outs[i][at+r] = sums[i]
			}
		}
	}
}

// q4_0RowN16 returns lo and hi plus, in lane k, the terms of the blocks
// of the Q4_0 row x and of activation k (lo) and 8+k (hi) of b, added one
// by one as dotQ4_0 adds them; with !both, hi is returned unchanged.
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

// dotRowsNQ8_0 is dotQ8_0 for rows × activations. When no activation
// quant is -128 (always, for activations quantized by quantizeQ8_0), a
// block's products are VPMADDUBSW's of |x| and y·sign(x): each pair sum is
// at most 2·128·127 in magnitude, clear of saturation.
func dotRowsNQ8_0(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qk
	rowBytes := nb * q8_0Bytes
	if !hasAVX2 || len(acts) == 0 {
		eachRowQ8_0(n, w, acts, outs, at)
		return
	}
	var b batchQ8_0
	for j0 := 0; j0 < nb; j0 += batchBlocks {
		m := min(batchBlocks, nb-j0)
		if !b.prepare(acts, j0, m, false) {
			eachRowQ8_0(n, w, acts, outs, at) // (overwrites every sum made so far)
			return
		}
		for r := 0; (r+1)*rowBytes <= len(w); r++ {
			x := w[r*rowBytes+j0*q8_0Bytes : r*rowBytes+(j0+m)*q8_0Bytes]
			var sums [MaxDotN]float32
			if j0 > 0 {
				for i := range acts {
					sums[i] = outs[i][at+r]
				}
			}
			lo, hi := archsimd.LoadFloat32x8Array((*[8]float32)(sums[:8])), archsimd.LoadFloat32x8Array((*[8]float32)(sums[8:]))
			lo, hi = q8_0RowN16(lo, hi, x, &b, len(acts) > 8)
			lo.StoreArray((*[8]float32)(sums[:8]))
			hi.StoreArray((*[8]float32)(sums[8:]))
			for i := range acts {
				outs[i][at+r] = sums[i]
			}
		}
	}
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

//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"math"
	"simd/archsimd"
)

// The AVX2 kernel of Q6_K (kernels_amd64.go); dotQ6_KGo in q6_k.go is its
// portable twin.

// dotQ6_KAVX2 computes the same as dotQ6_KRef, bit for bit, for activations
// made by the Q8_K quantizer (whose block sums are the sums of its quants):
// the unsigned quants q (0..63) times int8 activations go through
// VPMADDUBSW (pairs at most 2·63·128 = 16128) and VPMADDWD with the
// sub-block scales, and the offset is taken off once per block as
// 32·Σ scale·bsum; all of it is exact int32 arithmetic, so the sum equals
// the reference's Σ scale·Σ (q-32)·y. The integer sums of four blocks are
// reduced together and scaled in float32 lanes (the reference's operations,
// lane by lane); only the running sum is added block by block.
func dotQ6_KAVX2(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q6_KBytes], act[:nb*q8_KBytes]
	m4, m30 := archsimd.BroadcastUint8x32(0x0f), archsimd.BroadcastUint8x32(0x30)
	scm := q6KScaleShuffles()
	// blk returns block x·y's scaled sums and Σ scale·bsum, pairwise added
	// (lanes 0, 1, 4, 5: scaled sums), the block's fp16 d and the
	// activation's scale.
	blk := func(x *[q6_KBytes]byte, yb *[q8_KBytes]byte) (archsimd.Int32x8, uint16, float32) {
		scv := load16((*[16]byte)(x[192:])).BitsToInt8().ExtendToInt16() // the 16 scales
		var acc archsimd.Int32x8
		for h := range 2 { // 128 weights: ql[64h:64h+64], qh[32h:32h+32]
			y := (*[128]byte)(yb[4+128*h:])
			sc := scv.ConcatPermute128Scalars(0, 0, scv)
			if h == 1 {
				sc = scv.ConcatPermute128Scalars(1, 1, scv)
			}
			// lanes < 16 of quants k: sub-block 2k, lanes >= 16: sub-block 2k+1
			d := func(q archsimd.Uint8x32, k int) archsimd.Int32x8 {
				return q.DotProductPairsSaturated(load32((*[32]byte)(y[32*k:])).BitsToInt8()).DotProductPairs(sc.AsInt8x32().PermuteOrZeroGrouped(scm[k]).AsInt16x16())
			}
			q0, q1, q2, q3 := q6KQuants(x, h, m4, m30)
			acc = acc.Add(d(q0, 0).Add(d(q1, 1)).Add(d(q2, 2).Add(d(q3, 3))))
		}
		// Σ scale·bsum: 32 times it is the offset of the quants
		bs := load32((*[32]byte)(yb[4+qkK:])).AsInt16x16()
		return acc.ConcatAddPairsGrouped(bs.DotProductPairs(scv)), binary.LittleEndian.Uint16(x[208:]), math.Float32frombits(binary.LittleEndian.Uint32(yb[:]))
	}
	var (
		zero archsimd.Int32x8
		sums [8]int32
	)
	shift := archsimd.LoadUint32x8Array(&q6KOffsetShift)
	one := archsimd.BroadcastUint16x8(0x3c00) // fp16 1.0
	var sum float32
	b := 0
	for ; b+4 <= nb; b += 4 {
		xg := (*[4 * q6_KBytes]byte)(w[b*q6_KBytes:])
		yg := (*[4 * q8_KBytes]byte)(act[b*q8_KBytes:])
		p0, h0, y0 := blk((*[q6_KBytes]byte)(xg[0:]), (*[q8_KBytes]byte)(yg[0:]))
		p1, h1, y1 := blk((*[q6_KBytes]byte)(xg[q6_KBytes:]), (*[q8_KBytes]byte)(yg[q8_KBytes:]))
		p2, h2, y2 := blk((*[q6_KBytes]byte)(xg[2*q6_KBytes:]), (*[q8_KBytes]byte)(yg[2*q8_KBytes:]))
		p3, h3, y3 := blk((*[q6_KBytes]byte)(xg[3*q6_KBytes:]), (*[q8_KBytes]byte)(yg[3*q8_KBytes:]))
		// lanes 2j, 2j+1: the sum and Σ scale·bsum of block j; sum - 32·that
		// (the reference's isum) in lanes 0, 1 (blocks 0, 1) and 4, 5 (2, 3)
		sv := hsum4x2x8(p0, p1, p2, p3).ShiftLeft(shift)
		isum := sv.ConcatSubPairsGrouped(sv)
		// the block scales and activation scales in the same lanes, built
		// in registers (stores and a wide load would stall)
		hv := one.SetElem(0, h0).SetElem(1, h1).SetElem(4, h2).SetElem(5, h3)
		var ylo, yhi archsimd.Float32x4
		ylo, yhi = ylo.SetElem(0, y0).SetElem(1, y1), yhi.SetElem(0, y2).SetElem(1, y3)
		var yd archsimd.Float32x8
		yd = yd.SetLo(ylo).SetHi(yhi)
		f, ok := halvesToFloats(hv.ExtendToUint32())
		if !ok { // a zero, subnormal, infinite or NaN scale
			isum.StoreArray(&sums)
			sum += FP16ToFP32(h0) * y0 * float32(sums[0])
			sum += FP16ToFP32(h1) * y1 * float32(sums[1])
			sum += FP16ToFP32(h2) * y2 * float32(sums[4])
			sum += FP16ToFP32(h3) * y3 * float32(sums[5])
			continue
		}
		sum = addLanes0145(sum, f.Mul(yd).Mul(isum.ConvertToFloat32()))
	}
	for ; b < nb; b++ {
		pb, h, y := blk((*[q6_KBytes]byte)(w[b*q6_KBytes:]), (*[q8_KBytes]byte)(act[b*q8_KBytes:]))
		sv := hsum4x2x8(pb, zero, zero, zero).ShiftLeft(shift)
		sv.ConcatSubPairsGrouped(sv).StoreArray(&sums)
		sum += halfToFloat(h) * y * float32(sums[0])
	}
	return sum
}

// q6KScaleShuffles returns the VPSHUFB patterns k = 0..3 that broadcast
// int16 lane 2k of each 128-bit half to the low half of a vector and lane
// 2k+1 to the high half (q6KScaleShuffle).
func q6KScaleShuffles() (scm [4]archsimd.Int8x32) {
	for k := range scm {
		scm[k] = archsimd.LoadInt8x32Array(&q6KScaleShuffle[k])
	}
	return scm
}

// q6KScaleShuffle: pattern k picks bytes 4k, 4k+1 (int16 lane 2k) in the
// low 128 bits and bytes 4k+2, 4k+3 (lane 2k+1) in the high 128 bits.
var q6KScaleShuffle = [4][32]int8{
	{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3},
	{4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7},
	{8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11},
	{12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15},
}

// q6KOffsetShift multiplies the odd lanes (Σ scale·bsum) by 32: a constant
// table, since a vector loaded from just-stored values stalls.
var q6KOffsetShift = [8]uint32{0, 5, 0, 5, 0, 5, 0, 5}

// q6KQuants returns the unsigned quants (q+32, 0..63) of half h of a Q6_K
// block, 32 at a time in element order: elements 128h+32k.. in result k
// (low 4 bits from the nibbles of ql, high 2 from bits 2k.. of qh).
func q6KQuants(x *[q6_KBytes]byte, h int, m4, m30 archsimd.Uint8x32) (q0, q1, q2, q3 archsimd.Uint8x32) {
	a, c := load32((*[32]byte)(x[64*h:])), load32((*[32]byte)(x[64*h+32:]))
	hb := load32((*[32]byte)(x[128+32*h:])).ReshapeToUint16s()
	return a.And(m4).Or(hb.ShiftAllLeft(4).AsUint8x32().And(m30)),
		c.And(m4).Or(hb.ShiftAllLeft(2).AsUint8x32().And(m30)),
		a.ReshapeToUint16s().ShiftAllRight(4).AsUint8x32().And(m4).Or(hb.AsUint8x32().And(m30)),
		c.ReshapeToUint16s().ShiftAllRight(4).AsUint8x32().And(m4).Or(hb.ShiftAllRight(2).AsUint8x32().And(m30))
}

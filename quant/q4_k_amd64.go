//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"math"
	"simd/archsimd"
)

// The AVX2 kernel of Q4_K (kernels_amd64.go); dotQ4_KGo in q4_k.go is its
// portable twin.

// dotQ4_KAVX2 computes the same as dotQ4_KRef, bit for bit: per 32-weight
// sub-block VPMADDUBSW sums nibble×int8 pairs (at most 2·15·128 = 3840, far
// from saturation) and VPMADDWD multiplies the pairs by the 6-bit scale
// into int32; the mins use the activation's block sums, as in the
// reference. The integer sums of four blocks are reduced together and
// scaled in float32 lanes (the reference's operations, lane by lane); only
// the running sum is added block by block.
func dotQ4_KAVX2(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q4_KBytes], act[:nb*q8_KBytes]
	m4 := archsimd.BroadcastUint8x32(0x0f)
	var scm [8]archsimd.Int8x32 // VPSHUFB patterns broadcasting scale k
	for k := range scm {
		scm[k] = byteBroadcastShuffle(k)
	}
	mnm := archsimd.LoadInt8x32Array(&q4KMinShuffle)
	// blk returns block x·y's scaled sums and min sums, pairwise added
	// (lanes 0, 1, 4, 5: scaled sums, 2, 3, 6, 7: min sums), the block's
	// fp16 d and dmin (in one word) and the activation's scale.
	blk := func(x *[q4_KBytes]byte, yb *[q8_KBytes]byte) (archsimd.Int32x8, uint32, float32) {
		sc, mn := scalesMinsK4Array((*[12]byte)(x[4:]))
		scv := archsimd.BroadcastUint64x4(sc).AsInt8x32()
		s := func(k int) archsimd.Int16x16 { return scv.PermuteOrZeroGrouped(scm[k]).AsInt16x16() }
		acc := q4KPair((*[32]byte)(x[16:]), (*[32]byte)(yb[4:]), (*[32]byte)(yb[36:]), s(0), s(1), m4).Add(
			q4KPair((*[32]byte)(x[48:]), (*[32]byte)(yb[68:]), (*[32]byte)(yb[100:]), s(2), s(3), m4)).Add(
			q4KPair((*[32]byte)(x[80:]), (*[32]byte)(yb[132:]), (*[32]byte)(yb[164:]), s(4), s(5), m4).Add(
				q4KPair((*[32]byte)(x[112:]), (*[32]byte)(yb[196:]), (*[32]byte)(yb[228:]), s(6), s(7), m4)))
		// Σ min·(bsum 2k + bsum 2k+1), exact in int32 like the reference's sum
		mins := archsimd.BroadcastUint64x4(mn).AsInt8x32().PermuteOrZeroGrouped(mnm).AsInt16x16()
		bs := load32((*[32]byte)(yb[4+qkK:])).AsInt16x16()
		return acc.ConcatAddPairsGrouped(bs.DotProductPairs(mins)), binary.LittleEndian.Uint32(x[:]), math.Float32frombits(binary.LittleEndian.Uint32(yb[:]))
	}
	var (
		zero archsimd.Int32x8
		sums [8]int32
	)
	var sum float32
	b := 0
	for ; b+4 <= nb; b += 4 {
		xg := (*[4 * q4_KBytes]byte)(w[b*q4_KBytes:])
		yg := (*[4 * q8_KBytes]byte)(act[b*q8_KBytes:])
		p0, h0, y0 := blk((*[q4_KBytes]byte)(xg[0:]), (*[q8_KBytes]byte)(yg[0:]))
		p1, h1, y1 := blk((*[q4_KBytes]byte)(xg[q4_KBytes:]), (*[q8_KBytes]byte)(yg[q8_KBytes:]))
		p2, h2, y2 := blk((*[q4_KBytes]byte)(xg[2*q4_KBytes:]), (*[q8_KBytes]byte)(yg[2*q8_KBytes:]))
		p3, h3, y3 := blk((*[q4_KBytes]byte)(xg[3*q4_KBytes:]), (*[q8_KBytes]byte)(yg[3*q8_KBytes:]))
		// lanes 2j, 2j+1: isum and summ of block j
		sv := hsum4x2x8(p0, p1, p2, p3)
		// d, dmin of block 0, of block 1, …, and the activation scales to match
		var hw archsimd.Uint32x4 // built in registers: stores and a wide load would stall
		hw = hw.SetElem(0, h0).SetElem(1, h1).SetElem(2, h2).SetElem(3, h3)
		var yv archsimd.Float32x4
		yv = yv.SetElem(0, y0).SetElem(1, y1).SetElem(2, y2).SetElem(3, y3)
		yu := yv.AsUint32x4()
		var yd archsimd.Uint32x8
		yd = yd.SetLo(yu.InterleaveLo(yu)).SetHi(yu.InterleaveHi(yu))
		f, ok := halvesToFloats(hw.AsUint16x8().ExtendToUint32())
		if !ok { // a zero, subnormal, infinite or NaN scale
			sv.StoreArray(&sums)
			for j, hy := range [4]struct {
				h uint32
				y float32
			}{{h0, y0}, {h1, y1}, {h2, y2}, {h3, y3}} {
				d, dmin := FP16ToFP32(uint16(hy.h))*hy.y, FP16ToFP32(uint16(hy.h>>16))*hy.y
				sum += float32(d*float32(sums[2*j])) - float32(dmin*float32(sums[2*j+1]))
			}
			continue
		}
		// lanes 2j, 2j+1: float32(d*float32(isum)), float32(dmin*float32(summ))
		// of block j, with d = fp16(d)·yd and dmin = fp16(dmin)·yd
		p := f.Mul(yd.AsFloat32x8()).Mul(sv.ConvertToFloat32())
		sum = addLanes0145(sum, p.ConcatSubPairsGrouped(p)) // their differences: blocks 0, 1, (0, 1), 2, 3, …
	}
	for ; b < nb; b++ {
		p, h, y := blk((*[q4_KBytes]byte)(w[b*q4_KBytes:]), (*[q8_KBytes]byte)(act[b*q8_KBytes:]))
		hsum4x2x8(p, zero, zero, zero).StoreArray(&sums)
		d, dmin := halfToFloat(uint16(h))*y, halfToFloat(uint16(h>>16))*y
		sum += float32(d*float32(sums[0])) - float32(dmin*float32(sums[1]))
	}
	return sum
}

// q4KPair returns, in int32 lanes, the scaled dots of a 64-weight group:
// the low nibbles of q times ylo with scale slo, plus the high nibbles
// times yhi with scale shi.
func q4KPair(q, ylo, yhi *[32]byte, slo, shi archsimd.Int16x16, m4 archsimd.Uint8x32) archsimd.Int32x8 {
	v := load32(q)
	lo, hi := v.And(m4), v.ReshapeToUint16s().ShiftAllRight(4).AsUint8x32().And(m4)
	a := lo.DotProductPairsSaturated(load32(ylo).BitsToInt8()).DotProductPairs(slo)
	return a.Add(hi.DotProductPairsSaturated(load32(yhi).BitsToInt8()).DotProductPairs(shi))
}

// scalesMinsK4Array is scalesMinsK4 of a fixed-size array (inlined by the
// compiler, without bounds checks).
func scalesMinsK4Array(q *[12]byte) (sc, mn uint64) {
	const low6, low4, top2 = 0x3f3f3f3f, 0x0f0f0f0f, 0x03030303
	u0, u1, u2 := binary.LittleEndian.Uint32(q[:]), binary.LittleEndian.Uint32(q[4:]), binary.LittleEndian.Uint32(q[8:])
	s47 := u2&low4 | (u0>>6&top2)<<4
	m47 := u2>>4&low4 | (u1>>6&top2)<<4
	return uint64(u0&low6) | uint64(s47)<<32, uint64(u1&low6) | uint64(m47)<<32
}

// q4KDecode decodes a Q4_K block for the multi-activation kernels: sub-block
// k's quants (nibbles) in q[k], its 6-bit scale in every int16 lane of
// sc[k] (scm: the byteBroadcastShuffle patterns), and it returns the mins
// in the int16 lanes m0 m0 m1 m1 … (mnm: q4KMinShuffle) that meet the
// activation's bsums.
func q4KDecode(x *[q4_KBytes]byte, q *[8]archsimd.Uint8x32, sc *[8]archsimd.Int16x16, scm *[8]archsimd.Int8x32, mnm archsimd.Int8x32, m4 archsimd.Uint8x32) archsimd.Int16x16 {
	for g := range 4 {
		v := load32((*[32]byte)(x[16+32*g:]))
		q[2*g], q[2*g+1] = v.And(m4), srl(v, 4).And(m4)
	}
	scl, mnl := scalesMinsK4Array((*[12]byte)(x[4:]))
	scv := broadcast64(scl).AsInt8x32()
	for k := range sc {
		sc[k] = scv.PermuteOrZeroGrouped(scm[k]).AsInt16x16()
	}
	return broadcast64(mnl).AsInt8x32().PermuteOrZeroGrouped(mnm).AsInt16x16()
}

// pairedScales returns the four K-block activation scales y0..y3 each
// twice, in lanes 2j and 2j+1 (next to the blocks' d and dmin).
func pairedScales(y0, y1, y2, y3 float32) archsimd.Float32x8 {
	var v archsimd.Float32x4
	u := v.SetElem(0, y0).SetElem(1, y1).SetElem(2, y2).SetElem(3, y3).AsUint32x4()
	var yd archsimd.Uint32x8
	return yd.SetLo(u.InterleaveLo(u)).SetHi(u.InterleaveHi(u)).AsFloat32x8()
}

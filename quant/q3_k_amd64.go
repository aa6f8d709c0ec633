//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"simd/archsimd"
)

// The AVX2 kernels of Q3_K and Q2_K (kernels_amd64.go); dotQ3_KGo and
// dotQ2_KGo are their portable twins.

// dotQ3_KAVX2 computes the same as dotQ3_KRef, bit for bit, with the
// instructions of ggml's x86 kernel: per 32 weights VPMADDUBSW sums the
// low two bits times int8 activations and, apart, 4·(1 - high bit) times
// them (pairs at most 2·4·128, clear of saturation), their difference
// (the quants -4..3) is taken in int16 lanes and VPMADDWD multiplies it by
// the sub-block scales (the first 16 weights' in the low 128 bits, the
// last 16's in the high), which leaves weights 4k..4k+3 of the 32 in
// int32 lane k; the block's lanes are widened and accumulated by VFMADD.
func dotQ3_KAVX2(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q3_KBytes], act[:nb*q8_KBytes]
	scm := q6KScaleShuffles()
	m3, m1 := archsimd.BroadcastUint8x32(3), archsimd.BroadcastUint8x32(1)
	var acc archsimd.Float32x8
	for b := range nb {
		x := (*[q3_KBytes]byte)(w[b*q3_KBytes:])
		yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		sumi := q3KBlockAVX2(x, yb, &scm, m3, m1)
		acc = sumi.ConvertToFloat32().MulAdd(archsimd.BroadcastFloat32x8(f32At(yb[:])*fp16At(x[108:])), acc)
	}
	return hsumX86Vec(acc)
}

// q3KScalesVec returns the 16 scales of a Q3_K block minus 32 in int16
// lanes (q3KScale, four at a time in 32-bit words as ggml does).
func q3KScalesVec(x *[q3_KBytes]byte) archsimd.Int16x16 {
	const low4, top2 = 0x0f0f0f0f, 0x03030303
	a0, a1, a2 := binary.LittleEndian.Uint32(x[96:]), binary.LittleEndian.Uint32(x[100:]), binary.LittleEndian.Uint32(x[104:])
	var u archsimd.Uint32x4
	u = u.SetElem(0, a0&low4|(a2&top2)<<4).SetElem(1, a1&low4|(a2>>2&top2)<<4).
		SetElem(2, a0>>4&low4|(a2>>4&top2)<<4).SetElem(3, a1>>4&low4|(a2>>6&top2)<<4)
	return u.AsUint8x16().BitsToInt8().Sub(archsimd.BroadcastInt8x16(32)).ExtendToInt16()
}

// q3KBlockAVX2 returns the integer lanes of block x·y in ggml's x86 order.
func q3KBlockAVX2(x *[q3_KBytes]byte, yb *[q8_KBytes]byte, scm *[4]archsimd.Int8x32, m3, m1 archsimd.Uint8x32) archsimd.Int32x8 {
	scv := q3KScalesVec(x)
	nh := load32((*[32]byte)(x[:])).Not().ReshapeToUint16s() // the high bits, inverted
	sc0, sc1 := scv.ConcatPermute128Scalars(0, 0, scv).AsInt8x32(), scv.ConcatPermute128Scalars(1, 1, scv).AsInt8x32()
	q0, q1 := load32((*[32]byte)(x[32:])).ReshapeToUint16s(), load32((*[32]byte)(x[64:])).ReshapeToUint16s()
	y := func(i int) archsimd.Int8x32 { return load32((*[32]byte)(yb[4+32*i:])).BitsToInt8() }
	// weights 32i..32i+31 (half i/4: qs[32h:32h+32], bit i of hmask), unrolled
	// so that the shifts take constant counts
	s := q3KPart(q0, nh, y(0), 0, 0, sc0, scm[0], m3, m1).Add(q3KPart(q0, nh, y(1), 2, 1, sc0, scm[1], m3, m1))
	s = s.Add(q3KPart(q0, nh, y(2), 4, 2, sc0, scm[2], m3, m1)).Add(q3KPart(q0, nh, y(3), 6, 3, sc0, scm[3], m3, m1))
	s = s.Add(q3KPart(q1, nh, y(4), 0, 4, sc1, scm[0], m3, m1)).Add(q3KPart(q1, nh, y(5), 2, 5, sc1, scm[1], m3, m1))
	return s.Add(q3KPart(q1, nh, y(6), 4, 6, sc1, scm[2], m3, m1)).Add(q3KPart(q1, nh, y(7), 6, 7, sc1, scm[3], m3, m1))
}

// q3KPart returns the lanes of 32 weights: 2-bit fields at bit lo of q,
// inverted high bits at bit hi of nh, against y, with the scales of sc
// picked by the VPSHUFB pattern pat.
func q3KPart(q, nh archsimd.Uint16x16, y archsimd.Int8x32, lo, hi uint64, sc, pat archsimd.Int8x32, m3, m1 archsimd.Uint8x32) archsimd.Int32x8 {
	l := q.ShiftAllRight(lo).AsUint8x32().And(m3)
	h := nh.ShiftAllRight(hi).AsUint8x32().And(m1).ReshapeToUint16s().ShiftAllLeft(2).AsUint8x32()
	return l.DotProductPairsSaturated(y).Sub(h.DotProductPairsSaturated(y)).DotProductPairs(sc.PermuteOrZeroGrouped(pat).AsInt16x16())
}

// dotQ2_KAVX2 computes the same as dotQ2_KRef, bit for bit, with the
// instructions of ggml's x86 kernel: VPMADDWD of the mins and the
// activation's block sums gives the min terms of lanes 0..7, accumulated
// first; per 32 weights VPMADDUBSW sums quant×int8 pairs (at most
// 2·3·128) and VPMADDWD multiplies them by the sub-block scales, as
// dotQ3_KAVX2 does.
func dotQ2_KAVX2(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q2_KBytes], act[:nb*q8_KBytes]
	scm := q6KScaleShuffles()
	m3 := archsimd.BroadcastUint8x32(3)
	m4 := archsimd.BroadcastUint8x16(0x0f)
	var acc archsimd.Float32x8
	for b := range nb {
		x := (*[q2_KBytes]byte)(w[b*q2_KBytes:])
		yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		prod, sumi := q2KBlockAVX2(x, yb, &scm, m3, m4)
		yd := f32At(yb[:])
		acc = prod.ConvertToFloat32().MulAdd(archsimd.BroadcastFloat32x8(-yd*fp16At(x[82:])), acc)
		acc = sumi.ConvertToFloat32().MulAdd(archsimd.BroadcastFloat32x8(yd*fp16At(x[80:])), acc)
	}
	return hsumX86Vec(acc)
}

// q2KBlockAVX2 returns the min lanes and the integer lanes of block x·y
// in ggml's x86 order.
func q2KBlockAVX2(x *[q2_KBytes]byte, yb *[q8_KBytes]byte, scm *[4]archsimd.Int8x32, m3 archsimd.Uint8x32, m4 archsimd.Uint8x16) (prod, sumi archsimd.Int32x8) {
	sm := load16((*[16]byte)(x[:]))
	scv := sm.And(m4).BitsToInt8().ExtendToInt16()
	mins := sm.ReshapeToUint16s().ShiftAllRight(4).AsUint8x16().And(m4).BitsToInt8().ExtendToInt16()
	prod = mins.DotProductPairs(load32((*[32]byte)(yb[4+qkK:])).AsInt16x16())
	sc0, sc1 := scv.ConcatPermute128Scalars(0, 0, scv).AsInt8x32(), scv.ConcatPermute128Scalars(1, 1, scv).AsInt8x32()
	q0, q1 := load32((*[32]byte)(x[16:])).ReshapeToUint16s(), load32((*[32]byte)(x[48:])).ReshapeToUint16s()
	// weights 32i..32i+31 (half i/4: qs[32h:32h+32]), unrolled so that the
	// shifts take constant counts
	p := func(q archsimd.Uint16x16, i int, sh uint64, sc archsimd.Int8x32, k int) archsimd.Int32x8 {
		y := load32((*[32]byte)(yb[4+32*i:])).BitsToInt8()
		return q.ShiftAllRight(sh).AsUint8x32().And(m3).DotProductPairsSaturated(y).DotProductPairs(sc.PermuteOrZeroGrouped(scm[k]).AsInt16x16())
	}
	sumi = p(q0, 0, 0, sc0, 0).Add(p(q0, 1, 2, sc0, 1)).Add(p(q0, 2, 4, sc0, 2).Add(p(q0, 3, 6, sc0, 3)))
	sumi = sumi.Add(p(q1, 4, 0, sc1, 0).Add(p(q1, 5, 2, sc1, 1))).Add(p(q1, 6, 4, sc1, 2).Add(p(q1, 7, 6, sc1, 3)))
	return prod, sumi
}

// dotNQ3_KAVX2 is dotQ3_KAVX2 for several activations: each block is
// decoded once (low bits, high-bit offsets, scales broadcast) and dotted
// with every activation as dotQ3_KAVX2 does.
func dotNQ3_KAVX2(n int, w []byte, acts [][]byte, out []float32) {
	if len(acts) > MaxDotN {
		dotEach(dotQ3_KAVX2, n, w, acts, out)
		return
	}
	nb := n / qkK
	w = w[:nb*q3_KBytes]
	out = out[:len(acts)]
	scm := q6KScaleShuffles()
	m3, m1 := archsimd.BroadcastUint8x32(3), archsimd.BroadcastUint8x32(1)
	var (
		acc    [MaxDotN]archsimd.Float32x8
		lo, hi [8]archsimd.Uint8x32 // weights 32k..32k+31: the low bits, 4·(1 - high bit)
		sc     [8]archsimd.Int16x16 // their two sub-blocks' scales
	)
	for b := range nb {
		x := (*[q3_KBytes]byte)(w[b*q3_KBytes:])
		q3KDecode(x, &lo, &hi, &sc, &scm, m3, m1)
		dx := fp16At(x[108:])
		for i, a := range acts {
			yb := (*[q8_KBytes]byte)(a[b*q8_KBytes:])
			d := func(k int) archsimd.Int32x8 {
				y := load32((*[32]byte)(yb[4+32*k:])).BitsToInt8()
				return lo[k].DotProductPairsSaturated(y).Sub(hi[k].DotProductPairsSaturated(y)).DotProductPairs(sc[k])
			}
			sumi := d(0).Add(d(1)).Add(d(2).Add(d(3))).Add(d(4).Add(d(5)).Add(d(6).Add(d(7))))
			acc[i] = sumi.ConvertToFloat32().MulAdd(archsimd.BroadcastFloat32x8(f32At(yb[:])*dx), acc[i])
		}
	}
	for i := range out {
		out[i] = hsumX86Vec(acc[i])
	}
}

// dotNQ2_KAVX2 is dotQ2_KAVX2 for several activations: each block is
// decoded once (quants, scales broadcast, mins widened) and dotted with
// every activation as dotQ2_KAVX2 does.
func dotNQ2_KAVX2(n int, w []byte, acts [][]byte, out []float32) {
	if len(acts) > MaxDotN {
		dotEach(dotQ2_KAVX2, n, w, acts, out)
		return
	}
	nb := n / qkK
	w = w[:nb*q2_KBytes]
	out = out[:len(acts)]
	scm := q6KScaleShuffles()
	m3 := archsimd.BroadcastUint8x32(3)
	m4 := archsimd.BroadcastUint8x16(0x0f)
	var (
		acc [MaxDotN]archsimd.Float32x8
		q   [8]archsimd.Uint8x32 // weights 32k..32k+31
		sc  [8]archsimd.Int16x16 // their two sub-blocks' scales
	)
	for b := range nb {
		x := (*[q2_KBytes]byte)(w[b*q2_KBytes:])
		mins := q2KDecode(x, &q, &sc, &scm, m3, m4)
		dx, dminx := fp16At(x[80:]), fp16At(x[82:])
		for i, a := range acts {
			yb := (*[q8_KBytes]byte)(a[b*q8_KBytes:])
			prod := mins.DotProductPairs(load32((*[32]byte)(yb[4+qkK:])).AsInt16x16())
			d := func(k int) archsimd.Int32x8 {
				return q[k].DotProductPairsSaturated(load32((*[32]byte)(yb[4+32*k:])).BitsToInt8()).DotProductPairs(sc[k])
			}
			sumi := d(0).Add(d(1)).Add(d(2).Add(d(3))).Add(d(4).Add(d(5)).Add(d(6).Add(d(7))))
			yd := f32At(yb[:])
			t := prod.ConvertToFloat32().MulAdd(archsimd.BroadcastFloat32x8(-yd*dminx), acc[i])
			acc[i] = sumi.ConvertToFloat32().MulAdd(archsimd.BroadcastFloat32x8(yd*dx), t)
		}
	}
	for i := range out {
		out[i] = hsumX86Vec(acc[i])
	}
}

//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"simd/archsimd"
)

// The AVX2 kernels of Q6_K (kernels_amd64.go), in ggml's x86 order
// (dotQ6_KX86Ref); dotQ6_KX86Go in q6_k.go is their portable twin.

// dotQ6_KAVX2 computes the same as dotQ6_KX86Ref, bit for bit, with the
// instructions of ggml's AVX2 kernel: the unsigned quants q (0..63) times
// int8 activations go through VPMADDUBSW (pairs at most 2·63·128 = 16128)
// and VPMADDWD with the sub-block scales, 32·(scale·bsum) of the lane's
// two sub-blocks is subtracted, and the lanes go into eight float32
// accumulators by one VFMADD per block with d = fp16(x.d)·y.d (a vector
// product: a scalar one would be legacy SSE between VEX instructions).
func dotQ6_KAVX2(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q6_KBytes], act[:nb*q8_KBytes]
	m4, m30 := archsimd.BroadcastUint8x32(0x0f), archsimd.BroadcastUint8x32(0x30)
	scm := q6KScaleShuffles()
	var acc archsimd.Float32x8
	for b := range nb {
		x := (*[q6_KBytes]byte)(w[b*q6_KBytes:])
		yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		var q [8]archsimd.Uint8x32
		var sc [8]archsimd.Int16x16
		scv := q6KDecode(x, &q, &sc, &scm, m4, m30)
		sumi := q6KLanes(&q, &sc, scv, yb)
		d := broadcast32(halfBits(binary.LittleEndian.Uint16(x[208:]))).Mul(broadcast32(binary.LittleEndian.Uint32(yb[:])))
		acc = sumi.ConvertToFloat32().MulAdd(d, acc)
	}
	return hsumX86Vec(acc)
}

// q6KDecode decodes a Q6_K block: the unsigned quants of weights
// 32k..32k+31 in q[k], their two sub-blocks' scales in sc[k] (int16 lanes:
// the low 128 bits sub-block 2k's, the high 2k+1's, as ggml's
// get_scale_shuffle); it returns the 16 scales as int16 lanes.
func q6KDecode(x *[q6_KBytes]byte, q *[8]archsimd.Uint8x32, sc *[8]archsimd.Int16x16, scm *[4]archsimd.Int8x32, m4, m30 archsimd.Uint8x32) archsimd.Int16x16 {
	scv := load16((*[16]byte)(x[192:])).BitsToInt8().ExtendToInt16()
	for h := range 2 {
		q[4*h], q[4*h+1], q[4*h+2], q[4*h+3] = q6KQuants(x, h, m4, m30)
		s := scv.ConcatPermute128Scalars(0, 0, scv)
		if h == 1 {
			s = scv.ConcatPermute128Scalars(1, 1, scv)
		}
		for k := range 4 {
			sc[4*h+k] = s.AsInt8x32().PermuteOrZeroGrouped(scm[k]).AsInt16x16()
		}
	}
	return scv
}

// q6KLanes returns the int32 lanes of a decoded block's dot with the
// activation block y in ggml's x86 order: Σ_k VPMADDWD(VPMADDUBSW(q[k],
// y_k), sc[k]) - 32·VPMADDWD(bsums, scales).
func q6KLanes(q *[8]archsimd.Uint8x32, sc *[8]archsimd.Int16x16, scv archsimd.Int16x16, y *[q8_KBytes]byte) archsimd.Int32x8 {
	d := func(k int) archsimd.Int32x8 {
		return q[k].DotProductPairsSaturated(load32((*[32]byte)(y[4+32*k:])).BitsToInt8()).DotProductPairs(sc[k])
	}
	acc := d(0).Add(d(1)).Add(d(2).Add(d(3))).Add(d(4).Add(d(5)).Add(d(6).Add(d(7))))
	return acc.Sub(load32((*[32]byte)(y[4+qkK:])).AsInt16x16().DotProductPairs(scv).ShiftAllLeft(5))
}

// dotNQ6_KAVX2 is dotQ6_KAVX2 for several activations: each block is
// decoded once and dotted with every activation, each with its own eight
// float32 accumulators.
func dotNQ6_KAVX2(n int, w []byte, acts [][]byte, out []float32) {
	if len(acts) > MaxDotN {
		dotEach(dotQ6_KAVX2, n, w, acts, out)
		return
	}
	nb := n / qkK
	w = w[:nb*q6_KBytes]
	out = out[:len(acts)]
	m4, m30 := archsimd.BroadcastUint8x32(0x0f), archsimd.BroadcastUint8x32(0x30)
	scm := q6KScaleShuffles()
	var (
		acc [MaxDotN]archsimd.Float32x8
		q   [8]archsimd.Uint8x32
		sc  [8]archsimd.Int16x16
	)
	for b := range nb {
		x := (*[q6_KBytes]byte)(w[b*q6_KBytes:])
		scv := q6KDecode(x, &q, &sc, &scm, m4, m30)
		dx := broadcast32(halfBits(binary.LittleEndian.Uint16(x[208:])))
		for i, a := range acts {
			yb := (*[q8_KBytes]byte)(a[b*q8_KBytes:])
			d := dx.Mul(broadcast32(binary.LittleEndian.Uint32(yb[:])))
			acc[i] = q6KLanes(&q, &sc, scv, yb).ConvertToFloat32().MulAdd(d, acc[i])
		}
	}
	for i := range out {
		out[i] = hsumX86Vec(acc[i])
	}
}

// dotRowsNQ6_KAVX2 is dotQ6_KAVX2 for rows × activations (fewer than four
// activations: dotNQ6_KAVX2 row by row), in x86MatMul's loop order
// (kx86_matmul_amd64.go).
func dotRowsNQ6_KAVX2(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	if len(acts) < 4 || len(acts) > MaxDotN {
		eachRow(dotNQ6_KAVX2, n/qkK*q6_KBytes, n, w, acts, outs, at)
		return
	}
	m4, m30 := archsimd.BroadcastUint8x32(0x0f), archsimd.BroadcastUint8x32(0x30)
	scm := q6KScaleShuffles()
	var (
		ba x86Batch
		s  x86Sums
		q  [8]archsimd.Uint8x32
		sc [8]archsimd.Int16x16
	)
	x86MatMul(n, q6_KBytes, w, acts, outs, at, false, &ba, &s, func(xb []byte, r int) {
		x := (*[q6_KBytes]byte)(xb)
		scv := q6KDecode(x, &q, &sc, &scm, m4, m30)
		dxv := broadcast32(halfBits(binary.LittleEndian.Uint16(x[208:])))
		for o := range ba.no {
			x86Dots8Q6(&q, &sc, scv, (*[8]*[q8_KBytes]byte)(ba.y[8*o:]), (*[8]archsimd.Float32x8)(ba.ydv[8*o:]), &dxv, (*[8]archsimd.Float32x8)(s.acc[r][8*o:]))
		}
	})
}

// x86Dots8Q6 is x86Dots8 for Q6_K: each activation's lanes less
// 32·VPMADDWD(bsums, scales), as q6KLanes.
//
//go:noinline
func x86Dots8Q6(q *[8]archsimd.Uint8x32, sc *[8]archsimd.Int16x16, scv archsimd.Int16x16, y *[8]*[q8_KBytes]byte, yd *[8]archsimd.Float32x8, dx *archsimd.Float32x8, acc *[8]archsimd.Float32x8) {
	y0, y1, y2, y3, y4, y5, y6, y7 := y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7]
	off := func(y *[q8_KBytes]byte) archsimd.Int32x8 {
		return load32((*[32]byte)(y[4+qkK:])).AsInt16x16().DotProductPairs(scv).ShiftAllLeft(5).Neg()
	}
	a0, a1, a2, a3, a4, a5, a6, a7 := off(y0), off(y1), off(y2), off(y3), off(y4), off(y5), off(y6), off(y7)
	step := func(k int) {
		qk, sk := q[k], sc[k]
		d := func(y *[q8_KBytes]byte) archsimd.Int32x8 {
			return qk.DotProductPairsSaturated(load32((*[32]byte)(y[4+32*k:])).BitsToInt8()).DotProductPairs(sk)
		}
		a0, a1, a2, a3 = a0.Add(d(y0)), a1.Add(d(y1)), a2.Add(d(y2)), a3.Add(d(y3))
		a4, a5, a6, a7 = a4.Add(d(y4)), a5.Add(d(y5)), a6.Add(d(y6)), a7.Add(d(y7))
	}
	step(0)
	step(1)
	step(2)
	step(3)
	step(4)
	step(5)
	step(6)
	step(7)
	x86Acc8(a0, a1, a2, a3, a4, a5, a6, a7, yd, dx, acc)
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

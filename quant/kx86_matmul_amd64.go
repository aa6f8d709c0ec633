//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"simd/archsimd"
)

// The AVX2 DotRowsN kernels of Q3_K and Q5_K, K-quants summed in ggml's
// x86 order (kx86.go), and IQ4_XS's (iq4_xs_amd64.go), bit-identical to
// Dot. (Q2_K's, whose blocks are a third smaller, measured slower this way
// than its DotN kernel row by row, eachRow below.) Their loop order is
// that of the Q4_K and Q6_K kernels (matmul_k_amd64.go): rows in groups of
// kGroupRows, and within a group block by block, so that one block of
// every activation stays in L1 while it serves the group's rows; each
// weight block is decoded once for all activations. What differs is the
// float part: a row's dot with one activation is eight float32 lanes
// (the reference's acc), so every activation of every row of the group
// has its own vector of running sums (x86Sums), into which each block's
// int32 lanes go by one VFMADD, as in dotQ5_KAVX2; Q5_K's min sums, one
// float32 per activation, run eight activations to a vector.

// x86Sums are the running sums of a group of rows: acc[r][i] the eight
// lanes of row r against activation i, summ[r][o] Q5_K's min sums of
// activations 8o..8o+7 (one per lane).
type x86Sums struct {
	acc  [kGroupRows][MaxDotN]archsimd.Float32x8
	summ [kGroupRows][MaxDotN / 8]archsimd.Float32x8
}

// x86Batch is a batch's block b: the activations' blocks (kActs, in
// octets) and their scales, as float32 and in every lane of a vector
// (ydv: x86Acc8 multiplies them by a block's scale in vector registers, as
// the scalar float32 products that Go compiles to legacy SSE would cost
// AVX-SSE transitions between the VEX instructions around them,
// golang/go#80835, on every block and activation).
type x86Batch struct {
	kActs
	yd  [MaxDotN]float32
	ydv [MaxDotN]archsimd.Float32x8
	no  int // octets of activations
}

func (ba *x86Batch) set(acts [][]byte, b int) {
	ba.kActs.set(acts, b)
	for i := range 8 * ba.no {
		ba.yd[i] = ba.scale(i)
		ba.ydv[i] = archsimd.BroadcastFloat32x8(ba.yd[i])
	}
}

// x86MatMul runs the rows of w (nb blocks of size bytes each) against
// the 4 to MaxDotN activations in groups of kGroupRows rows: with ba set to
// the batch's block b, it calls block(x, r) for block b of each group row
// r, which adds its terms to s.acc[r] (and s.summ[r]); then the group's
// results are stored, with the min sums if mins. (block reads ba and s
// from its closure: pointers passed to a func value would escape.)
func x86MatMul(n, size int, w []byte, acts [][]byte, outs [][]float32, at int, mins bool, ba *x86Batch, s *x86Sums, block func(x []byte, r int)) {
	nb := n / qkK
	rb := nb * size
	rows := len(w) / rb
	ba.no = (len(acts) + 7) / 8
	ba.nq = 2 * ba.no
	for r0 := 0; r0 < rows; r0 += kGroupRows {
		g := min(kGroupRows, rows-r0)
		clear(s.acc[:g])
		clear(s.summ[:g])
		for b := range nb {
			ba.set(acts, b)
			for r := range g {
				block(w[(r0+r)*rb+b*size:][:size], r)
			}
		}
		for r := range g {
			var sm [MaxDotN]float32
			if mins {
				for o := range ba.no {
					s.summ[r][o].StoreArray((*[8]float32)(sm[8*o:]))
				}
			}
			for i := range outs {
				v := hsumX86Vec(s.acc[r][i])
				if mins {
					v += sm[i]
				}
				outs[i][at+r0+r] = v
			}
		}
	}
}

// x86Dots8 adds to acc[j] the int32 lanes of a block's dot with the
// activation block y[j] (quants q[k] of the block's weights 32k..32k+31,
// unsigned, and their scales sc[k]: VPMADDUBSW, VPMADDWD, as dotQ5_KAVX2),
// times yd[j]·dx (x86Acc8), by one FMA per lane, for eight activations.
//
//go:noinline
func x86Dots8(q *[8]archsimd.Uint8x32, sc *[8]archsimd.Int16x16, y *[8]*[q8_KBytes]byte, yd *[8]archsimd.Float32x8, dx *archsimd.Float32x8, acc *[8]archsimd.Float32x8) {
	y0, y1, y2, y3, y4, y5, y6, y7 := y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7]
	var a0, a1, a2, a3, a4, a5, a6, a7 archsimd.Int32x8
	step := func(k int) { // weights 32k.., written out below (constant offsets)
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

// x86Dots8Q3 is x86Dots8 for Q3_K: the quants are lo[k] - hi[k] (the low
// bits and 4·(1 - high bit), VPMADDUBSW of each, subtracted, as
// dotQ3_KAVX2).
//
//go:noinline
func x86Dots8Q3(lo, hi *[8]archsimd.Uint8x32, sc *[8]archsimd.Int16x16, y *[8]*[q8_KBytes]byte, yd *[8]archsimd.Float32x8, dx *archsimd.Float32x8, acc *[8]archsimd.Float32x8) {
	y0, y1, y2, y3, y4, y5, y6, y7 := y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7]
	var a0, a1, a2, a3, a4, a5, a6, a7 archsimd.Int32x8
	step := func(k int) {
		lk, hk, sk := lo[k], hi[k], sc[k]
		d := func(y *[q8_KBytes]byte) archsimd.Int32x8 {
			v := load32((*[32]byte)(y[4+32*k:])).BitsToInt8()
			return lk.DotProductPairsSaturated(v).Sub(hk.DotProductPairsSaturated(v)).DotProductPairs(sk)
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

// x86Acc8 sets acc[j] = fma(yd[j]·dx, float32(aj), acc[j]) lane by lane
// (yd[j] and dx: one value in every lane; the product as the reference's
// float32 product, one rounding).
func x86Acc8(a0, a1, a2, a3, a4, a5, a6, a7 archsimd.Int32x8, yd *[8]archsimd.Float32x8, dx *archsimd.Float32x8, acc *[8]archsimd.Float32x8) {
	f := func(a archsimd.Int32x8, j int) {
		acc[j] = a.ConvertToFloat32().MulAdd(yd[j].Mul(*dx), acc[j])
	}
	f(a0, 0)
	f(a1, 1)
	f(a2, 2)
	f(a3, 3)
	f(a4, 4)
	f(a5, 5)
	f(a6, 6)
	f(a7, 7)
}

// dotRowsNQ5_KAVX2 is dotQ5_KAVX2 for rows × activations (fewer than four
// activations: dotNQ5_KAVX2 row by row).
func dotRowsNQ5_KAVX2(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	if len(acts) < 4 || len(acts) > MaxDotN {
		eachRow(dotNQ5_KAVX2, n/qkK*q5_KBytes, n, w, acts, outs, at)
		return
	}
	m4, m1 := archsimd.BroadcastUint8x32(0x0f), archsimd.BroadcastUint8x32(0x01)
	var scm [8]archsimd.Int8x32
	for k := range scm {
		scm[k] = byteBroadcastShuffle(k)
	}
	mnm := archsimd.LoadInt8x32Array(&q4KMinShuffle)
	var (
		ba x86Batch
		s  x86Sums
		q  [8]archsimd.Uint8x32
		sc [8]archsimd.Int16x16
	)
	x86MatMul(n, q5_KBytes, w, acts, outs, at, true, &ba, &s, func(xb []byte, r int) {
		x := (*[q5_KBytes]byte)(xb)
		mv := q5KDecode(x, &q, &sc, &scm, mnm, m4, m1)
		dxv := broadcast32(halfBits(binary.LittleEndian.Uint16(x[:])))
		dm := broadcast32(halfBits(binary.LittleEndian.Uint16(x[2:])) ^ 1<<31) // yd·(-dmin) = -yd·dmin, exactly
		for o := range ba.no {
			y := (*[8]*[q8_KBytes]byte)(ba.y[8*o:])
			yd := (*[8]float32)(ba.yd[8*o:])
			x86Dots8(&q, &sc, y, (*[8]archsimd.Float32x8)(ba.ydv[8*o:]), &dxv, (*[8]archsimd.Float32x8)(s.acc[r][8*o:]))
			// fma(-yd·dmin, float32(Σ min·bsum), summs), eight activations
			m := x86Mins8(mv, y)
			s.summ[r][o] = archsimd.LoadFloat32x8Array(yd).Mul(dm).MulAdd(m.ConvertToFloat32(), s.summ[r][o])
		}
	})
}

// x86Mins8 returns Σ min·bsum of eight activations' blocks y[j] in lane j
// (mv: the mins in int16 lanes m0 m0 m1 m1 …, as q5KDecode returns them).
func x86Mins8(mv archsimd.Int16x16, y *[8]*[q8_KBytes]byte) archsimd.Int32x8 {
	b := func(j int) archsimd.Int32x8 {
		return load32((*[32]byte)(y[j][4+qkK:])).AsInt16x16().DotProductPairs(mv)
	}
	return hsum8x8(b(0), b(1), b(2), b(3), b(4), b(5), b(6), b(7))
}

// dotRowsNQ3_KAVX2 is dotQ3_KAVX2 for rows × activations (fewer than four
// activations: dotNQ3_KAVX2 row by row).
func dotRowsNQ3_KAVX2(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	if len(acts) < 4 || len(acts) > MaxDotN {
		eachRow(dotNQ3_KAVX2, n/qkK*q3_KBytes, n, w, acts, outs, at)
		return
	}
	scm := q6KScaleShuffles()
	m3, m1 := archsimd.BroadcastUint8x32(3), archsimd.BroadcastUint8x32(1)
	var (
		ba     x86Batch
		s      x86Sums
		lo, hi [8]archsimd.Uint8x32
		sc     [8]archsimd.Int16x16
	)
	x86MatMul(n, q3_KBytes, w, acts, outs, at, false, &ba, &s, func(xb []byte, r int) {
		x := (*[q3_KBytes]byte)(xb)
		q3KDecode(x, &lo, &hi, &sc, &scm, m3, m1)
		dxv := broadcast32(halfBits(binary.LittleEndian.Uint16(x[108:])))
		for o := range ba.no {
			x86Dots8Q3(&lo, &hi, &sc, (*[8]*[q8_KBytes]byte)(ba.y[8*o:]), (*[8]archsimd.Float32x8)(ba.ydv[8*o:]), &dxv, (*[8]archsimd.Float32x8)(s.acc[r][8*o:]))
		}
	})
}

// q3KDecode decodes a Q3_K block for the multi-activation kernels: the
// low bits of weights 32k..32k+31 in lo[k], 4·(1 - high bit) in hi[k],
// their two sub-blocks' scales in sc[k].
func q3KDecode(x *[q3_KBytes]byte, lo, hi *[8]archsimd.Uint8x32, sc *[8]archsimd.Int16x16, scm *[4]archsimd.Int8x32, m3, m1 archsimd.Uint8x32) {
	scv := q3KScalesVec(x)
	nh := load32((*[32]byte)(x[:])).Not().ReshapeToUint16s()
	for h := range 2 {
		s := scv.ConcatPermute128Scalars(0, 0, scv)
		if h == 1 {
			s = scv.ConcatPermute128Scalars(1, 1, scv)
		}
		q := load32((*[32]byte)(x[32+32*h:])).ReshapeToUint16s()
		for k := range 4 {
			lo[4*h+k] = srl(q.AsUint8x32(), 2*k).And(m3)
			hi[4*h+k] = sll(srl(nh.AsUint8x32(), 4*h+k).And(m1), 2)
			sc[4*h+k] = s.AsInt8x32().PermuteOrZeroGrouped(scm[k]).AsInt16x16()
		}
	}
}

// q2KDecode decodes a Q2_K block for the multi-activation kernels: the
// quants of weights 32k..32k+31 in q[k], their two sub-blocks' scales in
// sc[k]; it returns the 16 mins in int16 lanes.
func q2KDecode(x *[q2_KBytes]byte, q *[8]archsimd.Uint8x32, sc *[8]archsimd.Int16x16, scm *[4]archsimd.Int8x32, m3 archsimd.Uint8x32, m4 archsimd.Uint8x16) archsimd.Int16x16 {
	sm := load16((*[16]byte)(x[:]))
	scv := sm.And(m4).BitsToInt8().ExtendToInt16()
	for h := range 2 {
		s := scv.ConcatPermute128Scalars(0, 0, scv)
		if h == 1 {
			s = scv.ConcatPermute128Scalars(1, 1, scv)
		}
		qv := load32((*[32]byte)(x[16+32*h:])).ReshapeToUint16s()
		for k := range 4 {
			q[4*h+k] = qv.ShiftAllRight(uint64(2 * k)).AsUint8x32().And(m3)
			sc[4*h+k] = s.AsInt8x32().PermuteOrZeroGrouped(scm[k]).AsInt16x16()
		}
	}
	return sm.ReshapeToUint16s().ShiftAllRight(4).AsUint8x16().And(m4).BitsToInt8().ExtendToInt16()
}

func dotRowsNQ2_KAVX2(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	eachRow(dotNQ2_KAVX2, n/qkK*q2_KBytes, n, w, acts, outs, at)
}

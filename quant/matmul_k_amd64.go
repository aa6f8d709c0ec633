//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"math"
	"simd/archsimd"
)

// The native AVX2 DotRowsN kernels of the K-quants (Q4_K, Q6_K against up
// to MaxDotN Q8_K activations), bit-identical to Dot.
//
// Loop order: rows in groups of kGroupRows, and within a group block by
// block, so that one block of every activation (16 × 292 bytes) stays in
// L1 while it serves all the rows of the group (row by row, the whole
// batch — 72 KB at 4096 columns — would stream from L2 for every row).
// Each weight block is decoded once for all activations; kDots4 takes its
// integer sums with four activations at a time.
//
// The activations are in the lanes of the float32 running sums: a row's
// sums for eight activations are one vector, in the lane order of
// kLaneAct, and one vector operation per block does the reference's
// float32 work (the same IEEE operations, lane by lane) for eight of
// them; the rows' terms are still added in block order.

// kGroupRows is how many rows a K-quant DotRowsN kernel runs block by
// block together.
const kGroupRows = 16

// kLaneAct is the activation (of eight) in each lane of a running-sum
// vector: the order in which two hsum4x2x8 results of four activations
// each come out of ConcatSubPairsGrouped.
var kLaneAct = [8]int{0, 1, 4, 5, 2, 3, 6, 7}

// kActs is a batch of Q8_K activations' block b: pointers to it, padded to
// a multiple of four with the first activation (its lanes are dropped).
type kActs struct {
	y  [MaxDotN]*[q8_KBytes]byte
	nq int // quads of activations
}

func (k *kActs) set(acts [][]byte, b int) {
	for i := range k.nq * 4 {
		a := acts[0]
		if i < len(acts) {
			a = acts[i]
		}
		k.y[i] = (*[q8_KBytes]byte)(a[b*q8_KBytes:])
	}
}

// scale returns activation i's Q8_K scale.
func (k *kActs) scale(i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(k.y[i][:]))
}

// kSums holds the running sums of a group of rows: sums[r][o] the row's
// float32 sums of activations 8o..8o+7 in kLaneAct order.
type kSums [kGroupRows][MaxDotN / 8]archsimd.Float32x8

// store scatters the running sums of row r (the group's first row is
// outs row at) to outs.
func (s *kSums) store(outs [][]float32, r, at int) {
	var v [MaxDotN]float32
	for o := range MaxDotN / 8 {
		s[r][o].StoreArray((*[8]float32)(v[8*o:]))
	}
	for i := range outs {
		outs[i][at+r] = v[i&^7+kLaneAct[i&7]]
	}
}

// dotRowsNQ4_KAVX2 is dotQ4_KAVX2 for rows × activations (fewer than four
// activations: dotNQ4_KAVX2 row by row).
func dotRowsNQ4_KAVX2(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	if len(acts) < 4 || len(acts) > MaxDotN {
		eachRow(dotNQ4_KAVX2, n/qkK*q4_KBytes, n, w, acts, outs, at)
		return
	}
	nb := n / qkK
	rb := nb * q4_KBytes
	rows := len(w) / rb
	m4 := archsimd.BroadcastUint8x32(0x0f)
	var scm [8]archsimd.Int8x32
	for k := range scm {
		scm[k] = byteBroadcastShuffle(k)
	}
	mnm := archsimd.LoadInt8x32Array(&q4KMinShuffle)
	var (
		ya   kActs
		sums kSums
		q    [8]archsimd.Uint8x32
		sc   [8]archsimd.Int16x16
		yd   [MaxDotN / 4]archsimd.Float32x8 // quad j's scales, each twice
	)
	ya.nq = (len(acts) + 7) / 8 * 2
	no := ya.nq / 2 // octets
	for r0 := 0; r0 < rows; r0 += kGroupRows {
		g := min(kGroupRows, rows-r0)
		clear(sums[:g])
		for b := range nb {
			ya.set(acts, b)
			for j := range ya.nq {
				yd[j] = pairedScales(ya.scale(4*j), ya.scale(4*j+1), ya.scale(4*j+2), ya.scale(4*j+3))
			}
			for r := range g {
				x := (*[q4_KBytes]byte)(w[(r0+r)*rb+b*q4_KBytes:])
				mins := q4KDecode(x, &q, &sc, &scm, mnm, m4)
				// lanes 2j, 2j+1: d, dmin (as dotQ4_KAVX2: fp16 times the activation's scale)
				h := binary.LittleEndian.Uint32(x[:])
				f := broadcast64(uint64(halfBits(uint16(h))) | uint64(halfBits(uint16(h>>16)))<<32).AsFloat32x8()
				for o := range no {
					s0, s1 := kDots8(&q, &sc, mins, (*[8]*[q8_KBytes]byte)(ya.y[8*o:]))
					ta := f.Mul(yd[2*o]).Mul(s0.ConvertToFloat32())
					tb := f.Mul(yd[2*o+1]).Mul(s1.ConvertToFloat32())
					// float32(d*isum) - float32(dmin*summ) of each activation
					sums[r][o] = sums[r][o].Add(ta.ConcatSubPairsGrouped(tb))
				}
			}
		}
		for r := range g {
			sums.store(outs, r, at+r0)
		}
	}
}

// dotRowsNQ6_KAVX2 is dotQ6_KAVX2 for rows × activations (fewer than four
// activations: dotNQ6_KAVX2 row by row).
func dotRowsNQ6_KAVX2(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	if len(acts) < 4 || len(acts) > MaxDotN {
		eachRow(dotNQ6_KAVX2, n/qkK*q6_KBytes, n, w, acts, outs, at)
		return
	}
	nb := n / qkK
	rb := nb * q6_KBytes
	rows := len(w) / rb
	m4, m30 := archsimd.BroadcastUint8x32(0x0f), archsimd.BroadcastUint8x32(0x30)
	scm := q6KScaleShuffles()
	shift := archsimd.LoadUint32x8Array(&q6KOffsetShift)
	var (
		ya   kActs
		sums kSums
		q    [8]archsimd.Uint8x32
		sc   [8]archsimd.Int16x16
		yd   [MaxDotN / 8]archsimd.Float32x8 // octet o's scales in kLaneAct order
	)
	ya.nq = (len(acts) + 7) / 8 * 2
	no := ya.nq / 2
	for r0 := 0; r0 < rows; r0 += kGroupRows {
		g := min(kGroupRows, rows-r0)
		clear(sums[:g])
		for b := range nb {
			ya.set(acts, b)
			for o := range no {
				s := func(i int) float32 { return ya.scale(min(8*o+i, 4*ya.nq-1)) }
				var lo, hi archsimd.Float32x4
				lo = lo.SetElem(0, s(0)).SetElem(1, s(1)).SetElem(2, s(4)).SetElem(3, s(5))
				hi = hi.SetElem(0, s(2)).SetElem(1, s(3)).SetElem(2, s(6)).SetElem(3, s(7))
				yd[o] = yd[o].SetLo(lo).SetHi(hi)
			}
			for r := range g {
				x := (*[q6_KBytes]byte)(w[(r0+r)*rb+b*q6_KBytes:])
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
				d := archsimd.BroadcastFloat32x8(halfToFloat(binary.LittleEndian.Uint16(x[208:])))
				for o := range no {
					// lanes 2j, 2j+1: the sum and 32·Σ scale·bsum of activation j
					s0, s1 := kDots8(&q, &sc, scv, (*[8]*[q8_KBytes]byte)(ya.y[8*o:]))
					isum := s0.ShiftLeft(shift).ConcatSubPairsGrouped(s1.ShiftLeft(shift))
					sums[r][o] = sums[r][o].Add(d.Mul(yd[o]).Mul(isum.ConvertToFloat32()))
				}
			}
		}
		for r := range g {
			sums.store(outs, r, at+r0)
		}
	}
}

// kDots8 is kDots4 for eight activations' blocks y[0..7], its results
// reduced as hsum4x2x8 does: lanes 2j, 2j+1 of s0 are activation j's two
// sums (scaled sums, Σ bsums·mv), of s1 activation 4+j's.
//
//go:noinline
func kDots8(q *[8]archsimd.Uint8x32, sc *[8]archsimd.Int16x16, mv archsimd.Int16x16, y *[8]*[q8_KBytes]byte) (s0, s1 archsimd.Int32x8) {
	y0, y1, y2, y3, y4, y5, y6, y7 := y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7]
	var a0, a1, a2, a3, a4, a5, a6, a7 archsimd.Int32x8
	step := func(k int) { // sub-block k, written out below (constant offsets)
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
	f := func(acc archsimd.Int32x8, y *[q8_KBytes]byte) archsimd.Int32x8 {
		return acc.ConcatAddPairsGrouped(load32((*[32]byte)(y[4+qkK:])).AsInt16x16().DotProductPairs(mv))
	}
	return hsum4x2x8(f(a0, y0), f(a1, y1), f(a2, y2), f(a3, y3)), hsum4x2x8(f(a4, y4), f(a5, y5), f(a6, y6), f(a7, y7))
}

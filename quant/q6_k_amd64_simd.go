//go:build goexperiment.simd && amd64

package quant

import (
	"encoding/binary"
	"math"
	"simd/archsimd"
)

// The native AVX2 kernel of Q6_K; q6_k_scalar.go has its portable twin.

// dotQ6_K computes the same as dotQ6_KRef, bit for bit, for activations
// made by the Q8_K quantizer (whose block sums are the sums of its quants):
// the unsigned quants q (0..63) times int8 activations go through
// VPMADDUBSW (pairs at most 2·63·128 = 16128) and VPMADDWD with the
// sub-block scales, and the offset is taken off once per block as
// 32·Σ scale·bsum; all of it is exact int32 arithmetic, so the sum equals
// the reference's Σ scale·Σ (q-32)·y.
func dotQ6_K(n int, w, act []byte) float32 {
	if !hasAVX2 {
		return dotQ6_KRef(n, w, act)
	}
	nb := n / qkK
	w, act = w[:nb*q6_KBytes], act[:nb*q8_KBytes]
	m30 := archsimd.BroadcastUint8x32(0x30)
	var sum float32
	for b := range nb {
		x := (*[q6_KBytes]byte)(w[b*q6_KBytes:])
		yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		yd := math.Float32frombits(binary.LittleEndian.Uint32(yb[:]))
		var acc archsimd.Int32x8
		for h := range 2 {
			sc := (*[8]byte)(x[192+8*h:])
			y := (*[128]byte)(yb[4+128*h:])
			lo, hi := nibbles(load32((*[32]byte)(x[64*h:])))
			lo2, hi2 := nibbles(load32((*[32]byte)(x[64*h+32:])))
			qh := load32((*[32]byte)(x[128+32*h:])).ReshapeToUint16s()
			q := [4]archsimd.Uint8x32{
				lo.Or(qh.ShiftAllLeft(4).AsUint8x32().And(m30)),
				lo2.Or(qh.ShiftAllLeft(2).AsUint8x32().And(m30)),
				hi.Or(qh.AsUint8x32().And(m30)),
				hi2.Or(qh.ShiftAllRight(2).AsUint8x32().And(m30)),
			}
			for k := range 4 { // lanes l < 16: sub-block 2k, l >= 16: 2k+1
				s := archsimd.BroadcastInt16x16(int16(int8(sc[2*k]))).SetHi(archsimd.BroadcastInt16x8(int16(int8(sc[2*k+1]))))
				p := q[k].DotProductPairsSaturated(load32((*[32]byte)(y[32*k:])).BitsToInt8())
				acc = acc.Add(p.DotProductPairs(s))
			}
		}
		// 32·Σ scale·bsum: the offset of the quants, per 16-weight sub-block.
		scv := load16((*[16]byte)(x[192:])).BitsToInt8().ExtendToInt16()
		bs := load32((*[32]byte)(yb[4+qkK:])).AsInt16x16()
		isum, off := hsum2x8(acc, bs.DotProductPairs(scv))
		sum += fp16At(x[208:]) * yd * float32(isum-32*off)
	}
	return sum
}

//go:build goexperiment.simd && amd64

package quant

import (
	"encoding/binary"
	"math"
	"simd/archsimd"
)

// The native AVX2 kernel of Q4_K; q4_k_scalar.go has its portable twin.

// dotQ4_K computes the same as dotQ4_KRef, bit for bit: per 32-weight
// sub-block VPMADDUBSW sums nibble×int8 pairs (at most 2·15·128 = 3840, far
// from saturation) and VPMADDWD multiplies the pairs by the 6-bit scale
// into int32; the mins use the activation's block sums, as in the reference.
func dotQ4_K(n int, w, act []byte) float32 {
	if !hasAVX2 {
		return dotQ4_KRef(n, w, act)
	}
	nb := n / qkK
	w, act = w[:nb*q4_KBytes], act[:nb*q8_KBytes]
	ones := archsimd.BroadcastInt16x16(1)
	var sum float32
	for b := range nb {
		x := (*[q4_KBytes]byte)(w[b*q4_KBytes:])
		yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		sc, mn := scalesMinsK4(x[4:16])
		var acc archsimd.Int32x8
		for g := range 4 {
			lo, hi := nibbles(load32((*[32]byte)(x[16+32*g:])))
			ylo := load32((*[32]byte)(yb[4+64*g:])).BitsToInt8()
			yhi := load32((*[32]byte)(yb[4+64*g+32:])).BitsToInt8()
			acc = acc.Add(lo.DotProductPairsSaturated(ylo).DotProductPairs(archsimd.BroadcastInt16x16(int16(uint8(sc >> (16 * g))))))
			acc = acc.Add(hi.DotProductPairsSaturated(yhi).DotProductPairs(archsimd.BroadcastInt16x16(int16(uint8(sc >> (16*g + 8))))))
		}
		// Σ min·(bsum 2k + bsum 2k+1), exact in int32 like the reference's sum
		var mv archsimd.Uint64x2
		mins := mv.SetElem(0, mn).AsInt8x16().ExtendLo8ToInt32()
		bs := load32((*[32]byte)(yb[4+qkK:])).AsInt16x16().DotProductPairs(ones)
		isum, summ := hsum2x8(acc, bs.Mul(mins))
		yd := math.Float32frombits(binary.LittleEndian.Uint32(yb[:]))
		d, dmin := fp16At(x[:])*yd, fp16At(x[2:])*yd
		sum += float32(d*float32(isum)) - float32(dmin*float32(summ))
	}
	return sum
}

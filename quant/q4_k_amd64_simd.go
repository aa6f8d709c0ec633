//go:build goexperiment.simd && amd64

package quant

import "simd/archsimd"

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
	var sum float32
	for b := range nb {
		x := (*[q4_KBytes]byte)(w[b*q4_KBytes:])
		yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		yd, _, bsums := q8KBlock(yb[:])
		scales := x[4:16]
		var acc archsimd.Int32x8
		var summ int32
		for g := range 4 {
			lo, hi := nibbles(load32((*[32]byte)(x[16+32*g:])))
			ylo := load32((*[32]byte)(yb[4+64*g:])).BitsToInt8()
			yhi := load32((*[32]byte)(yb[4+64*g+32:])).BitsToInt8()
			sc1, m1 := scaleMinK4(2*g, scales)
			sc2, m2 := scaleMinK4(2*g+1, scales)
			acc = acc.Add(lo.DotProductPairsSaturated(ylo).DotProductPairs(archsimd.BroadcastInt16x16(int16(sc1))))
			acc = acc.Add(hi.DotProductPairsSaturated(yhi).DotProductPairs(archsimd.BroadcastInt16x16(int16(sc2))))
			summ += int32(m1)*(bsum(bsums, 4*g)+bsum(bsums, 4*g+1)) + int32(m2)*(bsum(bsums, 4*g+2)+bsum(bsums, 4*g+3))
		}
		d, dmin := fp16At(x[:])*yd, fp16At(x[2:])*yd
		sum += float32(d*float32(hsum8(acc))) - float32(dmin*float32(summ))
	}
	return sum
}

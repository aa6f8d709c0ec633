//go:build goexperiment.simd && amd64

package quant

import "simd/archsimd"

// The native AVX2 kernel of Q4_0; q4_0_scalar.go has its portable twin.

// dotQ4_0 computes the same as dotQ4_0Ref, bit for bit: VPMADDUBSW of the
// nibbles (0..15) and of 8 with the int8 activations gives the pair sums of
// q·y and 8·y (|·| ≤ 3840), whose difference is (q-8)·y; VPMADDWD with ones
// widens it, and the exact block sum is scaled in the reference's order.
func dotQ4_0(n int, w, act []byte) float32 {
	if !hasAVX2 {
		return dotQ4_0Ref(n, w, act)
	}
	nb := n / qk
	w, act = w[:nb*q4_0Bytes], act[:nb*q8_0Bytes]
	m4 := archsimd.BroadcastUint8x16(0x0f)
	eight := archsimd.BroadcastUint8x32(8)
	ones := archsimd.BroadcastInt16x16(1)
	var sum float32
	for b := range nb {
		x := (*[q4_0Bytes]byte)(w[b*q4_0Bytes:])
		y := (*[q8_0Bytes]byte)(act[b*q8_0Bytes:])
		q := load16((*[16]byte)(x[2:]))
		var qq archsimd.Uint8x32
		qq = qq.SetLo(q.And(m4)).SetHi(q.ReshapeToUint16s().ShiftAllRight(4).ReshapeToUint8s().And(m4))
		yv := load32((*[32]byte)(y[2:])).BitsToInt8()
		d := qq.DotProductPairsSaturated(yv).Sub(eight.DotProductPairsSaturated(yv))
		sum += float32(hsum8(d.DotProductPairs(ones))) * float32(fp16At(x[:])*fp16At(y[:]))
	}
	return sum
}

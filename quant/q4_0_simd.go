//go:build goexperiment.simd && wasm

package quant

import "simd/archsimd"

// The wasm SIMD128 kernel of Q4_0; q4_0_scalar.go has its portable twin.

// dotQ4_0 computes the same as dotQ4_0Ref, bit for bit. The quants q-8
// (-8..7) times int8 activations are at most 1024 in magnitude, so the
// four products that meet in an int16 lane cannot overflow; the exact
// block sum is then scaled and added in the reference's order.
func dotQ4_0(n int, w, act []byte) float32 {
	nb := n / qk
	w, act = w[:nb*q4_0Bytes], act[:nb*q8_0Bytes]
	m4 := archsimd.BroadcastUint8x16(0x0f)
	eight := archsimd.BroadcastInt8x16(8)
	var sum float32
	for b := range nb {
		x := (*[q4_0Bytes]byte)(w[b*q4_0Bytes:])
		y := (*[q8_0Bytes]byte)(act[b*q8_0Bytes:])
		q := loadU8((*[16]byte)(x[2:]))
		lo := q.And(m4).BitsToInt8().Sub(eight)
		hi := q.ShiftAllRight(4).BitsToInt8().Sub(eight)
		s := dot8(lo, loadI8((*[16]byte)(y[2:]))).Add(dot8(hi, loadI8((*[16]byte)(y[18:]))))
		sum += float32(hsum(widen(s))) * float32(fp16At(x[:])*fp16At(y[:]))
	}
	return sum
}

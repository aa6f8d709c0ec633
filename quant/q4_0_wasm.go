//go:build goexperiment.simd

package quant

import "simd/archsimd"

// The wasm SIMD128 kernel of Q4_0 (kernels_wasm.go); dotQ4_0Go in q4_0.go
// is its portable twin.

// dotQ4_0SIMD128 computes the same as dotQ4_0Ref, bit for bit. The quants q-8
// (-8..7) times int8 activations are at most 1024 in magnitude, so the
// four products that meet in an int16 lane cannot overflow. Four blocks
// go at once: their exact integer sums are reduced together (hsum4),
// scaled in float32 lanes with the same IEEE operations as the reference,
// and added to the sum in block order.
func dotQ4_0SIMD128(n int, w, act []byte) float32 {
	nb := n / qk
	w, act = w[:nb*q4_0Bytes], act[:nb*q8_0Bytes]
	var sum float32
	b := 0
	for ; b+4 <= nb; b += 4 {
		x := (*[4 * q4_0Bytes]byte)(w[b*q4_0Bytes:])
		y := (*[4 * q8_0Bytes]byte)(act[b*q8_0Bytes:])
		s := hsum4(q4_0Sums((*[q4_0Bytes]byte)(x[:]), (*[q8_0Bytes]byte)(y[:])),
			q4_0Sums((*[q4_0Bytes]byte)(x[q4_0Bytes:]), (*[q8_0Bytes]byte)(y[q8_0Bytes:])),
			q4_0Sums((*[q4_0Bytes]byte)(x[2*q4_0Bytes:]), (*[q8_0Bytes]byte)(y[2*q8_0Bytes:])),
			q4_0Sums((*[q4_0Bytes]byte)(x[3*q4_0Bytes:]), (*[q8_0Bytes]byte)(y[3*q8_0Bytes:])))
		d := fp16x4At(x[:], q4_0Bytes).Mul(fp16x4At(y[:], q8_0Bytes))
		sum = addLanes(sum, s.ConvertToFloat32().Mul(d))
	}
	for ; b < nb; b++ {
		x := (*[q4_0Bytes]byte)(w[b*q4_0Bytes:])
		y := (*[q8_0Bytes]byte)(act[b*q8_0Bytes:])
		sum += float32(hsum(q4_0Sums(x, y))) * float32(fp16At(x[:])*fp16At(y[:]))
	}
	return sum
}

// q4_0Sums returns int32 lanes summing to the block's Σ (q-8)·y.
func q4_0Sums(x *[q4_0Bytes]byte, y *[q8_0Bytes]byte) archsimd.Int32x4 {
	q := loadU8((*[16]byte)(x[2:]))
	lo := q.And(archsimd.BroadcastUint8x16(0x0f)).BitsToInt8().Sub(archsimd.BroadcastInt8x16(8))
	hi := q.ShiftAllRight(4).BitsToInt8().Sub(archsimd.BroadcastInt8x16(8))
	return widen(dot8(lo, loadI8((*[16]byte)(y[2:]))).Add(dot8(hi, loadI8((*[16]byte)(y[18:])))))
}

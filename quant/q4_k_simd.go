//go:build goexperiment.simd && wasm

package quant

import "simd/archsimd"

// The wasm SIMD128 kernel of Q4_K; q4_k_scalar.go has its portable twin.

// dotQ4_K computes the same as dotQ4_KRef, bit for bit. Per 32-weight
// sub-block the nibble (0..15) times int8 products, at most 1920 in
// magnitude, meet four to an int16 lane (≤ 7680); the lanes are then
// multiplied by the 6-bit scale into int32 with i32x4.extmul_i16x8. The
// mins use the activation's block sums, as in the reference.
func dotQ4_K(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q4_KBytes], act[:nb*q8_KBytes]
	m4 := archsimd.BroadcastUint8x16(0x0f)
	var sum float32
	for b := range nb {
		x := (*[q4_KBytes]byte)(w[b*q4_KBytes:])
		yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		yd, _, bsums := q8KBlock(yb[:])
		sc, mn := scalesMinsK4(x[4:16])
		var acc archsimd.Int32x4
		var summ int32
		for g := range 4 {
			q0 := loadU8((*[16]byte)(x[16+32*g:]))
			q1 := loadU8((*[16]byte)(x[16+32*g+16:]))
			y := yb[4+64*g:]
			s1 := dot8(q0.And(m4).BitsToInt8(), loadI8((*[16]byte)(y))).
				Add(dot8(q1.And(m4).BitsToInt8(), loadI8((*[16]byte)(y[16:]))))
			s2 := dot8(q0.ShiftAllRight(4).BitsToInt8(), loadI8((*[16]byte)(y[32:]))).
				Add(dot8(q1.ShiftAllRight(4).BitsToInt8(), loadI8((*[16]byte)(y[48:]))))
			m1, m2 := int32(uint8(mn>>(16*g))), int32(uint8(mn>>(16*g+8)))
			v1 := archsimd.BroadcastInt16x8(int16(uint8(sc >> (16 * g))))
			v2 := archsimd.BroadcastInt16x8(int16(uint8(sc >> (16*g + 8))))
			acc = acc.Add(s1.MulWidenLo(v1)).Add(s1.MulWidenHi(v1)).
				Add(s2.MulWidenLo(v2)).Add(s2.MulWidenHi(v2))
			summ += m1*(bsum(bsums, 4*g)+bsum(bsums, 4*g+1)) + m2*(bsum(bsums, 4*g+2)+bsum(bsums, 4*g+3))
		}
		d, dmin := fp16At(x[:])*yd, fp16At(x[2:])*yd
		sum += float32(d*float32(hsum(acc))) - float32(dmin*float32(summ))
	}
	return sum
}

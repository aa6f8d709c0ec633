//go:build goexperiment.simd && wasm

package quant

import (
	"encoding/binary"
	"simd/archsimd"
)

// The wasm SIMD128 kernel of Q4_K; q4_k_scalar.go has its portable twin.

// dotQ4_K computes the same as dotQ4_KRef, bit for bit. Per 32-weight
// sub-block the nibble (0..15) times int8 products, at most 1920 in
// magnitude, meet four to an int16 lane (≤ 7680); the lanes are then
// multiplied by the 6-bit scale into int32 with i32x4.extmul_i16x8. The
// mins multiply the activation's block sums, as in the reference. Four
// blocks go at once: their exact integer sums are reduced together
// (hsum4), scaled in float32 lanes with the reference's IEEE operations,
// and added to the sum in block order.
func dotQ4_K(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q4_KBytes], act[:nb*q8_KBytes]
	var sum float32
	var acc, macc [4]archsimd.Int32x4
	for b := 0; b < nb; b += 4 {
		k := min(4, nb-b)
		for j := range k {
			x := (*[q4_KBytes]byte)(w[(b+j)*q4_KBytes:])
			yb := (*[q8_KBytes]byte)(act[(b+j)*q8_KBytes:])
			// the scales and mins (scalesMinsK4, by 32-bit words)
			const low6, low4, top2 = 0x3f3f3f3f, 0x0f0f0f0f, 0x03030303
			u0 := binary.LittleEndian.Uint32(x[4:])
			u1 := binary.LittleEndian.Uint32(x[8:])
			u2 := binary.LittleEndian.Uint32(x[12:])
			s03, s47 := u0&low6, u2&low4|(u0>>6&top2)<<4
			m03, m47 := u1&low6, u2>>4&low4|(u1>>6&top2)<<4
			// Σ min·bsum: the mins, each twice as int16 lanes, against
			// the 16 block sums
			mins := archsimd.BroadcastUint32x4(m03).SetElem(1, m47).ReshapeToUint8s().BitsToInt8()
			mv0 := asI16(mins.LookupOrZero(archsimd.LoadInt8x16Array(&dupIdx[0])))
			mv1 := asI16(mins.LookupOrZero(archsimd.LoadInt8x16Array(&dupIdx[1])))
			b0 := loadI16((*[16]byte)(yb[4+qkK:]))
			b1 := loadI16((*[16]byte)(yb[4+qkK+16:]))
			macc[j] = b0.MulWidenLo(mv0).Add(b0.MulWidenHi(mv0)).Add(b1.MulWidenLo(mv1).Add(b1.MulWidenHi(mv1)))
			m4 := archsimd.BroadcastUint8x16(0x0f)
			acc[j] = q4KGroup((*[32]byte)(x[16:]), (*[64]byte)(yb[4:]), s03, m4).
				Add(q4KGroup((*[32]byte)(x[48:]), (*[64]byte)(yb[68:]), s03>>16, m4)).
				Add(q4KGroup((*[32]byte)(x[80:]), (*[64]byte)(yb[132:]), s47, m4).
					Add(q4KGroup((*[32]byte)(x[112:]), (*[64]byte)(yb[196:]), s47>>16, m4)))
		}
		if k < 4 {
			for j := range k {
				x := w[(b+j)*q4_KBytes:]
				yd := f32At(act[(b+j)*q8_KBytes:])
				d, dmin := fp16At(x)*yd, fp16At(x[2:])*yd
				sum += float32(d*float32(hsum(acc[j]))) - float32(dmin*float32(hsum(macc[j])))
			}
			break
		}
		x, y := w[b*q4_KBytes:], act[b*q8_KBytes:]
		yd := archsimd.BroadcastFloat32x4(f32At(y)).SetElem(1, f32At(y[q8_KBytes:])).
			SetElem(2, f32At(y[2*q8_KBytes:])).SetElem(3, f32At(y[3*q8_KBytes:]))
		d, dmin := fp16x4At(x, q4_KBytes).Mul(yd), fp16x4At(x[2:], q4_KBytes).Mul(yd)
		is := hsum4(acc[0], acc[1], acc[2], acc[3]).ConvertToFloat32()
		ms := hsum4(macc[0], macc[1], macc[2], macc[3]).ConvertToFloat32()
		sum = addLanes(sum, d.Mul(is).Sub(dmin.Mul(ms)))
	}
	return sum
}

// q4KGroup returns int32 lanes summing to sc1·Σ lo·y[:32] + sc2·Σ hi·y[32:]
// over the 32 bytes q of a 64-weight group (sc1, sc2 the low two bytes of
// sc).
func q4KGroup(q *[32]byte, y *[64]byte, sc uint32, m4 archsimd.Uint8x16) archsimd.Int32x4 {
	q0 := loadU8((*[16]byte)(q[:]))
	q1 := loadU8((*[16]byte)(q[16:]))
	s1 := dot8(q0.And(m4).BitsToInt8(), loadI8((*[16]byte)(y[:]))).
		Add(dot8(q1.And(m4).BitsToInt8(), loadI8((*[16]byte)(y[16:]))))
	s2 := dot8(q0.ShiftAllRight(4).BitsToInt8(), loadI8((*[16]byte)(y[32:]))).
		Add(dot8(q1.ShiftAllRight(4).BitsToInt8(), loadI8((*[16]byte)(y[48:]))))
	v1 := archsimd.BroadcastInt16x8(int16(sc & 0xff))
	v2 := archsimd.BroadcastInt16x8(int16(sc >> 8 & 0xff))
	return s1.MulWidenLo(v1).Add(s1.MulWidenHi(v1)).Add(s2.MulWidenLo(v2).Add(s2.MulWidenHi(v2)))
}

// dupIdx[k] spreads bytes 4k..4k+3 of a vector to int16 lanes, each twice.
var dupIdx = [2][16]int8{
	{0, -128, 0, -128, 1, -128, 1, -128, 2, -128, 2, -128, 3, -128, 3, -128},
	{4, -128, 4, -128, 5, -128, 5, -128, 6, -128, 6, -128, 7, -128, 7, -128},
}

// asI16 reinterprets 16 bytes as eight int16 lanes.
func asI16(v archsimd.Int8x16) archsimd.Int16x8 { return v.ToBits().ReshapeToUint16s().BitsToInt16() }

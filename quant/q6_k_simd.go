//go:build goexperiment.simd && wasm

package quant

import (
	"encoding/binary"
	"math"
	"simd/archsimd"
)

// The wasm SIMD128 kernel of Q6_K; q6_k_scalar.go has its portable twin.

// dotQ6_K computes the same as dotQ6_KRef, bit for bit. It walks the
// block in storage order like the portable kernel: 16 lanes of ql[l],
// ql[l+32] and qh[l] give the quants of four 16-weight sub-blocks. The
// quants (-32..31) times int8 activations meet two to an int16 lane
// (≤ 8192) and are multiplied by the int8 sub-block scale into int32.
func dotQ6_K(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q6_KBytes], act[:nb*q8_KBytes]
	m4 := archsimd.BroadcastUint8x16(0x0f)
	m30 := archsimd.BroadcastUint8x16(0x30)
	off := archsimd.BroadcastInt8x16(32)
	var sum float32
	for b := range nb {
		x := (*[q6_KBytes]byte)(w[b*q6_KBytes:])
		yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		yd := math.Float32frombits(binary.LittleEndian.Uint32(yb[:]))
		var acc archsimd.Int32x4
		for h := range 2 {
			sc := (*[8]byte)(x[192+8*h:])
			y := (*[128]byte)(yb[4+128*h:])
			for half := range 2 { // lanes l in [16*half, 16*half+16): sub-blocks 2k+half
				l := 16 * half
				lo := loadU8((*[16]byte)(x[64*h+l:]))
				hi := loadU8((*[16]byte)(x[64*h+l+32:]))
				qh := loadU8((*[16]byte)(x[128+32*h+l:]))
				q0 := lo.And(m4).Or(qh.ShiftAllLeft(4).And(m30)).BitsToInt8().Sub(off)
				q1 := hi.And(m4).Or(qh.ShiftAllLeft(2).And(m30)).BitsToInt8().Sub(off)
				q2 := lo.ShiftAllRight(4).Or(qh.And(m30)).BitsToInt8().Sub(off)
				q3 := hi.ShiftAllRight(4).Or(qh.ShiftAllRight(2).And(m30)).BitsToInt8().Sub(off)
				acc = acc.Add(scaled(dot8(q0, loadI8((*[16]byte)(y[l:]))), sc[half]))
				acc = acc.Add(scaled(dot8(q1, loadI8((*[16]byte)(y[l+32:]))), sc[2+half]))
				acc = acc.Add(scaled(dot8(q2, loadI8((*[16]byte)(y[l+64:]))), sc[4+half]))
				acc = acc.Add(scaled(dot8(q3, loadI8((*[16]byte)(y[l+96:]))), sc[6+half]))
			}
		}
		sum += fp16At(x[208:]) * yd * float32(hsum(acc))
	}
	return sum
}

// scaled returns the int32 lane sums of s times the int8 scale sc.
func scaled(s archsimd.Int16x8, sc byte) archsimd.Int32x4 {
	v := archsimd.BroadcastInt16x8(int16(int8(sc)))
	return s.MulWidenLo(v).Add(s.MulWidenHi(v))
}

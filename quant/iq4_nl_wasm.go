//go:build goexperiment.simd

package quant

import "simd/archsimd"

// The wasm SIMD128 kernel of IQ4_NL (kernels_wasm.go); dotIQ4_NLGo in
// iq4_nl.go is its portable twin.

// dotIQ4_NLSIMD128 computes the same as dotIQ4_NLRef, bit for bit: i8x16.swizzle
// looks the levels up, four blocks' exact integer sums are reduced
// together (hsum4) and their scales multiplied in float32 lanes, and the
// fused multiply-adds (fma32) go one block at a time.
func dotIQ4_NLSIMD128(n int, w, act []byte) float32 {
	nb := n / qk
	w, act = w[:nb*iq4_NLBytes], act[:nb*q8_0Bytes]
	tab := archsimd.LoadInt8x16Array(&kvaluesIQ4NL)
	var sum float32
	b := 0
	for ; b+4 <= nb; b += 4 {
		x := (*[4 * iq4_NLBytes]byte)(w[b*iq4_NLBytes:])
		y := (*[4 * q8_0Bytes]byte)(act[b*q8_0Bytes:])
		blk := func(j int) archsimd.Int32x4 {
			return iq4NLSums((*[iq4_NLBytes]byte)(x[j*iq4_NLBytes:]), (*[q8_0Bytes]byte)(y[j*q8_0Bytes:]), tab)
		}
		s := hsum4(blk(0), blk(1), blk(2), blk(3)).ConvertToFloat32()
		d := fp16x4At(x[:], iq4_NLBytes).Mul(fp16x4At(y[:], q8_0Bytes))
		sum = fma32(s.GetElem(0), d.GetElem(0), sum)
		sum = fma32(s.GetElem(1), d.GetElem(1), sum)
		sum = fma32(s.GetElem(2), d.GetElem(2), sum)
		sum = fma32(s.GetElem(3), d.GetElem(3), sum)
	}
	for ; b < nb; b++ {
		x := (*[iq4_NLBytes]byte)(w[b*iq4_NLBytes:])
		y := (*[q8_0Bytes]byte)(act[b*q8_0Bytes:])
		sum = fma32(float32(hsum(iq4NLSums(x, y, tab))), float32(fp16At(x[:])*fp16At(y[:])), sum)
	}
	return sum
}

// iq4NLSums returns int32 lanes summing to the block's Σ level·y. A
// product is at most 127·128 in magnitude, so two meet in an int16 lane
// (dot8) and are widened before more are added.
func iq4NLSums(x *[iq4_NLBytes]byte, y *[q8_0Bytes]byte, tab archsimd.Int8x16) archsimd.Int32x4 {
	q := loadU8((*[16]byte)(x[2:]))
	lo := tab.LookupOrZero(q.And(archsimd.BroadcastUint8x16(0x0f)).BitsToInt8())
	hi := tab.LookupOrZero(q.ShiftAllRight(4).BitsToInt8())
	return widen(dot8(lo, loadI8((*[16]byte)(y[2:])))).Add(widen(dot8(hi, loadI8((*[16]byte)(y[18:])))))
}

//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"simd/archsimd"
)

// Helpers shared by the wasm SIMD128 kernels (the *_wasm.go files, listed in
// kernels_wasm.go). Each kernel computes the same as its portable twin;
// twins_test.go checks them against each other on random blocks.
//
// WebAssembly SIMD128 as exposed by simd/archsimd has no i32x4.dot_i16x8_s,
// no extadd_pairwise, no narrowing and no shuffles, so the integer dots
// multiply with i16x8.extmul (MulWidenLo/Hi), add in int16 lanes while the
// sum provably fits, and widen to int32 with the extend instructions.

// loadI8 loads 16 bytes as int8 lanes.
func loadI8(b *[16]byte) archsimd.Int8x16 { return archsimd.LoadUint8x16Array(b).BitsToInt8() }

// loadU8 loads 16 bytes as uint8 lanes.
func loadU8(b *[16]byte) archsimd.Uint8x16 { return archsimd.LoadUint8x16Array(b) }

// hsum returns the sum of the four lanes of v (wrapping, like int32 adds).
func hsum(v archsimd.Int32x4) int32 {
	return v.GetElem(0) + v.GetElem(1) + v.GetElem(2) + v.GetElem(3)
}

// widen returns the int32 pairwise sums of the eight int16 lanes of v:
// lane i is v[i] + v[i+4] (the lane order does not matter to the callers,
// which only ever add the lanes up).
func widen(v archsimd.Int16x8) archsimd.Int32x4 {
	return v.ExtendLo4ToInt32().Add(v.ExtendHi4ToInt32())
}

// dot8 returns the int16 lanes of x·y over 16 int8 pairs, two products a
// lane. Callers guarantee the pairs fit in int16 (|x·y| ≤ 16383 each).
func dot8(x, y archsimd.Int8x16) archsimd.Int16x8 {
	return x.MulWidenLo(y).Add(x.MulWidenHi(y))
}

// roundAway rounds the lanes of v half away from zero (C's roundf) and
// converts them to int32; |v| must be below 2^31.
func roundAway(v, half archsimd.Float32x4) archsimd.Int32x4 {
	t := v.Trunc()
	up := v.Sub(t).Abs().GreaterEqual(half) // the fraction is exact
	step := v.ToBits().And(archsimd.BroadcastUint32x4(0x80000000)).
		Or(archsimd.BroadcastFloat32x4(1).ToBits()).BitsToFloat32() // ±1 with v's sign
	return t.Add(step.Masked(up)).ConvertToInt32()
}

// packI8Idx[k] moves the low bytes of the four int32 lanes of vector k
// to bytes 4k..4k+3 (index 0x80 gives zero).
var packI8Idx = [4][16]int8{
	{0, 4, 8, 12, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128},
	{-128, -128, -128, -128, 0, 4, 8, 12, -128, -128, -128, -128, -128, -128, -128, -128},
	{-128, -128, -128, -128, -128, -128, -128, -128, 0, 4, 8, 12, -128, -128, -128, -128},
	{-128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, 0, 4, 8, 12},
}

// packI8 truncates the 16 int32 lanes of q to bytes, in order (wasm has
// no i32 to i8 narrowing in archsimd; four swizzles do it).
func packI8(q [4]archsimd.Int32x4) archsimd.Uint8x16 {
	var r archsimd.Int8x16
	for k := range q {
		b := q[k].ToBits().ReshapeToUint8s().BitsToInt8()
		p := b.LookupOrZero(archsimd.LoadInt8x16Array(&packI8Idx[k]))
		if k == 0 {
			r = p
		} else {
			r = r.Or(p)
		}
	}
	return r.ToBits()
}

// hsum4 returns [Σa, Σb, Σc, Σd], the lane sums of four vectors at once
// (wrapping int32 adds, like hsum): adjacent lanes are added by 32-bit
// shifts of the 64-bit halves and merged, then the two halves swapped in.
func hsum4(a, b, c, d archsimd.Int32x4) archsimd.Int32x4 {
	ab := addPairs(a, b) // [a0+a1, b0+b1, a2+a3, b2+b3]
	cd := addPairs(c, d)
	lo := ab.ToBits().ReshapeToUint64s().SetElem(1, cd.ToBits().ReshapeToUint64s().GetElem(0))
	hi := cd.ToBits().ReshapeToUint64s().SetElem(0, ab.ToBits().ReshapeToUint64s().GetElem(1))
	return lo.ReshapeToUint32s().BitsToInt32().Add(hi.ReshapeToUint32s().BitsToInt32())
}

// addPairs returns [a0+a1, b0+b1, a2+a3, b2+b3].
func addPairs(a, b archsimd.Int32x4) archsimd.Int32x4 {
	lo := archsimd.BroadcastUint64x2(0xffffffff)
	sa := a.Add(a.ToBits().ReshapeToUint64s().ShiftAllRight(32).ReshapeToUint32s().BitsToInt32())
	sb := b.Add(b.ToBits().ReshapeToUint64s().ShiftAllLeft(32).ReshapeToUint32s().BitsToInt32())
	return sa.ToBits().ReshapeToUint64s().And(lo).Or(sb.ToBits().ReshapeToUint64s().AndNot(lo)).ReshapeToUint32s().BitsToInt32()
}

// fp16x4 converts four fp16 values (the low halves of u's lanes) to
// float32, exactly, with no arithmetic on subnormal float32s (which the
// CPU under the wasm runtime may take a slow path for): a normal value's
// exponent and mantissa bits move to their float32 places and the
// exponent is rebiased by an integer add; a subnormal one (or zero) is its
// 10-bit mantissa converted to float32 times 2^-24; infinities and NaNs
// get the all-ones exponent (the NaN payload kept); the sign is or-ed in
// last.
func fp16x4(u archsimd.Uint32x4) archsimd.Float32x4 {
	m := u.And(archsimd.BroadcastUint32x4(0x7fff))
	em := m.ShiftAllLeft(13)
	bits := em.Add(archsimd.BroadcastUint32x4(112 << 23))
	bits = em.Add(archsimd.BroadcastUint32x4(224<<23)).IfElse(em.GreaterEqual(archsimd.BroadcastUint32x4(0x7c00<<13)), bits)
	sub := m.BitsToInt32().ConvertToFloat32().Mul(archsimd.BroadcastFloat32x4(0x1p-24)).ToBits()
	bits = sub.IfElse(em.Less(archsimd.BroadcastUint32x4(0x400<<13)), bits)
	return bits.Or(u.And(archsimd.BroadcastUint32x4(0x8000)).ShiftAllLeft(16)).BitsToFloat32()
}

// fp16x4At converts the fp16 values at p[0:2], p[stride:], p[2*stride:]
// and p[3*stride:] to float32 lanes (exactly, see fp16x4).
func fp16x4At(p []byte, stride int) archsimd.Float32x4 {
	p = p[:3*stride+2]
	return fp16x4(archsimd.BroadcastUint32x4(uint32(binary.LittleEndian.Uint16(p))).
		SetElem(1, uint32(binary.LittleEndian.Uint16(p[stride:]))).
		SetElem(2, uint32(binary.LittleEndian.Uint16(p[2*stride:]))).
		SetElem(3, uint32(binary.LittleEndian.Uint16(p[3*stride:]))))
}

// addLanes adds the four lanes of f to sum in lane order, as four
// separate float32 additions would.
func addLanes(sum float32, f archsimd.Float32x4) float32 {
	sum += f.GetElem(0)
	sum += f.GetElem(1)
	sum += f.GetElem(2)
	sum += f.GetElem(3)
	return sum
}

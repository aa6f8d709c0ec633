//go:build goexperiment.simd && wasm

package quant

import "simd/archsimd"

// The wasm SIMD128 F16 dot; float_scalar.go has its portable twin.
// SIMD128 has no float32 to float64 promotion in archsimd, so it sums the
// (exact) float32 products in eight float32 lanes instead of in float64:
// the result is within n·2^-24·Σ|x_i·y_i| of the exact dot (the
// reference's error is far below that), which simd_test.go checks. The F32
// dot keeps its float64 sum everywhere: F32 weight matrices are rare and
// its exact result is pinned by TestF32.

func dotF16(n int, w, act []byte) float32 {
	w, act = w[:2*n], act[:2*n]
	acc0 := archsimd.BroadcastFloat32x4(0)
	acc1 := acc0
	i := 0
	for ; i+16 <= 2*n; i += 16 {
		x := loadU8((*[16]byte)(w[i:])).ReshapeToUint16s()
		y := loadU8((*[16]byte)(act[i:])).ReshapeToUint16s()
		acc0 = acc0.Add(fp16x4(x.ExtendLo4ToUint32()).Mul(fp16x4(y.ExtendLo4ToUint32())))
		acc1 = acc1.Add(fp16x4(x.ExtendHi4ToUint32()).Mul(fp16x4(y.ExtendHi4ToUint32())))
	}
	acc := acc0.Add(acc1)
	sum := acc.GetElem(0) + acc.GetElem(1) + (acc.GetElem(2) + acc.GetElem(3))
	for ; i < 2*n; i += 2 {
		sum += fp16At(w[i:]) * fp16At(act[i:])
	}
	return sum
}

// fp16x4 converts four fp16 values (the low halves of u's lanes) to
// float32, exactly: the exponent and mantissa bits move to their float32
// places and a multiplication by 2^112 rebiases the exponent, for normal
// and subnormal values alike; infinities and NaNs get the all-ones
// exponent back; the sign is or-ed in last.
func fp16x4(u archsimd.Uint32x4) archsimd.Float32x4 {
	em := u.And(archsimd.BroadcastUint32x4(0x7fff)).ShiftAllLeft(13)
	f := em.BitsToFloat32().Mul(archsimd.BroadcastUint32x4(0x77800000).BitsToFloat32())
	special := em.GreaterEqual(archsimd.BroadcastUint32x4(0x7c00 << 13))
	bits := f.ToBits().Or(archsimd.BroadcastUint32x4(0x7f800000).Masked(special))
	return bits.Or(u.And(archsimd.BroadcastUint32x4(0x8000)).ShiftAllLeft(16)).BitsToFloat32()
}

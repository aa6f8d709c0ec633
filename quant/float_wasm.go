//go:build goexperiment.simd

package quant

import "simd/archsimd"

// The wasm SIMD128 F16 dot (kernels_wasm.go); dotF16Ref in float.go is its
// portable twin.
// SIMD128 has no float32 to float64 promotion in archsimd, so it sums the
// (exact) float32 products in eight float32 lanes instead of in float64:
// the result is within n·2^-24·Σ|x_i·y_i| of the exact dot (the
// reference's error is far below that), which twins_test.go checks. The F32
// dot keeps its float64 sum everywhere: F32 weight matrices are rare and
// its exact result is pinned by TestF32.

func dotF16SIMD128(n int, w, act []byte) float32 {
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

//go:build goexperiment.simd

package quant

import (
	"simd/archsimd"
)

// The wasm SIMD128 kernel of Q4_K (kernels_wasm.go); dotQ4_KGo in q4_k.go
// is its portable twin.

// q4KChunk is the number of blocks whose integer sums q4KIntSums
// computes in one call.
const q4KChunk = 32

// q4KIntSums sets out[j] to block j's Σ scale·q·y and out[q4KChunk+j] to
// its Σ min·bsum (as the reference computes them in int32), for the nb ≤
// q4KChunk weight blocks at x and activation blocks at y; in
// q4_k_wasm.s.
//
//go:noescape
func q4KIntSums(x, y *byte, nb int, out *[2 * q4KChunk]int32)

// dotQ4_KSIMD128 computes the same as dotQ4_KRef, bit for bit: q4KIntSums
// computes the exact integer sums of up to q4KChunk blocks, which are then
// scaled four at a time in float32 lanes with the reference's IEEE
// operations and added to the sum in block order.
func dotQ4_KSIMD128(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q4_KBytes], act[:nb*q8_KBytes]
	var sums [2 * q4KChunk]int32
	var sum float32
	for c := 0; c < nb; c += q4KChunk {
		k := min(q4KChunk, nb-c)
		q4KIntSums(&w[c*q4_KBytes], &act[c*q8_KBytes], k, &sums)
		sum = scaleQ4_KSums(sum, sums[:k], sums[q4KChunk:q4KChunk+k], w[c*q4_KBytes:], act[c*q8_KBytes:])
	}
	return sum
}

// scaleQ4_KSums adds Σ_j float32(d_j·float32(is[j])) - float32(dmin_j·
// float32(ms[j])) to sum in block order, as the reference does, where
// d_j and dmin_j are weight block j's fp16 scales times activation block
// j's float32 scale; four blocks at a time in float32 lanes.
func scaleQ4_KSums(sum float32, is, ms []int32, w, act []byte) float32 {
	k := len(is)
	ms = ms[:k]
	j := 0
	for ; j+4 <= k; j += 4 {
		x, y := w[j*q4_KBytes:], act[j*q8_KBytes:]
		yd := archsimd.BroadcastFloat32x4(f32At(y)).SetElem(1, f32At(y[q8_KBytes:])).
			SetElem(2, f32At(y[2*q8_KBytes:])).SetElem(3, f32At(y[3*q8_KBytes:]))
		d, dmin := fp16x4At(x, q4_KBytes).Mul(yd), fp16x4At(x[2:], q4_KBytes).Mul(yd)
		iv := archsimd.LoadInt32x4Array((*[4]int32)(is[j:])).ConvertToFloat32()
		mv := archsimd.LoadInt32x4Array((*[4]int32)(ms[j:])).ConvertToFloat32()
		sum = addLanes(sum, d.Mul(iv).Sub(dmin.Mul(mv)))
	}
	for ; j < k; j++ {
		x := w[j*q4_KBytes:]
		yd := f32At(act[j*q8_KBytes:])
		d, dmin := fp16At(x)*yd, fp16At(x[2:])*yd
		sum += float32(d*float32(is[j])) - float32(dmin*float32(ms[j]))
	}
	return sum
}

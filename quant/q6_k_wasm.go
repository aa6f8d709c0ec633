//go:build goexperiment.simd

package quant

import "simd/archsimd"

// The wasm SIMD128 kernel of Q6_K (kernels_wasm.go); dotQ6_KGo in q6_k.go
// is its portable twin.

// q6KChunk is the number of blocks whose integer sums q6KIntSums
// computes in one call.
const q6KChunk = 32

// q6KIntSums sets out[j] to block j's Σ scale·q·y (as the reference
// computes it in int32), for the nb ≤ q6KChunk weight blocks at x and
// activation blocks at y; in q6_k_wasm.s.
//
//go:noescape
func q6KIntSums(x, y *byte, nb int, out *[q6KChunk]int32)

// dotQ6_KSIMD128 computes the same as dotQ6_KRef, bit for bit: q6KIntSums
// computes the exact integer sums of up to q6KChunk blocks, which are then
// scaled four at a time in float32 lanes with the reference's IEEE
// operations and added to the sum in block order.
func dotQ6_KSIMD128(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q6_KBytes], act[:nb*q8_KBytes]
	var sums [q6KChunk]int32
	var sum float32
	for c := 0; c < nb; c += q6KChunk {
		k := min(q6KChunk, nb-c)
		q6KIntSums(&w[c*q6_KBytes], &act[c*q8_KBytes], k, &sums)
		sum = scaleQ6_KSums(sum, sums[:k], w[c*q6_KBytes:], act[c*q8_KBytes:])
	}
	return sum
}

// scaleQ6_KSums adds Σ_j d_j·dy_j·float32(sums[j]) to sum in block order,
// as the reference does (d_j weight block j's fp16 scale, dy_j activation
// block j's float32 scale); four blocks at a time in float32 lanes.
func scaleQ6_KSums(sum float32, sums []int32, w, act []byte) float32 {
	k := len(sums)
	j := 0
	for ; j+4 <= k; j += 4 {
		x, y := w[j*q6_KBytes:], act[j*q8_KBytes:]
		yd := archsimd.BroadcastFloat32x4(f32At(y)).SetElem(1, f32At(y[q8_KBytes:])).
			SetElem(2, f32At(y[2*q8_KBytes:])).SetElem(3, f32At(y[3*q8_KBytes:]))
		d := fp16x4At(x[208:], q6_KBytes).Mul(yd)
		sum = addLanes(sum, d.Mul(archsimd.LoadInt32x4Array((*[4]int32)(sums[j:])).ConvertToFloat32()))
	}
	for ; j < k; j++ {
		sum += fp16At(w[j*q6_KBytes+208:]) * f32At(act[j*q8_KBytes:]) * float32(sums[j])
	}
	return sum
}

//go:build goexperiment.simd

package quant

import "simd/archsimd"

// The wasm SIMD128 kernels of Q8_0 (kernels_wasm.go); dotQ8_0Go and
// quantizeQ8_0Ref in q8_0.go are their portable twins.

// q8_0Chunk is the number of blocks whose integer sums q8_0IntSums
// computes in one call.
const q8_0Chunk = 64

// q8_0IntSums sets out[j] to block j's Σ x·y, for the nb ≤ q8_0Chunk
// Q8_0 weight blocks at x and activation blocks at y; in q8_0_wasm.s.
//
//go:noescape
func q8_0IntSums(x, y *byte, nb int, out *[q8_0Chunk]int32)

// dotQ8_0SIMD128 computes the same as dotQ8_0Ref, bit for bit: q8_0IntSums
// computes the exact integer sums of up to q8_0Chunk blocks, which are
// then scaled four at a time in float32 lanes with the reference's IEEE
// operations and added to the sum in block order.
func dotQ8_0SIMD128(n int, w, act []byte) float32 {
	nb := n / qk
	w, act = w[:nb*q8_0Bytes], act[:nb*q8_0Bytes]
	var sums [q8_0Chunk]int32
	var sum float32
	for c := 0; c < nb; c += q8_0Chunk {
		k := min(q8_0Chunk, nb-c)
		q8_0IntSums(&w[c*q8_0Bytes], &act[c*q8_0Bytes], k, &sums)
		sum = scaleQ8_0Sums(sum, sums[:k], w[c*q8_0Bytes:], act[c*q8_0Bytes:], q8_0Bytes)
	}
	return sum
}

// scaleQ8_0Sums adds Σ_j float32(sums[j])·float32(dx_j·dy_j) to sum in
// block order, as the reference does, where dx_j and dy_j are the fp16
// scales of weight and activation block j (weight blocks of xsize bytes,
// starting with their scale: Q8_0 or Q4_0).
func scaleQ8_0Sums(sum float32, sums []int32, x, y []byte, xsize int) float32 {
	j := 0
	for ; j+4 <= len(sums); j += 4 {
		d := fp16x4At(x[j*xsize:], xsize).Mul(fp16x4At(y[j*q8_0Bytes:], q8_0Bytes))
		s := archsimd.LoadInt32x4Array((*[4]int32)(sums[j:])).ConvertToFloat32()
		sum = addLanes(sum, s.Mul(d))
	}
	for ; j < len(sums); j++ {
		sum += float32(sums[j]) * float32(fp16At(x[j*xsize:])*fp16At(y[j*q8_0Bytes:]))
	}
	return sum
}

// quantizeQ8_0SIMD128 computes the same as quantizeQ8_0Ref, byte for byte:
// amax by lane maxima, then roundf(x·id) as trunc(v) ± 1 where the
// fraction |v - trunc(v)| (exact) is at least one half.
func quantizeQ8_0SIMD128(dst []byte, src []float32) {
	nb := len(src) / qk
	src, dst = src[:nb*qk], dst[:nb*q8_0Bytes]
	for b := range nb {
		x := (*[qk]float32)(src[b*qk:])
		blk := (*[q8_0Bytes]byte)(dst[b*q8_0Bytes:])
		var v [8]archsimd.Float32x4
		m := archsimd.BroadcastFloat32x4(0)
		for i := range v {
			v[i] = archsimd.LoadFloat32x4Array((*[4]float32)(x[4*i:]))
			m = m.Max(v[i].Abs())
		}
		amax := max(m.GetElem(0), m.GetElem(1), m.GetElem(2), m.GetElem(3))
		if amax != amax { // a NaN: keep the reference's exact behaviour
			quantizeQ8_0Ref(blk[:], x[:])
			continue
		}
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putFP16(blk[:], d)
		vid := archsimd.BroadcastFloat32x4(id)
		half := archsimd.BroadcastFloat32x4(0.5)
		for i := 0; i < 8; i += 4 {
			var q [4]archsimd.Int32x4
			for k := range q {
				q[k] = roundAway(v[i+k].Mul(vid), half)
			}
			packI8(q).StoreArray((*[16]byte)(blk[2+4*i:]))
		}
	}
}

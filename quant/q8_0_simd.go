//go:build goexperiment.simd && wasm

package quant

import "simd/archsimd"

// The wasm SIMD128 kernels of Q8_0; q8_0_scalar.go has their portable twins.

// dotQ8_0 computes the same as dotQ8_0Ref, bit for bit: the per-block
// integer sum is exact and is scaled and added in the reference's order,
// four blocks at once as in dotQ4_0. The products of two int8 lanes reach
// 16384 ((-128)²), so pairs of them may not fit in int16: each extmul
// result is widened to int32 at once.
func dotQ8_0(n int, w, act []byte) float32 {
	nb := n / qk
	w, act = w[:nb*q8_0Bytes], act[:nb*q8_0Bytes]
	var sum float32
	b := 0
	for ; b+4 <= nb; b += 4 {
		x := (*[4 * q8_0Bytes]byte)(w[b*q8_0Bytes:])
		y := (*[4 * q8_0Bytes]byte)(act[b*q8_0Bytes:])
		s := hsum4(q8_0Sums((*[q8_0Bytes]byte)(x[:]), (*[q8_0Bytes]byte)(y[:])),
			q8_0Sums((*[q8_0Bytes]byte)(x[q8_0Bytes:]), (*[q8_0Bytes]byte)(y[q8_0Bytes:])),
			q8_0Sums((*[q8_0Bytes]byte)(x[2*q8_0Bytes:]), (*[q8_0Bytes]byte)(y[2*q8_0Bytes:])),
			q8_0Sums((*[q8_0Bytes]byte)(x[3*q8_0Bytes:]), (*[q8_0Bytes]byte)(y[3*q8_0Bytes:])))
		d := fp16x4At(x[:], q8_0Bytes).Mul(fp16x4At(y[:], q8_0Bytes))
		sum = addLanes(sum, s.ConvertToFloat32().Mul(d))
	}
	for ; b < nb; b++ {
		x := (*[q8_0Bytes]byte)(w[b*q8_0Bytes:])
		y := (*[q8_0Bytes]byte)(act[b*q8_0Bytes:])
		sum += float32(hsum(q8_0Sums(x, y))) * float32(fp16At(x[:])*fp16At(y[:]))
	}
	return sum
}

// q8_0Sums returns int32 lanes summing to the block's Σ x·y.
func q8_0Sums(x, y *[q8_0Bytes]byte) archsimd.Int32x4 {
	x0, x1 := loadI8((*[16]byte)(x[2:])), loadI8((*[16]byte)(x[18:]))
	y0, y1 := loadI8((*[16]byte)(y[2:])), loadI8((*[16]byte)(y[18:]))
	acc := widen(x0.MulWidenLo(y0)).Add(widen(x0.MulWidenHi(y0)))
	return acc.Add(widen(x1.MulWidenLo(y1))).Add(widen(x1.MulWidenHi(y1)))
}

// quantizeQ8_0 computes the same as quantizeQ8_0Ref, byte for byte:
// amax by lane maxima, then roundf(x·id) as trunc(v) ± 1 where the
// fraction |v - trunc(v)| (exact) is at least one half.
func quantizeQ8_0(dst []byte, src []float32) {
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

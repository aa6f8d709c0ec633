//go:build goexperiment.simd

package quant

import (
	"math"
	"simd/archsimd"
)

// The wasm SIMD128 activation quantizer (kernels_wasm.go); quantizeActGo in
// actquant.go is its portable twin.

// quantizeActSIMD128 is quantizeActGo with quantizeActBlockSIMD128.
func quantizeActSIMD128(dst []byte, src []float32, size int) {
	for b := range len(src) / qk {
		quantizeActBlockSIMD128(dst[b*size:(b+1)*size], src[b*qk:(b+1)*qk])
	}
}

// quantizeActBlockSIMD128 is quantizeActBlockRef, bit for bit (it sends
// blocks with an infinity or a NaN there): the same float32 x·id in four
// lanes, rounded half to even by f32x4.nearest; |x·id| ≤ 127·(1+2^-23)^2
// rounds to at most 127, so the low bytes of the int32 lanes are the
// quants with no clamp.
func quantizeActBlockSIMD128(blk []byte, x []float32) (d float32, sum int32) {
	qs, xa := (*[qk]byte)(blk[len(blk)-qk:]), (*[qk]float32)(x[:qk])
	var v [8]archsimd.Float32x4
	for i := range v {
		v[i] = archsimd.LoadFloat32x4Array((*[4]float32)(xa[4*i:]))
	}
	// the sum of the magnitudes is finite only if every value is
	s, m := v[0].Abs(), v[0].Abs()
	for _, u := range v[1:] {
		s, m = s.Add(u.Abs()), m.Max(u.Abs())
	}
	if !(s.GetElem(0) <= math.MaxFloat32 && s.GetElem(1) <= math.MaxFloat32 && s.GetElem(2) <= math.MaxFloat32 && s.GetElem(3) <= math.MaxFloat32) {
		return quantizeActBlockRef(blk, x)
	}
	amax := max(m.GetElem(0), m.GetElem(1), m.GetElem(2), m.GetElem(3))
	d = amax / q8MaxLevel
	var id float32
	if amax != 0 {
		id = q8MaxLevel / amax
	}
	idv := archsimd.BroadcastFloat32x4(id)
	var q [8]archsimd.Int32x4
	acc := archsimd.BroadcastInt32x4(0)
	for i := range q {
		q[i] = v[i].Mul(idv).Round().ConvertToInt32()
		acc = acc.Add(q[i])
	}
	packI8([4]archsimd.Int32x4(q[:4])).StoreArray((*[16]byte)(qs[:]))
	packI8([4]archsimd.Int32x4(q[4:])).StoreArray((*[16]byte)(qs[16:]))
	sum = hsum(acc)
	putActScales(blk, d, sum)
	return d, sum
}

//go:build goexperiment.simd

package quant

import "simd/archsimd"

// The AVX2 activation quantizer (kernels_amd64.go); quantizeActGo in
// actquant.go is its portable twin.

// quantizeActAVX2 is quantizeActGo with quantizeActBlockAVX2.
func quantizeActAVX2(dst []byte, src []float32, size int) {
	for b := range len(src) / qk {
		quantizeActBlockAVX2(dst[b*size:(b+1)*size], src[b*qk:(b+1)*qk])
	}
}

// quantizeActBlockAVX2 is quantizeActBlockRef, bit for bit (it sends blocks
// with an infinity or a NaN there): the same float32 x·id in eight lanes,
// rounded half to even by VROUNDPS; |x·id| ≤ 127·(1+2^-23)^2 rounds to at
// most 127, so no clamp is needed.
func quantizeActBlockAVX2(blk []byte, x []float32) (d float32, sum int32) {
	qs, x := blk[len(blk)-qk:], x[:qk]
	v := [4]archsimd.Float32x8{
		archsimd.LoadFloat32x8Array((*[8]float32)(x[0:])), archsimd.LoadFloat32x8Array((*[8]float32)(x[8:])),
		archsimd.LoadFloat32x8Array((*[8]float32)(x[16:])), archsimd.LoadFloat32x8Array((*[8]float32)(x[24:])),
	}
	mag := archsimd.BroadcastUint32x8(0x7fffffff)
	a := func(i int) archsimd.Float32x8 { return v[i].AsUint32x8().And(mag).AsFloat32x8() }
	// the sum of the magnitudes is finite only if every value is
	exp := archsimd.BroadcastUint32x8(0x7f800000)
	if s := a(0).Add(a(1)).Add(a(2).Add(a(3))).AsUint32x8().And(exp); s.Equal(exp).ToBits() != 0 {
		return quantizeActBlockRef(blk, x)
	}
	m4 := a(0).Max(a(1)).Max(a(2).Max(a(3)))
	m2 := m4.GetLo().Max(m4.GetHi())
	amax := max(m2.GetElem(0), m2.GetElem(1), m2.GetElem(2), m2.GetElem(3))
	d = amax / q8MaxLevel
	var id float32
	if amax != 0 {
		id = q8MaxLevel / amax
	}
	idv := archsimd.BroadcastFloat32x8(id)
	q := func(i int) archsimd.Int32x8 { return v[i].Mul(idv).Round().ConvertToInt32() }
	q0, q1, q2, q3 := q(0), q(1), q(2), q(3)
	// the low byte of each int32 lane: per 128-bit half, q0's four at
	// bytes 0..3, q1's at 4..7, …; then the halves' dwords interleaved
	p := &quantizePackShuffles
	b := q0.AsInt8x32().PermuteOrZeroGrouped(archsimd.LoadInt8x32Array(&p[0])).AsInt32x8().Or(
		q1.AsInt8x32().PermuteOrZeroGrouped(archsimd.LoadInt8x32Array(&p[1])).AsInt32x8()).Or(
		q2.AsInt8x32().PermuteOrZeroGrouped(archsimd.LoadInt8x32Array(&p[2])).AsInt32x8().Or(
			q3.AsInt8x32().PermuteOrZeroGrouped(archsimd.LoadInt8x32Array(&p[3])).AsInt32x8()))
	b.Permute(archsimd.LoadUint32x8Array(&quantizePackOrder)).AsUint8x32().StoreArray((*[32]byte)(qs))
	t := q0.Add(q1).Add(q2.Add(q3))
	u := t.GetLo().Add(t.GetHi())
	sum = u.GetElem(0) + u.GetElem(1) + u.GetElem(2) + u.GetElem(3)
	putActScales(blk, d, sum)
	return d, sum
}

// quantizePackShuffles[k] moves the low bytes of the four int32 lanes of
// each 128-bit half to bytes 4k..4k+3 of the half (VPSHUFB; -1 gives 0).
var quantizePackShuffles = [4][32]int8{
	{0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
	{-1, -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1},
	{-1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1},
	{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12},
}

// quantizePackOrder puts the dwords (four quants each) in block order.
var quantizePackOrder = [8]uint32{0, 4, 1, 5, 2, 6, 3, 7}

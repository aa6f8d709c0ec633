//go:build goexperiment.simd

package quant

import "simd/archsimd"

// The wasm SIMD128 twins of the vector kernels of vec.go (kernels_wasm.go);
// vec_test.go checks them against the references. fp16x4 (float_wasm.go)
// widens the fp16 values.

// dotF16VecSIMD128 is dotF16VecRef, bit for bit: acc0 holds its running
// sums 0-3, acc1 sums 4-7, reduced as it does.
func dotF16VecSIMD128(a []float32, b []uint16) float32 {
	n := len(a)
	b = b[:n]
	acc0 := archsimd.BroadcastFloat32x4(0)
	acc1 := acc0
	i := 0
	for ; i+8 <= n; i += 8 {
		h := archsimd.LoadUint16x8Array((*[8]uint16)(b[i:]))
		x0 := archsimd.LoadFloat32x4Array((*[4]float32)(a[i:]))
		x1 := archsimd.LoadFloat32x4Array((*[4]float32)(a[i+4:]))
		acc0 = acc0.Add(x0.Mul(fp16x4(h.ExtendLo4ToUint32())))
		acc1 = acc1.Add(x1.Mul(fp16x4(h.ExtendHi4ToUint32())))
	}
	acc := acc0.Add(acc1)
	sum := acc.GetElem(0) + acc.GetElem(2) + (acc.GetElem(1) + acc.GetElem(3))
	for ; i < n; i++ {
		sum += float32(a[i] * FP16ToFP32(b[i]))
	}
	return sum
}

// axpyF16SIMD128 is axpyF16Ref, bit for bit (each element is one float32
// multiply and one add in both).
func axpyF16SIMD128(y []float32, a float32, x []uint16) {
	n := len(y)
	x = x[:n]
	va := archsimd.BroadcastFloat32x4(a)
	i := 0
	for ; i+8 <= n; i += 8 {
		h := archsimd.LoadUint16x8Array((*[8]uint16)(x[i:]))
		y0 := (*[4]float32)(y[i:])
		y1 := (*[4]float32)(y[i+4:])
		archsimd.LoadFloat32x4Array(y0).Add(va.Mul(fp16x4(h.ExtendLo4ToUint32()))).StoreArray(y0)
		archsimd.LoadFloat32x4Array(y1).Add(va.Mul(fp16x4(h.ExtendHi4ToUint32()))).StoreArray(y1)
	}
	for ; i < n; i++ {
		y[i] += float32(a * FP16ToFP32(x[i]))
	}
}

// roundFP16SIMD128 is roundFP16Ref, bit for bit (NaNs stay NaNs): v =
// x·scale rounded to the nearest fp16 value, ties to even, in float32
// lanes. At or above 2^-14 (fp16's normals) the 13 low mantissa bits are rounded off in
// the integer bits, and 65520 or more becomes infinity; below, adding and
// subtracting 0.5 rounds to a multiple of 2^-24 (fp16's subnormal step).
func roundFP16SIMD128(x []float32, scale float32) {
	n := len(x)
	vs := archsimd.BroadcastFloat32x4(scale)
	half := archsimd.BroadcastFloat32x4(0.5)
	i := 0
	for ; i+4 <= n; i += 4 {
		p := (*[4]float32)(x[i:])
		v := archsimd.LoadFloat32x4Array(p).Mul(vs)
		b := v.ToBits()
		a := b.And(archsimd.BroadcastUint32x4(0x7fffffff))
		r := a.Add(archsimd.BroadcastUint32x4(0xfff)).Add(a.ShiftAllRight(13).And(archsimd.BroadcastUint32x4(1))).And(archsimd.BroadcastUint32x4(0xffffe000))
		r = archsimd.BroadcastUint32x4(0x7f800000).IfElse(r.GreaterEqual(archsimd.BroadcastUint32x4(0x47800000)), r)
		sub := a.BitsToFloat32().Add(half).Sub(half).ToBits()
		r = sub.IfElse(a.Less(archsimd.BroadcastUint32x4(0x38800000)), r)
		r = r.Or(b.And(archsimd.BroadcastUint32x4(0x80000000)))
		r = b.IfElse(a.Greater(archsimd.BroadcastUint32x4(0x7f800000)), r) // NaN
		r.BitsToFloat32().StoreArray(p)
	}
	roundFP16Ref(x[i:], scale)
}

// f16RowMax is the longest fp16 row (a head's key or value) that
// scoresF16SIMD128 and accumulateF16SIMD128 widen on their stack; longer
// ones, or ones not a multiple of 8, take the references.
const f16RowMax = 256

// scoresF16SIMD128 is scoresF16Ref, bit for bit (scoresF16Rows in
// attn_wasm.s): each key widened once, then dotted with every head's
// query as dotF16VecSIMD128 sums.
func scoresF16SIMD128(sc, q []float32, keys []uint16, hd, stride, n int) {
	g := len(q) / hd
	if hd%8 != 0 || hd > f16RowMax || n <= 0 || g == 0 {
		scoresF16Ref(sc, q, keys, hd, stride, n)
		return
	}
	sc, q, keys = sc[:g*n], q[:g*hd], keys[:(n-1)*stride+hd]
	var k [f16RowMax]float32
	scoresF16Rows(&sc[0], &q[0], &keys[0], &k[0], hd, stride, n, g)
}

// accumulateF16SIMD128 is accumulateF16Ref, bit for bit
// (accumulateF16Rows in attn_wasm.s): each value row widened once, then
// added to every head's output times its weight.
func accumulateF16SIMD128(out, w []float32, values []uint16, hd, stride, n int) {
	g := len(out) / hd
	if hd%8 != 0 || hd > f16RowMax || n <= 0 || g == 0 {
		accumulateF16Ref(out, w, values, hd, stride, n)
		return
	}
	out, w, values = out[:g*hd], w[:g*n], values[:(n-1)*stride+hd]
	var v [f16RowMax]float32
	accumulateF16Rows(&out[0], &w[0], &values[0], &v[0], hd, stride, n, g)
}

// In attn_wasm.s.
//
//go:noescape
func scoresF16Rows(sc, q *float32, keys *uint16, kbuf *float32, hd, stride, n, heads int)

//go:noescape
func accumulateF16Rows(out, w *float32, vals *uint16, vbuf *float32, hd, stride, n, heads int)

//go:build goexperiment.simd

package quant

import "simd/archsimd"

// The AVX2 twins of the vector kernels of vec.go (kernels_amd64.go), bit
// for bit; vec_test.go checks them against the references.

// fp16x8 converts eight fp16 values to float32 exactly, as fp16x4
// (simd128_wasm.go) does (the archsimd API has no F16C VCVTPH2PS), with no
// arithmetic on subnormal float32s (a microcode assist, tens of cycles,
// on x86): normals rebiased by an integer add, subnormals and zeros their
// mantissa converted to float32 times 2^-24, infinities and NaNs the
// all-ones exponent, the sign or-ed in last.
func fp16x8(h archsimd.Uint16x8) archsimd.Float32x8 {
	u := h.ExtendToUint32()
	m := u.And(archsimd.BroadcastUint32x8(0x7fff)).AsInt32x8()
	em := m.ShiftAllLeft(13) // < 2^28: signed compares are the unsigned ones
	bits := em.Add(archsimd.BroadcastInt32x8(112 << 23))
	bits = em.Add(archsimd.BroadcastInt32x8(224<<23)).IfElse(em.Greater(archsimd.BroadcastInt32x8(0x7c00<<13-1)), bits)
	sub := m.ConvertToFloat32().Mul(archsimd.BroadcastFloat32x8(0x1p-24)).AsInt32x8()
	bits = sub.IfElse(archsimd.BroadcastInt32x8(0x400<<13).Greater(em), bits)
	sign := u.And(archsimd.BroadcastUint32x8(0x8000)).ShiftAllLeft(16)
	return bits.AsUint32x8().Or(sign).AsFloat32x8()
}

// dotF16VecAVX2 is dotF16VecRef, bit for bit: eight float32 lanes, reduced
// as it does.
func dotF16VecAVX2(a []float32, b []uint16) float32 {
	n := len(a)
	b = b[:n]
	acc := archsimd.BroadcastFloat32x8(0)
	i := 0
	for ; i+8 <= n; i += 8 {
		x := archsimd.LoadFloat32x8Array((*[8]float32)(a[i:]))
		h := archsimd.LoadUint16x8Array((*[8]uint16)(b[i:]))
		acc = acc.Add(x.Mul(fp16x8(h)))
	}
	t := acc.GetLo().Add(acc.GetHi())
	sum := t.GetElem(0) + t.GetElem(2) + (t.GetElem(1) + t.GetElem(3))
	for ; i < n; i++ {
		sum += float32(a[i] * FP16ToFP32(b[i]))
	}
	return sum
}

// axpyF16AVX2 is axpyF16Ref, bit for bit: y += a·x, eight elements at a
// time.
func axpyF16AVX2(y []float32, a float32, x []uint16) {
	n := len(y)
	x = x[:n]
	va := archsimd.BroadcastFloat32x8(a)
	i := 0
	for ; i+8 <= n; i += 8 {
		h := archsimd.LoadUint16x8Array((*[8]uint16)(x[i:]))
		yp := (*[8]float32)(y[i:])
		archsimd.LoadFloat32x8Array(yp).Add(va.Mul(fp16x8(h))).StoreArray(yp)
	}
	for ; i < n; i++ {
		y[i] += float32(a * FP16ToFP32(x[i]))
	}
}

// expfPolyX4 is expfPoly on four float64 lanes, before the rounding to float32:
// the same operations in the same order (no fused multiply-adds), 2^k made
// from k+1023 in the exponent bits (k+2^52+1023 holds it in its low bits).
// A NaN lane comes out NaN.
func expfPolyX4(x archsimd.Float64x4) archsimd.Float64x4 {
	xc := x.Max(archsimd.BroadcastFloat64x4(expMin)).Min(archsimd.BroadcastFloat64x4(expMax))
	h := xc.AsUint64x4().And(archsimd.BroadcastUint64x4(1 << 63)).Or(archsimd.BroadcastUint64x4(0x3fe0000000000000)).AsFloat64x4() // ±0.5
	k := archsimd.BroadcastFloat64x4(expLog2e).Mul(xc).Add(h).Trunc()
	hi := xc.Sub(k.Mul(archsimd.BroadcastFloat64x4(expLn2Hi)))
	lo := k.Mul(archsimd.BroadcastFloat64x4(expLn2Lo))
	r := hi.Sub(lo)
	t := r.Mul(r)
	p := archsimd.BroadcastFloat64x4(expP4).Add(t.Mul(archsimd.BroadcastFloat64x4(expP5)))
	p = archsimd.BroadcastFloat64x4(expP3).Add(t.Mul(p))
	p = archsimd.BroadcastFloat64x4(expP2).Add(t.Mul(p))
	p = archsimd.BroadcastFloat64x4(expP1).Add(t.Mul(p))
	c := r.Sub(t.Mul(p))
	y := archsimd.BroadcastFloat64x4(1).Sub(lo.Sub(r.Mul(c).Div(archsimd.BroadcastFloat64x4(2).Sub(c))).Sub(hi))
	scale := k.Add(archsimd.BroadcastFloat64x4(0x1p52 + 1023)).AsUint64x4().ShiftAllLeft(52).AsFloat64x4()
	return x.IfElse(x.IsNaN(), y.Mul(scale))
}

// expShiftAVX2 is expShiftRef, bit for bit: x[i] = e^(x[i]-m).
func expShiftAVX2(x []float32, m float32) {
	n := len(x)
	vm := archsimd.BroadcastFloat32x4(m)
	i := 0
	for ; i+4 <= n; i += 4 {
		p := (*[4]float32)(x[i:])
		v := archsimd.LoadFloat32x4Array(p).Sub(vm)
		expfPolyX4(v.ConvertToFloat64()).ConvertToFloat32().StoreArray(p)
	}
	for ; i < n; i++ {
		x[i] = expf(x[i] - m)
	}
}

// swigluAVX2 is swigluRef, bit for bit: gate = gate/(1+e^-gate)·up.
func swigluAVX2(gate, up []float32) {
	n := len(gate)
	up = up[:n]
	one := archsimd.BroadcastFloat32x4(1)
	i := 0
	for ; i+4 <= n; i += 4 {
		p := (*[4]float32)(gate[i:])
		g := archsimd.LoadFloat32x4Array(p)
		e := expfPolyX4(g.Neg().ConvertToFloat64()).ConvertToFloat32()
		g.Div(one.Add(e)).Mul(archsimd.LoadFloat32x4Array((*[4]float32)(up[i:]))).StoreArray(p)
	}
	for ; i < n; i++ {
		g := gate[i]
		gate[i] = g / (1 + expf(-g)) * up[i]
	}
}

// roundFP16AVX2 is roundFP16Ref, bit for bit (NaNs stay NaNs), eight lanes
// at a time as roundFP16SIMD128 (vec_wasm.go) does it. The bit patterns compared are
// those of |v|, below 2^31, so the signed compares are the unsigned ones.
func roundFP16AVX2(x []float32, scale float32) {
	n := len(x)
	vs := archsimd.BroadcastFloat32x8(scale)
	half := archsimd.BroadcastFloat32x8(0.5)
	i := 0
	for ; i+8 <= n; i += 8 {
		p := (*[8]float32)(x[i:])
		v := archsimd.LoadFloat32x8Array(p).Mul(vs)
		b := v.AsInt32x8()
		a := b.And(archsimd.BroadcastInt32x8(0x7fffffff))
		r := a.Add(archsimd.BroadcastInt32x8(0xfff)).Add(a.ShiftAllRight(13).And(archsimd.BroadcastInt32x8(1))).And(archsimd.BroadcastInt32x8(-0x2000))
		r = archsimd.BroadcastInt32x8(0x7f800000).IfElse(r.Greater(archsimd.BroadcastInt32x8(0x47800000-1)), r)
		sub := a.AsFloat32x8().Add(half).Sub(half).AsInt32x8()
		r = sub.IfElse(archsimd.BroadcastInt32x8(0x38800000).Greater(a), r)
		r = r.Or(b.And(archsimd.BroadcastInt32x8(-0x80000000)))
		r = b.IfElse(a.Greater(archsimd.BroadcastInt32x8(0x7f800000)), r) // NaN
		r.AsFloat32x8().StoreArray(p)
	}
	roundFP16Ref(x[i:], scale)
}

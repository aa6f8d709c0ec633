//go:build goexperiment.simd && amd64

package engine

import (
	"simd/archsimd"

	"github.com/picolm/picolm-wasm/quant"
)

// The native AVX2 twins of the attention kernels of ops.go (dotF16,
// axpyF16), bit for bit; kernels_test.go checks them against each other.
// Without AVX2 they are the readable kernels.

var hasAVX2 = archsimd.X86.AVX2() // fixed at start-up, never written again

// fp16x8 converts eight fp16 values to float32 as kernels_simd.go's fp16x4
// does (the archsimd API has no F16C VCVTPH2PS): the exponent and mantissa
// move to their float32 places and a multiplication by 2^112 rebiases the
// exponent, exactly, for normal and subnormal values alike; infinities and
// NaNs get the all-ones exponent back; the sign is or-ed in last.
func fp16x8(h archsimd.Uint16x8) archsimd.Float32x8 {
	u := h.ExtendToUint32()
	em := u.And(archsimd.BroadcastUint32x8(0x7fff)).ShiftAllLeft(13)
	f := em.AsFloat32x8().Mul(archsimd.BroadcastUint32x8(0x77800000).AsFloat32x8()) // ×2^112
	// em < 2^28, so the signed compare is the unsigned one.
	special := em.AsInt32x8().Greater(archsimd.BroadcastInt32x8(0x7c00<<13 - 1)) // exponent 31: Inf, NaN
	bits := f.AsUint32x8().Or(archsimd.BroadcastUint32x8(0x7f800000).Masked(special))
	sign := u.And(archsimd.BroadcastUint32x8(0x8000)).ShiftAllLeft(16)
	return bits.Or(sign).AsFloat32x8()
}

// dotF16Vec is dotF16: eight float32 lanes, reduced as it does.
func dotF16Vec(a []float32, b []uint16) float32 {
	if !hasAVX2 {
		return dotF16(a, b)
	}
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
		sum += float32(a[i] * quant.FP16ToFP32(b[i]))
	}
	return sum
}

// axpyF16Vec is axpyF16: y += a·x, eight elements at a time.
func axpyF16Vec(y []float32, a float32, x []uint16) {
	if !hasAVX2 {
		axpyF16(y, a, x)
		return
	}
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
		y[i] += float32(a * quant.FP16ToFP32(x[i]))
	}
}

// exp4 is expfPoly on four float64 lanes, before the rounding to float32:
// the same operations in the same order (no fused multiply-adds), 2^k made
// from k+1023 in the exponent bits (k+2^52+1023 holds it in its low bits).
// A NaN lane comes out NaN.
func exp4(x archsimd.Float64x4) archsimd.Float64x4 {
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

// expShift is expShiftRef, bit for bit: x[i] = e^(x[i]-m).
func expShift(x []float32, m float32) {
	if !hasAVX2 {
		expShiftRef(x, m)
		return
	}
	n := len(x)
	vm := archsimd.BroadcastFloat32x4(m)
	i := 0
	for ; i+4 <= n; i += 4 {
		p := (*[4]float32)(x[i:])
		v := archsimd.LoadFloat32x4Array(p).Sub(vm)
		exp4(v.ConvertToFloat64()).ConvertToFloat32().StoreArray(p)
	}
	for ; i < n; i++ {
		x[i] = expf(x[i] - m)
	}
}

// swiglu is swigluRef, bit for bit: gate = gate/(1+e^-gate)·up.
func swiglu(gate, up []float32) {
	if !hasAVX2 {
		swigluRef(gate, up)
		return
	}
	n := len(gate)
	up = up[:n]
	one := archsimd.BroadcastFloat32x4(1)
	i := 0
	for ; i+4 <= n; i += 4 {
		p := (*[4]float32)(gate[i:])
		g := archsimd.LoadFloat32x4Array(p)
		e := exp4(g.Neg().ConvertToFloat64()).ConvertToFloat32()
		g.Div(one.Add(e)).Mul(archsimd.LoadFloat32x4Array((*[4]float32)(up[i:]))).StoreArray(p)
	}
	for ; i < n; i++ {
		g := gate[i]
		gate[i] = g / (1 + expf(-g)) * up[i]
	}
}

// roundFP16 is roundFP16Ref, bit for bit (NaNs stay NaNs), eight lanes at
// a time as kernels_simd.go's twin does it. The bit patterns compared are
// those of |v|, below 2^31, so the signed compares are the unsigned ones.
func roundFP16(x []float32, scale float32) {
	if !hasAVX2 {
		roundFP16Ref(x, scale)
		return
	}
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

// quantizeBlockVec is quantizeBlockCPU, bit for bit (it sends blocks with
// an infinity or a NaN there): the same float32 x·id in eight lanes,
// rounded half to even by VROUNDPS; |x·id| ≤ 127·(1+2^-23)^2 rounds to at
// most 127, so no clamp is needed.
func quantizeBlockVec(qs []byte, x []float32) (d float32, sum int32) {
	qs, x = qs[:actBlock], x[:actBlock]
	if !hasAVX2 {
		return quantizeBlockCPU(qs, x)
	}
	v := [4]archsimd.Float32x8{
		archsimd.LoadFloat32x8Array((*[8]float32)(x[0:])), archsimd.LoadFloat32x8Array((*[8]float32)(x[8:])),
		archsimd.LoadFloat32x8Array((*[8]float32)(x[16:])), archsimd.LoadFloat32x8Array((*[8]float32)(x[24:])),
	}
	mag := archsimd.BroadcastUint32x8(0x7fffffff)
	a := func(i int) archsimd.Float32x8 { return v[i].AsUint32x8().And(mag).AsFloat32x8() }
	// the sum of the magnitudes is finite only if every value is
	exp := archsimd.BroadcastUint32x8(0x7f800000)
	if s := a(0).Add(a(1)).Add(a(2).Add(a(3))).AsUint32x8().And(exp); s.Equal(exp).ToBits() != 0 {
		return quantizeBlockCPU(qs, x)
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
	return d, u.GetElem(0) + u.GetElem(1) + u.GetElem(2) + u.GetElem(3)
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

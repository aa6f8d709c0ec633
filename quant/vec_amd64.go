//go:build goexperiment.simd

package quant

import (
	"math"
	"simd/archsimd"
)

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
	var acc archsimd.Float32x8 // zero by VPXOR (BroadcastFloat32x8(0) is a legacy-SSE XORPS)
	i := 0
	for ; i+8 <= n; i += 8 {
		x := archsimd.LoadFloat32x8Array((*[8]float32)(a[i:]))
		h := archsimd.LoadUint16x8Array((*[8]uint16)(b[i:]))
		acc = acc.Add(x.Mul(fp16x8(h)))
	}
	sum := hsumX86Vec(acc) // (t0+t2) + (t1+t3) of t = lo+hi; clears the upper halves
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
	archsimd.ClearAVXUpperBits() // for the scalar code after it (see hsum_amd64.s)
	for ; i < n; i++ {
		y[i] += float32(a * FP16ToFP32(x[i]))
	}
}

// expfV8 is expfV on eight lanes, bit for bit: the same fused
// multiply-adds (FMA's VFMADD, exact as fma32 is), and VSCALEFPS (AVX-512,
// which the AVX2 table does not assume) as two scalings by powers of two,
// (j·2^a)·2^(n−a) with a = n clamped to ±100: j is in [0.7, 1.5], so the
// first product is a normal float32, exact, and only the second rounds.
// n is read from z's bits, which hold it in the low significand bits
// (z = 1.5·2^23 + n). Lanes with |n| > 192 get 0 or +Inf; a NaN lane, whose
// j is NaN, comes out NaN.
func expfV8(x archsimd.Float32x8) archsimd.Float32x8 {
	shift := archsimd.BroadcastFloat32x8(vexpShift)
	z := x.MulAdd(archsimd.BroadcastFloat32x8(vexpLog2e), shift)
	n := z.Sub(shift)
	nn := n.Neg()
	b := nn.MulAdd(archsimd.BroadcastFloat32x8(vexpLn2Hi), x)
	b = nn.MulAdd(archsimd.BroadcastFloat32x8(vexpLn2Lo), b)
	u := b.Mul(b)
	q := archsimd.BroadcastFloat32x8(vexpC5).MulAdd(b, archsimd.BroadcastFloat32x8(vexpC4))
	q = q.MulAdd(u, archsimd.BroadcastFloat32x8(vexpC3).MulAdd(b, archsimd.BroadcastFloat32x8(vexpC2)))
	j := q.MulAdd(u, archsimd.BroadcastFloat32x8(vexpC1).MulAdd(b, archsimd.BroadcastFloat32x8(1)))

	ni := z.AsInt32x8().Sub(archsimd.BroadcastInt32x8(0x4b400000)) // n, while |n| < 2^22
	a := ni.Max(archsimd.BroadcastInt32x8(-100)).Min(archsimd.BroadcastInt32x8(100))
	bias := archsimd.BroadcastInt32x8(127)
	res := j.Mul(a.Add(bias).ShiftAllLeft(23).AsFloat32x8()).Mul(ni.Sub(a).Add(bias).ShiftAllLeft(23).AsFloat32x8())

	var zero archsimd.Float32x8 // VPXOR, where BroadcastFloat32x8(0) is a legacy-SSE XORPS (see hsum_amd64.s)
	alt := zero.IfElse(n.LessEqual(zero), archsimd.BroadcastFloat32x8(float32(math.Inf(1))))
	return alt.IfElse(n.Abs().Greater(archsimd.BroadcastFloat32x8(vexpMaxN)), res)
}

// expShiftAVX2 is expShiftRef, bit for bit: a block of 16 is two registers
// of eight, reduced as reduce16 reduces it; a last partial block is
// computed in a copy padded with -Inf.
func expShiftAVX2(x []float32, m float32, sum float64) float64 {
	vm := archsimd.BroadcastFloat32x8(m)
	for i := 0; i < len(x); i += vexpWidth {
		var pad [vexpWidth]float32
		blk := (*[vexpWidth]float32)(nil)
		if r := len(x) - i; r >= vexpWidth {
			blk = (*[vexpWidth]float32)(x[i:])
		} else {
			for j := range pad {
				pad[j] = float32(math.Inf(-1))
			}
			copy(pad[:], x[i:])
			blk = &pad
		}
		p0, p1 := (*[8]float32)(blk[:8]), (*[8]float32)(blk[8:])
		e0 := expfV8(archsimd.LoadFloat32x8Array(p0).Sub(vm))
		e1 := expfV8(archsimd.LoadFloat32x8Array(p1).Sub(vm))
		e0.StoreArray(p0)
		e1.StoreArray(p1)
		if blk == &pad {
			copy(x[i:], pad[:])
		}
		sum += float64(hsumX86Vec(e0.Add(e1)))
	}
	return sum
}

// swigluAVX2 is swigluRef, bit for bit: gate = gate/(1+e^(0−gate))·up.
func swigluAVX2(gate, up []float32) {
	up = up[:len(gate)]
	n := len(gate) &^ (vexpWidth - 1)
	var zero archsimd.Float32x8 // VPXOR, not a legacy-SSE XORPS
	one := archsimd.BroadcastFloat32x8(1)
	for i := 0; i < n; i += 8 {
		p := (*[8]float32)(gate[i:])
		g := archsimd.LoadFloat32x8Array(p)
		e := expfV8(zero.Sub(g))
		g.Div(one.Add(e)).Mul(archsimd.LoadFloat32x8Array((*[8]float32)(up[i:]))).StoreArray(p)
	}
	archsimd.ClearAVXUpperBits() // for the scalar code after it (see hsum_amd64.s)
	for i := n; i < len(gate); i++ {
		g := gate[i]
		gate[i] = g / (1 + expfC(-g)) * up[i]
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
	archsimd.ClearAVXUpperBits() // for the scalar code after it (see hsum_amd64.s)
	roundFP16Ref(x[i:], scale)
}

// f16RowMax is the longest fp16 row (a head's key or value) that
// scoresF16AVX2 and accumulateF16AVX2 widen on their stack; longer ones,
// or ones not a multiple of 8, take the references.
const f16RowMax = 256

// widenF16Row sets f[:len(h)] to the fp16 values h as float32 (len(h) a
// multiple of 8).
func widenF16Row(f *[f16RowMax]float32, h []uint16) {
	for i := 0; i+8 <= len(h); i += 8 {
		fp16x8(archsimd.LoadUint16x8Array((*[8]uint16)(h[i:]))).StoreArray((*[8]float32)(f[i:]))
	}
}

// scoresF16AVX2 is scoresF16Ref, bit for bit: each key widened once, then
// dotted with every head's query as dotF16VecAVX2 sums.
func scoresF16AVX2(sc, q []float32, keys []uint16, hd, stride, n int) {
	g := len(q) / hd
	if hd%8 != 0 || hd > f16RowMax {
		scoresF16Ref(sc, q, keys, hd, stride, n)
		return
	}
	sc, q = sc[:g*n], q[:g*hd]
	var k [f16RowMax]float32
	for t := range n {
		widenF16Row(&k, keys[t*stride:t*stride+hd])
		for j := range g {
			qj := q[j*hd : (j+1)*hd]
			var acc archsimd.Float32x8 // zero by VPXOR (see dotF16VecAVX2)
			for i := 0; i+8 <= len(qj); i += 8 {
				acc = acc.Add(archsimd.LoadFloat32x8Array((*[8]float32)(qj[i:])).Mul(archsimd.LoadFloat32x8Array((*[8]float32)(k[i:]))))
			}
			sc[j*n+t] = hsumX86Vec(acc)
		}
	}
}

// accumulateF16AVX2 is accumulateF16Ref, bit for bit: each value row
// widened once, then added to every head's output times its weight.
func accumulateF16AVX2(out, w []float32, values []uint16, hd, stride, n int) {
	g := len(out) / hd
	if hd%8 != 0 || hd > f16RowMax {
		accumulateF16Ref(out, w, values, hd, stride, n)
		return
	}
	out, w = out[:g*hd], w[:g*n]
	var v [f16RowMax]float32
	for t := range n {
		widenF16Row(&v, values[t*stride:t*stride+hd])
		for j := range g {
			a := archsimd.BroadcastFloat32x8(w[j*n+t])
			o := out[j*hd : (j+1)*hd]
			for i := 0; i+8 <= len(o); i += 8 {
				p := (*[8]float32)(o[i:])
				archsimd.LoadFloat32x8Array(p).Add(a.Mul(archsimd.LoadFloat32x8Array((*[8]float32)(v[i:])))).StoreArray(p)
			}
		}
	}
}

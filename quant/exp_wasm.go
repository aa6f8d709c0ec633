//go:build goexperiment.simd && !relaxedsimd

package quant

import (
	"math"
	"simd/archsimd"
)

// The SIMD128 build's exponentials (SwiGLU and ExpShift of the vector
// table, kernels_wasm.go): expfV's fused multiply-adds emulated exactly in
// f64x2, two lanes at a time, where wasm SIMD128 has no fused
// multiply-add. The relaxedsimd build has f32x4.relaxed_madd, which its
// probe in web/picolm.js requires to be fused (exp_relaxed_wasm.go).

// swigluWasm and expShiftWasm are the SIMD128 build's SwiGLU and ExpShift.
func swigluWasm(gate, up []float32)                            { swigluSIMD128(gate, up) }
func expShiftWasm(x []float32, m float32, sum float64) float64 { return expShiftSIMD128(x, m, sum) }

// round32x2 rounds float64 lanes to float32's 24-bit significand, to
// nearest, ties to even, in their bits (the wasm API has no
// f32x4.demote_f64x2_zero): exact float32 rounding for values in float32's
// normal range, which is where expfVX2 uses it (its results there decide
// the kernel's bits; see expfVX2).
func round32x2(v archsimd.Float64x2) archsimd.Float64x2 {
	u := v.ToBits()
	u = u.Add(archsimd.BroadcastUint64x2(1<<28 - 1)).Add(u.ShiftAllRight(29).And(archsimd.BroadcastUint64x2(1)))
	return u.AndNot(archsimd.BroadcastUint64x2(1<<29 - 1)).BitsToFloat64()
}

// fmaX2 is fma64 on two lanes of float64s that hold float32s: the float64
// sum, rounded to float32 by round32x2, and the lanes where the sum was
// halfway between two float32s (where that rounding is not the fused
// multiply-add's) or-ed into halfway.
func fmaX2(a, b, c archsimd.Float64x2, halfway archsimd.Mask64x2) (archsimd.Float64x2, archsimd.Mask64x2) {
	s := a.Mul(b).Add(c)
	h := s.ToBits().And(archsimd.BroadcastUint64x2(1<<29 - 1)).Equal(archsimd.BroadcastUint64x2(1 << 28))
	return round32x2(s), halfway.Or(h)
}

// expfVX2 is expfVGo on two float64 lanes holding float32s, before the
// final rounding to float32 (the caller's conversion), and whether a lane
// needs expfV instead (a sum halfway between two float32s). The float32
// roundings of b, u and the polynomial's sums are round32x2's: b is exact
// in float64 and below 1/2, and is zero or at least 2^-43 when it is not x
// itself; the sums are between 2^-5 and 2; u = b² may fall below float32's
// normals, where round32x2 is not float32's rounding, but then u·q1 is below
// 2^-130 and leaves the next sum, q2 ≈ 1/2, at q2 either way. j·2^n is exact
// in float64 (|n| ≤ 192) and rounds once, in the caller. Lanes with
// |n| > 192 get 0 or +Inf; a NaN lane comes out NaN.
func expfVX2(x archsimd.Float64x2) (archsimd.Float64x2, archsimd.Mask64x2) {
	shift := archsimd.BroadcastFloat64x2(0x1.8p52)
	n := x.Mul(archsimd.BroadcastFloat64x2(vexpLog2e)).Add(shift).Sub(shift)
	b := round32x2(x.Sub(n.Mul(archsimd.BroadcastFloat64x2(vexpLn2Hi))).Sub(n.Mul(archsimd.BroadcastFloat64x2(vexpLn2Lo))))
	u := round32x2(b.Mul(b))
	var h archsimd.Mask64x2
	q1, h := fmaX2(archsimd.BroadcastFloat64x2(vexpC5), b, archsimd.BroadcastFloat64x2(vexpC4), h)
	q2, h := fmaX2(archsimd.BroadcastFloat64x2(vexpC3), b, archsimd.BroadcastFloat64x2(vexpC2), h)
	q3, h := fmaX2(archsimd.BroadcastFloat64x2(vexpC1), b, archsimd.BroadcastFloat64x2(1), h)
	q4, h := fmaX2(q1, u, q2, h)
	j, h := fmaX2(q4, u, q3, h)
	scale := n.Add(archsimd.BroadcastFloat64x2(0x1p52 + 1023)).ToBits().ShiftAllLeft(52).BitsToFloat64()
	res := j.Mul(scale)
	zero := archsimd.BroadcastFloat64x2(0)
	alt := zero.IfElse(n.LessEqual(zero), archsimd.BroadcastFloat64x2(math.Inf(1)))
	return alt.IfElse(n.Abs().Greater(archsimd.BroadcastFloat64x2(vexpMaxN)), res), h
}

// anyLane reports whether either lane of m is set.
func anyLane(m archsimd.Mask64x2) bool {
	v := m.ToInt64x2()
	return v.GetElem(0)|v.GetElem(1) != 0
}

// expShiftSIMD128 is expShiftRef, bit for bit: four lanes at a time in two
// expfVX2 calls (the float32 ⇄ float64 conversions are scalar: archsimd
// has no f64x2.promote_low_f32x4), a block of four with a halfway lane
// recomputed by expfV, each block of 16 summed by reduce16.
func expShiftSIMD128(x []float32, m float32, sum float64) float64 {
	for i := 0; i < len(x); i += vexpWidth {
		var v [vexpWidth]float32 // past the end of x: e^-Inf = 0
		r := min(vexpWidth, len(x)-i)
		for j := 0; j+4 <= r; j += 4 {
			p := (*[4]float32)(x[i+j:])
			a := [4]float32{p[0] - m, p[1] - m, p[2] - m, p[3] - m}
			e0, h0 := expfVX2(archsimd.LoadFloat64x2Array(&[2]float64{float64(a[0]), float64(a[1])}))
			e1, h1 := expfVX2(archsimd.LoadFloat64x2Array(&[2]float64{float64(a[2]), float64(a[3])}))
			if anyLane(h0.Or(h1)) {
				for k := range a {
					v[j+k] = expfV(a[k])
				}
			} else {
				v[j], v[j+1] = float32(e0.GetElem(0)), float32(e0.GetElem(1))
				v[j+2], v[j+3] = float32(e1.GetElem(0)), float32(e1.GetElem(1))
			}
			*p = [4]float32(v[j : j+4])
		}
		for j := r &^ 3; j < r; j++ {
			x[i+j] = expfVGo(x[i+j] - m)
			v[j] = x[i+j]
		}
		sum += float64(reduce16(&v))
	}
	return sum
}

// swigluSIMD128 is swigluRef, bit for bit: the exponentials of whole
// blocks of 16 four at a time as expShiftSIMD128 computes them, then
// gate/(1+e)·up in float32 lanes.
func swigluSIMD128(gate, up []float32) {
	up = up[:len(gate)]
	n := len(gate) &^ (vexpWidth - 1)
	one := archsimd.BroadcastFloat32x4(1)
	for i := 0; i < n; i += 4 {
		p := (*[4]float32)(gate[i:])
		e0, h0 := expfVX2(archsimd.LoadFloat64x2Array(&[2]float64{float64(0 - p[0]), float64(0 - p[1])}))
		e1, h1 := expfVX2(archsimd.LoadFloat64x2Array(&[2]float64{float64(0 - p[2]), float64(0 - p[3])}))
		e := [4]float32{float32(e0.GetElem(0)), float32(e0.GetElem(1)), float32(e1.GetElem(0)), float32(e1.GetElem(1))}
		if anyLane(h0.Or(h1)) {
			for k := range e {
				e[k] = expfV(0 - p[k])
			}
		}
		g := archsimd.LoadFloat32x4Array(p)
		g.Div(one.Add(archsimd.LoadFloat32x4Array(&e))).Mul(archsimd.LoadFloat32x4Array((*[4]float32)(up[i:]))).StoreArray(p)
	}
	for i := n; i < len(gate); i++ {
		g := gate[i]
		gate[i] = g / (1 + expfC(-g)) * up[i]
	}
}

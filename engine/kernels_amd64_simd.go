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

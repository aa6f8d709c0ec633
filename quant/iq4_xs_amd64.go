//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"simd/archsimd"
)

// The AVX2 kernels of IQ4_XS (kernels_amd64.go); dotIQ4_XSGo in iq4_xs.go
// is their portable twin.

// iq4Levels is kvaluesIQ4NL in both 128-bit halves, VPSHUFB's table.
var iq4Levels = func() (t [32]int8) {
	copy(t[:16], kvaluesIQ4NL[:])
	copy(t[16:], kvaluesIQ4NL[:])
	return t
}()

// dotIQ4_XSAVX2 computes the same as dotIQ4_XSRef, bit for bit, as ggml's
// x86 kernel does: VPSHUFB looks the levels up (the low nibbles in the
// low 128-bit half, the high ones in the high half, as the activations
// lie); VPMADDUBSW of |y| (0..128) and the levels with y's sign (|·| ≤
// 127) gives pair sums of at most 2·128·127 < 2^15 for every activation
// byte, -128 included; VPMADDWD with the sub-block's scale-32 leaves lane k
// the products of bytes 4k..4k+3; the super-block's lanes are converted
// and added to eight float32 accumulators by VFMADD (fma32), which are
// added at the end as hsumX86.
func dotIQ4_XSAVX2(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*iq4_XSBytes], act[:nb*q8_KBytes]
	tab := archsimd.LoadInt8x32Array(&iq4Levels)
	var acc archsimd.Float32x8
	for b := range nb {
		x := (*[iq4_XSBytes]byte)(w[b*iq4_XSBytes:])
		y := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		lanes := iq4XSLanes(x, y, tab)
		d := archsimd.BroadcastFloat32x8(halfToFloat(binary.LittleEndian.Uint16(x[:])) * f32At(y[:]))
		acc = d.MulAdd(lanes.ConvertToFloat32(), acc)
	}
	var a [8]float32
	acc.StoreArray(&a)
	return hsumX86(&a)
}

// iq4XSLevels returns sub-block j's 32 levels: the low nibbles' in the
// low half, the high nibbles' in the high half.
func iq4XSLevels(x *[iq4_XSBytes]byte, j int, tab archsimd.Int8x32) archsimd.Int8x32 {
	m4 := archsimd.BroadcastUint8x16(0x0f)
	q := load16((*[16]byte)(x[8+16*j:]))
	var qq archsimd.Uint8x32
	qq = qq.SetLo(q.And(m4)).SetHi(q.ReshapeToUint16s().ShiftAllRight(4).ReshapeToUint8s().And(m4))
	return tab.PermuteOrZeroGrouped(qq.BitsToInt8())
}

// iq4XSScales returns the eight sub-blocks' scale-32.
func iq4XSScales(x *[iq4_XSBytes]byte) (ls [8]int16) {
	h := uint32(binary.LittleEndian.Uint16(x[2:]))
	l := binary.LittleEndian.Uint32(x[4:])
	for j := range ls {
		ls[j] = int16(l>>(4*j)&0xf|(h>>(2*j)&3)<<4) - 32
	}
	return ls
}

// iq4XSLanes returns the int32 lanes of the block x with the activation
// block y (see dotIQ4_XSAVX2). Not inlined, and the sub-blocks written out:
// with the block pointers in registers the loads take constant offsets.
//
//go:noinline
func iq4XSLanes(x *[iq4_XSBytes]byte, y *[q8_KBytes]byte, tab archsimd.Int8x32) archsimd.Int32x8 {
	h := uint32(binary.LittleEndian.Uint16(x[2:]))
	l := binary.LittleEndian.Uint32(x[4:])
	sub := func(j int) archsimd.Int32x8 {
		v := iq4XSLevels(x, j, tab)
		yv := load32((*[32]byte)(y[4+32*j:])).BitsToInt8()
		ls := int16(l>>(4*j)&0xf|(h>>(2*j)&3)<<4) - 32
		return yv.Abs().AsUint8x32().DotProductPairsSaturated(v.MulSign(yv)).DotProductPairs(archsimd.BroadcastInt16x16(ls))
	}
	return sub(0).Add(sub(1)).Add(sub(2).Add(sub(3))).Add(sub(4).Add(sub(5)).Add(sub(6).Add(sub(7))))
}

// dotNIQ4_XSAVX2 is dotIQ4_XSAVX2 for several activations: each block's
// levels and scales are decoded once, then dotted with every activation
// as dotIQ4_XSAVX2 does.
func dotNIQ4_XSAVX2(n int, w []byte, acts [][]byte, out []float32) {
	if len(acts) > MaxDotN {
		dotEach(dotIQ4_XSAVX2, n, w, acts, out)
		return
	}
	nb := n / qkK
	w = w[:nb*iq4_XSBytes]
	out = out[:len(acts)]
	tab := archsimd.LoadInt8x32Array(&iq4Levels)
	var (
		acc [MaxDotN]archsimd.Float32x8
		v   [8]archsimd.Int8x32
		sc  [8]archsimd.Int16x16
	)
	for b := range nb {
		x := (*[iq4_XSBytes]byte)(w[b*iq4_XSBytes:])
		ls := iq4XSScales(x)
		for j := range 8 {
			v[j] = iq4XSLevels(x, j, tab)
			sc[j] = archsimd.BroadcastInt16x16(ls[j])
		}
		dx := halfToFloat(binary.LittleEndian.Uint16(x[:]))
		for i, a := range acts {
			y := (*[q8_KBytes]byte)(a[b*q8_KBytes:])
			acc[i] = iq4XSDecoded(&v, &sc, y, dx, acc[i])
		}
	}
	for i := range acts {
		var a [8]float32
		acc[i].StoreArray(&a)
		out[i] = hsumX86(&a)
	}
}

// iq4XSDecoded returns acc after the fused multiply-add of the decoded
// block (levels v, scales sc, d dx) with the activation block y.
//
//go:noinline
func iq4XSDecoded(v *[8]archsimd.Int8x32, sc *[8]archsimd.Int16x16, y *[q8_KBytes]byte, dx float32, acc archsimd.Float32x8) archsimd.Float32x8 {
	sub := func(j int) archsimd.Int32x8 {
		yv := load32((*[32]byte)(y[4+32*j:])).BitsToInt8()
		return yv.Abs().AsUint8x32().DotProductPairsSaturated(v[j].MulSign(yv)).DotProductPairs(sc[j])
	}
	sum := sub(0).Add(sub(1)).Add(sub(2).Add(sub(3))).Add(sub(4).Add(sub(5)).Add(sub(6).Add(sub(7))))
	d := archsimd.BroadcastFloat32x8(dx * f32At(y[:]))
	return d.MulAdd(sum.ConvertToFloat32(), acc)
}

// dotRowsNIQ4_XSAVX2 is dotIQ4_XSAVX2 for rows × activations, in
// x86MatMul's loop order (kx86_matmul_amd64.go): each block's levels and
// scales decoded once for the batch, its lanes with eight activations at a
// time added by x86Dots8IQ4 (fewer than four activations: dotNIQ4_XSAVX2
// row by row).
func dotRowsNIQ4_XSAVX2(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	if len(acts) < 4 || len(acts) > MaxDotN {
		eachRow(dotNIQ4_XSAVX2, n/qkK*iq4_XSBytes, n, w, acts, outs, at)
		return
	}
	tab := archsimd.LoadInt8x32Array(&iq4Levels)
	var (
		ba x86Batch
		s  x86Sums
		v  [8]archsimd.Int8x32
		sc [8]archsimd.Int16x16
	)
	x86MatMul(n, iq4_XSBytes, w, acts, outs, at, false, &ba, &s, func(xb []byte, r int) {
		x := (*[iq4_XSBytes]byte)(xb)
		ls := iq4XSScales(x)
		for j := range 8 {
			v[j] = iq4XSLevels(x, j, tab)
			sc[j] = archsimd.BroadcastInt16x16(ls[j])
		}
		dxv := broadcast32(halfBits(binary.LittleEndian.Uint16(x[:])))
		for o := range ba.no {
			x86Dots8IQ4(&v, &sc, (*[8]*[q8_KBytes]byte)(ba.y[8*o:]), (*[8]archsimd.Float32x8)(ba.ydv[8*o:]), &dxv, (*[8]archsimd.Float32x8)(s.acc[r][8*o:]))
		}
	})
}

// x86Dots8IQ4 is x86Dots8 for IQ4_XS: the lanes of the levels v[k] (int8)
// with eight activation blocks as iq4XSDecoded takes them (VPMADDUBSW of
// |y| and the levels with y's sign, VPMADDWD by the scales sc[k]).
//
//go:noinline
func x86Dots8IQ4(v *[8]archsimd.Int8x32, sc *[8]archsimd.Int16x16, y *[8]*[q8_KBytes]byte, yd *[8]archsimd.Float32x8, dx *archsimd.Float32x8, acc *[8]archsimd.Float32x8) {
	y0, y1, y2, y3, y4, y5, y6, y7 := y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7]
	var a0, a1, a2, a3, a4, a5, a6, a7 archsimd.Int32x8
	step := func(k int) { // sub-block k, written out below (constant offsets)
		vk, sk := v[k], sc[k]
		d := func(y *[q8_KBytes]byte) archsimd.Int32x8 {
			yv := load32((*[32]byte)(y[4+32*k:])).BitsToInt8()
			return yv.Abs().AsUint8x32().DotProductPairsSaturated(vk.MulSign(yv)).DotProductPairs(sk)
		}
		a0, a1, a2, a3 = a0.Add(d(y0)), a1.Add(d(y1)), a2.Add(d(y2)), a3.Add(d(y3))
		a4, a5, a6, a7 = a4.Add(d(y4)), a5.Add(d(y5)), a6.Add(d(y6)), a7.Add(d(y7))
	}
	step(0)
	step(1)
	step(2)
	step(3)
	step(4)
	step(5)
	step(6)
	step(7)
	x86Acc8(a0, a1, a2, a3, a4, a5, a6, a7, yd, dx, acc)
}

//go:build goexperiment.simd && amd64

package quant

import (
	"encoding/binary"
	"math"
	"simd/archsimd"
)

// The native AVX2 DotN kernels: each weight block is decoded once (nibbles
// split, high bits merged, scales broadcast) and then dotted with every
// activation exactly as the one-activation kernel of its type does.

// dotNQ4_K is dotQ4_K for several activations.
func dotNQ4_K(n int, w []byte, acts [][]byte, out []float32) {
	if !hasAVX2 {
		dotEach(dotQ4_KRef, n, w, acts, out)
		return
	}
	nb := n / qkK
	w = w[:nb*q4_KBytes]
	out = out[:len(acts)]
	clear(out)
	var q [8]archsimd.Uint8x32  // sub-block k's 32 quants
	var sc [8]archsimd.Int16x16 // sub-block k's scale, broadcast
	var mins [16]int16          // the min of block sum j's sub-block, j/2
	for b := range nb {
		x := (*[q4_KBytes]byte)(w[b*q4_KBytes:])
		for g := range 4 {
			q[2*g], q[2*g+1] = nibbles(load32((*[32]byte)(x[16+32*g:])))
		}
		for k := range 8 {
			s, m := scaleMinK4(k, x[4:16])
			sc[k] = archsimd.BroadcastInt16x16(int16(s))
			mins[2*k], mins[2*k+1] = int16(m), int16(m)
		}
		mv := archsimd.LoadInt16x16Array(&mins)
		dw, dminw := fp16At(x[:]), fp16At(x[2:])
		for i, a := range acts {
			yb := (*[q8_KBytes]byte)(a[b*q8_KBytes:])
			yd := math.Float32frombits(binary.LittleEndian.Uint32(yb[:]))
			// the sub-blocks written out: the compiler does not unroll
			dp := func(k int) archsimd.Int32x8 {
				return q[k].DotProductPairsSaturated(load32((*[32]byte)(yb[4+32*k:])).BitsToInt8()).DotProductPairs(sc[k])
			}
			acc := dp(0).Add(dp(1)).Add(dp(2).Add(dp(3))).Add(dp(4).Add(dp(5)).Add(dp(6).Add(dp(7))))
			// Σ min·bsum, exact in int32 like the reference's sum
			bs := load32((*[32]byte)(yb[4+qkK:])).AsInt16x16()
			isum, summ := hsum2x8(acc, bs.DotProductPairs(mv))
			d, dmin := dw*yd, dminw*yd
			out[i] += float32(d*float32(isum)) - float32(dmin*float32(summ))
		}
	}
}

// hsum2x8 returns the sums of the eight lanes of a and of b (wrapping, like
// int32 adds), with two VPHADDD.
func hsum2x8(a, b archsimd.Int32x8) (int32, int32) {
	u := a.ConcatAddPairsGrouped(b) // per half: a pairs, b pairs
	v := u.GetLo().Add(u.GetHi())   // a01+a45, a23+a67, b01+b45, b23+b67
	v = v.ConcatAddPairs(v)
	return v.GetElem(0), v.GetElem(1)
}

// dotNQ6_K is dotQ6_K for several activations.
func dotNQ6_K(n int, w []byte, acts [][]byte, out []float32) {
	if !hasAVX2 {
		dotEach(dotQ6_KRef, n, w, acts, out)
		return
	}
	nb := n / qkK
	w = w[:nb*q6_KBytes]
	out = out[:len(acts)]
	clear(out)
	m30 := archsimd.BroadcastUint8x32(0x30)
	var q [8]archsimd.Uint8x32  // the quants (0..63) of activation bytes 32k..32k+31
	var sc [8]archsimd.Int16x16 // their two sub-blocks' scales
	for b := range nb {
		x := (*[q6_KBytes]byte)(w[b*q6_KBytes:])
		for h := range 2 {
			s := (*[8]byte)(x[192+8*h:])
			lo, hi := nibbles(load32((*[32]byte)(x[64*h:])))
			lo2, hi2 := nibbles(load32((*[32]byte)(x[64*h+32:])))
			qh := load32((*[32]byte)(x[128+32*h:])).ReshapeToUint16s()
			q[4*h] = lo.Or(qh.ShiftAllLeft(4).AsUint8x32().And(m30))
			q[4*h+1] = lo2.Or(qh.ShiftAllLeft(2).AsUint8x32().And(m30))
			q[4*h+2] = hi.Or(qh.AsUint8x32().And(m30))
			q[4*h+3] = hi2.Or(qh.ShiftAllRight(2).AsUint8x32().And(m30))
			for k := range 4 {
				sc[4*h+k] = archsimd.BroadcastInt16x16(int16(int8(s[2*k]))).SetHi(archsimd.BroadcastInt16x8(int16(int8(s[2*k+1]))))
			}
		}
		scv := load16((*[16]byte)(x[192:])).BitsToInt8().ExtendToInt16()
		dw := fp16At(x[208:])
		for i, a := range acts {
			yb := (*[q8_KBytes]byte)(a[b*q8_KBytes:])
			yd := math.Float32frombits(binary.LittleEndian.Uint32(yb[:]))
			dp := func(k int) archsimd.Int32x8 {
				return q[k].DotProductPairsSaturated(load32((*[32]byte)(yb[4+32*k:])).BitsToInt8()).DotProductPairs(sc[k])
			}
			acc := dp(0).Add(dp(1)).Add(dp(2).Add(dp(3))).Add(dp(4).Add(dp(5)).Add(dp(6).Add(dp(7))))
			bs := load32((*[32]byte)(yb[4+qkK:])).AsInt16x16()
			isum, off := hsum2x8(acc, bs.DotProductPairs(scv))
			out[i] += dw * yd * float32(isum-32*off)
		}
	}
}

// dotNQ4_0 is dotQ4_0 for several activations: four at a time, the four
// block sums are reduced together and scaled and added in float32 lanes
// (the same IEEE operations, per lane, as the one-activation kernel). The
// row is walked once per four activations (a Q4_0 block decodes in three
// instructions; the sums stay in registers).
func dotNQ4_0(n int, w []byte, acts [][]byte, out []float32) {
	if !hasAVX2 {
		dotEach(dotQ4_0Ref, n, w, acts, out)
		return
	}
	nb := n / qk
	w = w[:nb*q4_0Bytes]
	out = out[:len(acts)]
	m4 := archsimd.BroadcastUint8x16(0x0f)
	eight := archsimd.BroadcastUint8x32(8)
	ones := archsimd.BroadcastInt16x16(1)
	dot := func(qq archsimd.Uint8x32, y *[q8_0Bytes]byte) archsimd.Int32x8 {
		yv := load32((*[32]byte)(y[2:])).BitsToInt8()
		return qq.DotProductPairsSaturated(yv).Sub(eight.DotProductPairsSaturated(yv)).DotProductPairs(ones)
	}
	i := 0
	for ; i+4 <= len(acts); i += 4 {
		a0, a1, a2, a3 := acts[i][:nb*q8_0Bytes], acts[i+1][:nb*q8_0Bytes], acts[i+2][:nb*q8_0Bytes], acts[i+3][:nb*q8_0Bytes]
		var acc archsimd.Float32x4
		for b := range nb {
			x := (*[q4_0Bytes]byte)(w[b*q4_0Bytes:])
			q := load16((*[16]byte)(x[2:]))
			var qq archsimd.Uint8x32
			qq = qq.SetLo(q.And(m4)).SetHi(q.ReshapeToUint16s().ShiftAllRight(4).ReshapeToUint8s().And(m4))
			y0, y1 := (*[q8_0Bytes]byte)(a0[b*q8_0Bytes:]), (*[q8_0Bytes]byte)(a1[b*q8_0Bytes:])
			y2, y3 := (*[q8_0Bytes]byte)(a2[b*q8_0Bytes:]), (*[q8_0Bytes]byte)(a3[b*q8_0Bytes:])
			isum := hsum4x8(dot(qq, y0), dot(qq, y1), dot(qq, y2), dot(qq, y3))
			acc = scaleAdd4(acc, isum, fp16At(x[:]), y0, y1, y2, y3)
		}
		acc.StoreArray((*[4]float32)(out[i : i+4]))
	}
	for ; i < len(acts); i++ {
		out[i] = dotQ4_0(n, w, acts[i])
	}
}

// dotNQ8_0 is dotQ8_0 for several activations, four at a time like
// dotNQ4_0.
func dotNQ8_0(n int, w []byte, acts [][]byte, out []float32) {
	if !hasAVX2 {
		dotEach(dotQ8_0Ref, n, w, acts, out)
		return
	}
	nb := n / qk
	w = w[:nb*q8_0Bytes]
	out = out[:len(acts)]
	i := 0
	for ; i+4 <= len(acts); i += 4 {
		a0, a1, a2, a3 := acts[i][:nb*q8_0Bytes], acts[i+1][:nb*q8_0Bytes], acts[i+2][:nb*q8_0Bytes], acts[i+3][:nb*q8_0Bytes]
		var acc archsimd.Float32x4
		for b := range nb {
			x := (*[q8_0Bytes]byte)(w[b*q8_0Bytes:])
			x0 := load16((*[16]byte)(x[2:])).BitsToInt8().ExtendToInt16()
			x1 := load16((*[16]byte)(x[18:])).BitsToInt8().ExtendToInt16()
			dot := func(y *[q8_0Bytes]byte) archsimd.Int32x8 {
				y0 := load16((*[16]byte)(y[2:])).BitsToInt8().ExtendToInt16()
				y1 := load16((*[16]byte)(y[18:])).BitsToInt8().ExtendToInt16()
				return x0.DotProductPairs(y0).Add(x1.DotProductPairs(y1))
			}
			y0, y1 := (*[q8_0Bytes]byte)(a0[b*q8_0Bytes:]), (*[q8_0Bytes]byte)(a1[b*q8_0Bytes:])
			y2, y3 := (*[q8_0Bytes]byte)(a2[b*q8_0Bytes:]), (*[q8_0Bytes]byte)(a3[b*q8_0Bytes:])
			isum := hsum4x8(dot(y0), dot(y1), dot(y2), dot(y3))
			acc = scaleAdd4(acc, isum, fp16At(x[:]), y0, y1, y2, y3)
		}
		acc.StoreArray((*[4]float32)(out[i : i+4]))
	}
	for ; i < len(acts); i++ {
		out[i] = dotQ8_0(n, w, acts[i])
	}
}

// hsum4x8 returns the sums of the eight lanes of a, b, c and d (wrapping,
// like int32 adds) in lanes 0..3.
func hsum4x8(a, b, c, d archsimd.Int32x8) archsimd.Int32x4 {
	u := a.ConcatAddPairsGrouped(b).ConcatAddPairsGrouped(c.ConcatAddPairsGrouped(d))
	return u.GetLo().Add(u.GetHi())
}

// scaleAdd4 returns acc + float32(isum)·float32(dx·dy) in float32 lanes,
// dy the fp16 scales of the Q8_0 blocks y0..y3.
func scaleAdd4(acc archsimd.Float32x4, isum archsimd.Int32x4, dx float32, y0, y1, y2, y3 *[q8_0Bytes]byte) archsimd.Float32x4 {
	var dy archsimd.Float32x4 // built in registers: four stores and a load would stall
	dy = dy.SetElem(0, fp16At(y0[:])).SetElem(1, fp16At(y1[:])).SetElem(2, fp16At(y2[:])).SetElem(3, fp16At(y3[:]))
	d := archsimd.BroadcastFloat32x4(dx).Mul(dy)
	return acc.Add(isum.ConvertToFloat32().Mul(d))
}

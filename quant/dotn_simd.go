//go:build goexperiment.simd && wasm

package quant

import (
	"encoding/binary"
	"math"
	"simd/archsimd"
)

// The wasm SIMD128 DotN kernels: each weight block is decoded once
// (nibbles split, high bits merged, offsets taken off) and then dotted with
// every activation exactly as the one-activation kernel of its type does.

// dotNQ4_0 is dotQ4_0 for several activations: four blocks' quants are
// decoded (nibbles split, 8 taken off) and their scales converted once.
func dotNQ4_0(n int, w []byte, acts [][]byte, out []float32) {
	nb := n / qk
	w = w[:nb*q4_0Bytes]
	out = out[:len(acts)]
	clear(out)
	m4 := archsimd.BroadcastUint8x16(0x0f)
	eight := archsimd.BroadcastInt8x16(8)
	b := 0
	for ; b+4 <= nb; b += 4 {
		x := (*[4 * q4_0Bytes]byte)(w[b*q4_0Bytes:])
		var lo, hi [4]archsimd.Int8x16
		for j := range 4 {
			q := loadU8((*[16]byte)(x[j*q4_0Bytes+2:]))
			lo[j] = q.And(m4).BitsToInt8().Sub(eight)
			hi[j] = q.ShiftAllRight(4).BitsToInt8().Sub(eight)
		}
		dx := fp16x4At(x[:], q4_0Bytes)
		for i, a := range acts {
			y := (*[4 * q8_0Bytes]byte)(a[b*q8_0Bytes:])
			blk := func(j int) archsimd.Int32x4 {
				yj := (*[q8_0Bytes]byte)(y[j*q8_0Bytes:])
				return widen(dot8(lo[j], loadI8((*[16]byte)(yj[2:]))).Add(dot8(hi[j], loadI8((*[16]byte)(yj[18:])))))
			}
			s := hsum4(blk(0), blk(1), blk(2), blk(3))
			out[i] = addLanes(out[i], s.ConvertToFloat32().Mul(dx.Mul(fp16x4At(y[:], q8_0Bytes))))
		}
	}
	for ; b < nb; b++ {
		x := (*[q4_0Bytes]byte)(w[b*q4_0Bytes:])
		for i, a := range acts {
			y := (*[q8_0Bytes]byte)(a[b*q8_0Bytes:])
			out[i] += float32(hsum(q4_0Sums(x, y))) * float32(fp16At(x[:])*fp16At(y[:]))
		}
	}
}

// dotNQ8_0 is dotQ8_0 for several activations: four blocks' quants are
// loaded and their scales converted once.
func dotNQ8_0(n int, w []byte, acts [][]byte, out []float32) {
	nb := n / qk
	w = w[:nb*q8_0Bytes]
	out = out[:len(acts)]
	clear(out)
	b := 0
	for ; b+4 <= nb; b += 4 {
		x := (*[4 * q8_0Bytes]byte)(w[b*q8_0Bytes:])
		var x0, x1 [4]archsimd.Int8x16
		for j := range 4 {
			x0[j] = loadI8((*[16]byte)(x[j*q8_0Bytes+2:]))
			x1[j] = loadI8((*[16]byte)(x[j*q8_0Bytes+18:]))
		}
		dx := fp16x4At(x[:], q8_0Bytes)
		for i, a := range acts {
			y := (*[4 * q8_0Bytes]byte)(a[b*q8_0Bytes:])
			blk := func(j int) archsimd.Int32x4 {
				y0 := loadI8((*[16]byte)(y[j*q8_0Bytes+2:]))
				y1 := loadI8((*[16]byte)(y[j*q8_0Bytes+18:]))
				acc := widen(x0[j].MulWidenLo(y0)).Add(widen(x0[j].MulWidenHi(y0)))
				return acc.Add(widen(x1[j].MulWidenLo(y1))).Add(widen(x1[j].MulWidenHi(y1)))
			}
			s := hsum4(blk(0), blk(1), blk(2), blk(3))
			out[i] = addLanes(out[i], s.ConvertToFloat32().Mul(dx.Mul(fp16x4At(y[:], q8_0Bytes))))
		}
	}
	for ; b < nb; b++ {
		x := (*[q8_0Bytes]byte)(w[b*q8_0Bytes:])
		for i, a := range acts {
			y := (*[q8_0Bytes]byte)(a[b*q8_0Bytes:])
			out[i] += float32(hsum(q8_0Sums(x, y))) * float32(fp16At(x[:])*fp16At(y[:]))
		}
	}
}

// loadI16 loads 16 bytes as eight little-endian int16 lanes.
func loadI16(b *[16]byte) archsimd.Int16x8 {
	return archsimd.LoadUint8x16Array(b).ReshapeToUint16s().BitsToInt16()
}

// dotNQ4_K is dotQ4_K for several activations.
func dotNQ4_K(n int, w []byte, acts [][]byte, out []float32) {
	nb := n / qkK
	w = w[:nb*q4_KBytes]
	out = out[:len(acts)]
	clear(out)
	m4 := archsimd.BroadcastUint8x16(0x0f)
	var q [16]archsimd.Int8x16 // the quants of activation bytes 16k..16k+15
	var sc [8]archsimd.Int16x8 // sub-block k's scale, broadcast
	var mins [16]int16         // the min of block sum j's sub-block, j/2
	for b := range nb {
		x := (*[q4_KBytes]byte)(w[b*q4_KBytes:])
		for g := range 4 {
			q0 := loadU8((*[16]byte)(x[16+32*g:]))
			q1 := loadU8((*[16]byte)(x[16+32*g+16:]))
			q[4*g] = q0.And(m4).BitsToInt8()
			q[4*g+1] = q1.And(m4).BitsToInt8()
			q[4*g+2] = q0.ShiftAllRight(4).BitsToInt8()
			q[4*g+3] = q1.ShiftAllRight(4).BitsToInt8()
		}
		for k := range 8 {
			s, m := scaleMinK4(k, x[4:16])
			sc[k] = archsimd.BroadcastInt16x8(int16(s))
			mins[2*k], mins[2*k+1] = int16(m), int16(m)
		}
		mv0 := archsimd.LoadInt16x8Array((*[8]int16)(mins[:8]))
		mv1 := archsimd.LoadInt16x8Array((*[8]int16)(mins[8:]))
		dw, dminw := fp16At(x[:]), fp16At(x[2:])
		for i, a := range acts {
			yb := (*[q8_KBytes]byte)(a[b*q8_KBytes:])
			yd, _, bsums := q8KBlock(yb[:])
			// the sub-blocks written out: the compiler does not unroll
			dp := func(k int) archsimd.Int32x4 {
				s := dot8(q[2*k], loadI8((*[16]byte)(yb[4+32*k:]))).
					Add(dot8(q[2*k+1], loadI8((*[16]byte)(yb[4+32*k+16:]))))
				return s.MulWidenLo(sc[k]).Add(s.MulWidenHi(sc[k]))
			}
			acc := dp(0).Add(dp(1)).Add(dp(2).Add(dp(3))).Add(dp(4).Add(dp(5)).Add(dp(6).Add(dp(7))))
			// Σ min·bsum, exact in int32 like the reference's sum
			b0 := loadI16((*[16]byte)(bsums[0:]))
			b1 := loadI16((*[16]byte)(bsums[16:]))
			summ := hsum(b0.MulWidenLo(mv0).Add(b0.MulWidenHi(mv0)).Add(b1.MulWidenLo(mv1)).Add(b1.MulWidenHi(mv1)))
			d, dmin := dw*yd, dminw*yd
			out[i] += float32(d*float32(hsum(acc))) - float32(dmin*float32(summ))
		}
	}
}

// dotNQ6_K is dotQ6_K for several activations.
func dotNQ6_K(n int, w []byte, acts [][]byte, out []float32) {
	nb := n / qkK
	w = w[:nb*q6_KBytes]
	out = out[:len(acts)]
	clear(out)
	m4 := archsimd.BroadcastUint8x16(0x0f)
	m30 := archsimd.BroadcastUint8x16(0x30)
	off := archsimd.BroadcastInt8x16(32)
	var q [16]archsimd.Int8x16 // the quants (-32..31) of activation bytes 16k..16k+15
	var sc [16]archsimd.Int16x8
	for b := range nb {
		x := (*[q6_KBytes]byte)(w[b*q6_KBytes:])
		for h := range 2 {
			s := (*[8]byte)(x[192+8*h:])
			for half := range 2 {
				l := 16 * half
				lo := loadU8((*[16]byte)(x[64*h+l:]))
				hi := loadU8((*[16]byte)(x[64*h+l+32:]))
				qh := loadU8((*[16]byte)(x[128+32*h+l:]))
				// activation bytes 128h + 32j + l: quants q_j, scale s[2j+half]
				k := 8*h + half
				q[k] = lo.And(m4).Or(qh.ShiftAllLeft(4).And(m30)).BitsToInt8().Sub(off)
				q[k+2] = hi.And(m4).Or(qh.ShiftAllLeft(2).And(m30)).BitsToInt8().Sub(off)
				q[k+4] = lo.ShiftAllRight(4).Or(qh.And(m30)).BitsToInt8().Sub(off)
				q[k+6] = hi.ShiftAllRight(4).Or(qh.ShiftAllRight(2).And(m30)).BitsToInt8().Sub(off)
				for j := range 4 {
					sc[k+2*j] = archsimd.BroadcastInt16x8(int16(int8(s[2*j+half])))
				}
			}
		}
		dw := fp16At(x[208:])
		for i, a := range acts {
			yb := (*[q8_KBytes]byte)(a[b*q8_KBytes:])
			yd := math.Float32frombits(binary.LittleEndian.Uint32(yb[:]))
			dp := func(k int) archsimd.Int32x4 {
				s := dot8(q[k], loadI8((*[16]byte)(yb[4+16*k:])))
				return s.MulWidenLo(sc[k]).Add(s.MulWidenHi(sc[k]))
			}
			acc := dp(0).Add(dp(1)).Add(dp(2).Add(dp(3))).Add(dp(4).Add(dp(5)).Add(dp(6).Add(dp(7)))).
				Add(dp(8).Add(dp(9)).Add(dp(10).Add(dp(11))).Add(dp(12).Add(dp(13)).Add(dp(14).Add(dp(15)))))
			out[i] += dw * yd * float32(hsum(acc))
		}
	}
}

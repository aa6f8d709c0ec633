//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"simd/archsimd"
)

// The AVX2 kernels of IQ4_NL (kernels_amd64.go); dotIQ4_NLGo in iq4_nl.go
// is their portable twin. A block's integer sum is taken as dotIQ4_XSAVX2
// takes a sub-block's (VPSHUFB, VPMADDUBSW of |y| and the levels with y's
// sign, VPMADDWD with ones) and added to its sum by VFMADD, as the
// reference's fma32.

// iq4NLBlock returns the int32 lanes of the block x with the Q8_0 block y.
func iq4NLBlock(x *[iq4_NLBytes]byte, y *[q8_0Bytes]byte, tab archsimd.Int8x32, ones archsimd.Int16x16) archsimd.Int32x8 {
	yv := load32((*[32]byte)(y[2:])).BitsToInt8()
	return yv.Abs().AsUint8x32().DotProductPairsSaturated(iq4NLLevels(x, tab).MulSign(yv)).DotProductPairs(ones)
}

// iq4NLLevels returns the block's 32 levels in weight order.
func iq4NLLevels(x *[iq4_NLBytes]byte, tab archsimd.Int8x32) archsimd.Int8x32 {
	m4 := archsimd.BroadcastUint8x16(0x0f)
	q := load16((*[16]byte)(x[2:]))
	var qq archsimd.Uint8x32
	qq = qq.SetLo(q.And(m4)).SetHi(q.ReshapeToUint16s().ShiftAllRight(4).ReshapeToUint8s().And(m4))
	return tab.PermuteOrZeroGrouped(qq.BitsToInt8())
}

// dotIQ4_NLAVX2 computes the same as dotIQ4_NLRef, bit for bit: eight
// blocks' sums are reduced together and their scales multiplied in
// float32 lanes; the fused multiply-adds go one block at a time.
func dotIQ4_NLAVX2(n int, w, act []byte) float32 {
	nb := n / qk
	w, act = w[:nb*iq4_NLBytes], act[:nb*q8_0Bytes]
	tab := archsimd.LoadInt8x32Array(&iq4Levels)
	ones := archsimd.BroadcastInt16x16(1)
	var sum float32
	b := 0
	for ; b+8 <= nb; b += 8 {
		sum = iq4NLGroup(sum, (*[8 * iq4_NLBytes]byte)(w[b*iq4_NLBytes:]), (*[8 * q8_0Bytes]byte)(act[b*q8_0Bytes:]), tab, ones)
	}
	for ; b < nb; b++ {
		x := (*[iq4_NLBytes]byte)(w[b*iq4_NLBytes:])
		y := (*[q8_0Bytes]byte)(act[b*q8_0Bytes:])
		s := hsum8(iq4NLBlock(x, y, tab, ones))
		sum = fma32(float32(s), float32(halfToFloat(binary.LittleEndian.Uint16(x[:]))*halfToFloat(binary.LittleEndian.Uint16(y[:]))), sum)
	}
	return sum
}

// iq4NLGroup returns sum after the terms of eight blocks of xg and yg.
//
//go:noinline
func iq4NLGroup(sum float32, xg *[8 * iq4_NLBytes]byte, yg *[8 * q8_0Bytes]byte, tab archsimd.Int8x32, ones archsimd.Int16x16) float32 {
	d := func(j int) archsimd.Int32x8 {
		return iq4NLBlock((*[iq4_NLBytes]byte)(xg[iq4_NLBytes*j:]), (*[q8_0Bytes]byte)(yg[q8_0Bytes*j:]), tab, ones)
	}
	s := hsum8x8(d(0), d(1), d(2), d(3), d(4), d(5), d(6), d(7))
	fx, ok := halvesToFloats(q4_0HalvesVec(xg)) // the blocks are laid out as Q4_0's
	if !ok {
		fx = rowsHalves(xg[:], iq4_NLBytes)
	}
	fy, ok := halvesToFloats(halves8(yg))
	if !ok {
		fy = rowsHalves(yg[:], q8_0Bytes)
	}
	return fmaLanes8(sum, s.ConvertToFloat32(), fx.Mul(fy))
}

// fmaLanes8 returns sum after sum = fma32(s[j], d[j], sum) for j = 0..7
// in order, by VFMADD in lane 0 of a vector.
func fmaLanes8(sum float32, s, d archsimd.Float32x8) float32 {
	acc := archsimd.BroadcastFloat32x4(sum)
	sl, dl := s.GetLo(), d.GetLo()
	acc = sl.MulAdd(dl, acc)
	acc = sl.ConcatPermuteScalars(1, 1, 1, 1, sl).MulAdd(dl.ConcatPermuteScalars(1, 1, 1, 1, dl), acc)
	acc = sl.ConcatPermuteScalars(2, 2, 2, 2, sl).MulAdd(dl.ConcatPermuteScalars(2, 2, 2, 2, dl), acc)
	acc = sl.ConcatPermuteScalars(3, 3, 3, 3, sl).MulAdd(dl.ConcatPermuteScalars(3, 3, 3, 3, dl), acc)
	sh, dh := s.GetHi(), d.GetHi()
	acc = sh.MulAdd(dh, acc)
	acc = sh.ConcatPermuteScalars(1, 1, 1, 1, sh).MulAdd(dh.ConcatPermuteScalars(1, 1, 1, 1, dh), acc)
	acc = sh.ConcatPermuteScalars(2, 2, 2, 2, sh).MulAdd(dh.ConcatPermuteScalars(2, 2, 2, 2, dh), acc)
	acc = sh.ConcatPermuteScalars(3, 3, 3, 3, sh).MulAdd(dh.ConcatPermuteScalars(3, 3, 3, 3, dh), acc)
	return acc.GetElem(0)
}

// stridedHalves returns the fp16 values at p[0:2], p[stride:], ...,
// p[7*stride:] in uint32 lanes, built in registers.
func stridedHalves(p []byte, stride int) archsimd.Uint32x8 {
	p = p[:7*stride+2]
	f := func(j int) uint64 { return uint64(binary.LittleEndian.Uint16(p[j*stride:])) }
	var v archsimd.Uint64x2
	v = v.SetElem(0, f(0)|f(1)<<16|f(2)<<32|f(3)<<48).SetElem(1, f(4)|f(5)<<16|f(6)<<32|f(7)<<48)
	return v.AsUint16x8().ExtendToUint32()
}

// dotRowsIQ4_NLAVX2 is dotIQ4_NLAVX2 over consecutive rows, eight rows at a
// time in the lanes of a vector, as ggml's repacked gemv does: per block,
// the eight rows' sums are reduced together and added to the rows' sums
// by one VFMADD.
func dotRowsIQ4_NLAVX2(n int, w, act []byte, out []float32) {
	nb := n / qk
	rowBytes := nb * iq4_NLBytes
	if nb == 0 || len(out) < 8 {
		dotRows(dotIQ4_NLAVX2, n, rowBytes, w, act, out)
		return
	}
	w, act = w[:len(out)*rowBytes], act[:nb*q8_0Bytes]
	r := 0
	for ; r+8 <= len(out); r += 8 {
		iq4NLRows8((*[8]float32)(out[r:]), w[r*rowBytes:(r+8)*rowBytes], act, rowBytes)
	}
	for ; r < len(out); r++ {
		out[r] = dotIQ4_NLAVX2(n, w[r*rowBytes:(r+1)*rowBytes], act)
	}
}

// iq4NLRows8 sets out[k] to the dot of row k of the eight rows at w with
// act.
//
//go:noinline
func iq4NLRows8(out *[8]float32, w, act []byte, rowBytes int) {
	tab := archsimd.LoadInt8x32Array(&iq4Levels)
	ones := archsimd.BroadcastInt16x16(1)
	w = w[:8*rowBytes]
	var acc archsimd.Float32x8
	for b := range rowBytes / iq4_NLBytes {
		y := (*[q8_0Bytes]byte)(act[b*q8_0Bytes:])
		yv := load32((*[32]byte)(y[2:])).BitsToInt8()
		ay := yv.Abs().AsUint8x32()
		d := func(k int) archsimd.Int32x8 {
			v := iq4NLLevels((*[iq4_NLBytes]byte)(w[k*rowBytes+b*iq4_NLBytes:]), tab)
			return ay.DotProductPairsSaturated(v.MulSign(yv)).DotProductPairs(ones)
		}
		s := hsum8x8(d(0), d(1), d(2), d(3), d(4), d(5), d(6), d(7))
		fx, ok := halvesToFloats(stridedHalves(w[b*iq4_NLBytes:], rowBytes))
		if !ok {
			fx = rowsHalves(w[b*iq4_NLBytes:], rowBytes)
		}
		dy := broadcast32(halfBits(binary.LittleEndian.Uint16(y[:]))) // (no legacy-SSE move: broadcast32)
		acc = s.ConvertToFloat32().MulAdd(fx.Mul(dy), acc)
	}
	acc.StoreArray(out)
}

// dotNIQ4_NLAVX2 is dotIQ4_NLAVX2 for several activations, four at a time
// in the lanes of a vector: each block is decoded once per four.
func dotNIQ4_NLAVX2(n int, w []byte, acts [][]byte, out []float32) {
	nb := n / qk
	w = w[:nb*iq4_NLBytes]
	out = out[:len(acts)]
	tab := archsimd.LoadInt8x32Array(&iq4Levels)
	ones := archsimd.BroadcastInt16x16(1)
	dot := func(v archsimd.Int8x32, y *[q8_0Bytes]byte) archsimd.Int32x8 {
		yv := load32((*[32]byte)(y[2:])).BitsToInt8()
		return yv.Abs().AsUint8x32().DotProductPairsSaturated(v.MulSign(yv)).DotProductPairs(ones)
	}
	i := 0
	for ; i+4 <= len(acts); i += 4 {
		a0, a1, a2, a3 := acts[i][:nb*q8_0Bytes], acts[i+1][:nb*q8_0Bytes], acts[i+2][:nb*q8_0Bytes], acts[i+3][:nb*q8_0Bytes]
		var acc archsimd.Float32x4
		for b := range nb {
			x := (*[iq4_NLBytes]byte)(w[b*iq4_NLBytes:])
			v := iq4NLLevels(x, tab)
			y0, y1 := (*[q8_0Bytes]byte)(a0[b*q8_0Bytes:]), (*[q8_0Bytes]byte)(a1[b*q8_0Bytes:])
			y2, y3 := (*[q8_0Bytes]byte)(a2[b*q8_0Bytes:]), (*[q8_0Bytes]byte)(a3[b*q8_0Bytes:])
			isum := hsum4x8(dot(v, y0), dot(v, y1), dot(v, y2), dot(v, y3))
			// the scales' bits in general registers, then VPINSRD and a load
			// (broadcast32): no legacy-SSE moves between the VEX ops
			var dyb archsimd.Uint32x4
			le := binary.LittleEndian
			dy := dyb.SetElem(0, halfBits(le.Uint16(y0[:]))).SetElem(1, halfBits(le.Uint16(y1[:]))).SetElem(2, halfBits(le.Uint16(y2[:]))).SetElem(3, halfBits(le.Uint16(y3[:]))).AsFloat32x4()
			acc = isum.ConvertToFloat32().MulAdd(broadcast32(halfBits(le.Uint16(x[:]))).GetLo().Mul(dy), acc)
		}
		acc.StoreArray((*[4]float32)(out[i : i+4]))
	}
	for ; i < len(acts); i++ {
		out[i] = dotIQ4_NLAVX2(n, w, acts[i])
	}
}

// dotRowsNIQ4_NLAVX2 is dotNIQ4_NLAVX2 row by row.
func dotRowsNIQ4_NLAVX2(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	eachRow(dotNIQ4_NLAVX2, n/qk*iq4_NLBytes, n, w, acts, outs, at)
}

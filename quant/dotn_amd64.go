//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"math"
	"simd/archsimd"
)

// The native AVX2 DotN kernels: each weight block is decoded once (nibbles
// split, high bits merged, scales broadcast) and then dotted with every
// activation exactly as the one-activation kernel of its type does.

// dotNQ4_KAVX2 is dotQ4_KAVX2 for several activations: each block is decoded once
// (nibbles split, scales broadcast), its integer sums with every
// activation are kept, and every four blocks each activation's sums are
// reduced together and scaled in float32 lanes as dotQ4_KAVX2 does.
func dotNQ4_KAVX2(n int, w []byte, acts [][]byte, out []float32) {
	if len(acts) > MaxDotN {
		dotEach(dotQ4_KAVX2, n, w, acts, out)
		return
	}
	nb := n / qkK
	w = w[:nb*q4_KBytes]
	out = out[:len(acts)]
	clear(out)
	m4 := archsimd.BroadcastUint8x32(0x0f)
	var scm [8]archsimd.Int8x32 // VPSHUFB patterns broadcasting scale k
	for k := range scm {
		scm[k] = byteBroadcastShuffle(k)
	}
	mnm := archsimd.LoadInt8x32Array(&q4KMinShuffle)
	var (
		parts [MaxDotN][4]archsimd.Int32x8 // activation i, block j of the group: scaled sums, min sums
		q     [8]archsimd.Uint8x32         // sub-block k's quants
		sc    [8]archsimd.Int16x16         // sub-block k's scale, broadcast
		zero  archsimd.Int32x8
		sums  [8]int32
	)
	var (
		qs    [4][8]archsimd.Uint8x32 // a group's decoded blocks, for q4KGroup4
		scs   [4][8]archsimd.Int16x16 //
		mvs   [4]archsimd.Int16x16    //
		quads [4][4]archsimd.Int32x8  // q4KGroup4's scratch
	)
	for b0 := 0; b0 < nb; b0 += 4 {
		m := min(4, nb-b0)
		if m == 4 && len(acts)%4 == 0 {
			// a full group and activations in fours: decode the four blocks,
			// then sum them with four activations at a time
			xg := (*[4 * q4_KBytes]byte)(w[b0*q4_KBytes:])
			word := func(j int) uint32 { return binary.LittleEndian.Uint32(xg[j*q4_KBytes:]) }
			var hw archsimd.Uint32x4
			hw = hw.SetElem(0, word(0)).SetElem(1, word(1)).SetElem(2, word(2)).SetElem(3, word(3))
			if f, ok := halvesToFloats(hw.AsUint16x8().ExtendToUint32()); ok {
				for j := range 4 {
					mvs[j] = q4KDecode((*[q4_KBytes]byte)(xg[j*q4_KBytes:]), &qs[j], &scs[j], &scm, mnm, m4)
				}
				for i := 0; i < len(acts); i += 4 {
					yg := func(k int) *[4 * q8_KBytes]byte { return (*[4 * q8_KBytes]byte)(acts[i+k][b0*q8_KBytes:]) }
					q4KGroup4((*[4]float32)(out[i:i+4]), &qs, &scs, &mvs, f, yg(0), yg(1), yg(2), yg(3), &quads)
				}
				continue
			}
		}
		for j := range m {
			mins := q4KDecode((*[q4_KBytes]byte)(w[(b0+j)*q4_KBytes:]), &q, &sc, &scm, mnm, m4)
			kBlockDots(&q, &sc, mins, acts, b0+j, &parts, j)
		}
		if m < 4 { // the last blocks of the row, one by one as dotQ4_KAVX2 does
			for i, a := range acts {
				o := out[i]
				for j := range m {
					hsum4x2x8(parts[i][j], zero, zero, zero).StoreArray(&sums)
					h := binary.LittleEndian.Uint32(w[(b0+j)*q4_KBytes:])
					y := math.Float32frombits(binary.LittleEndian.Uint32(a[(b0+j)*q8_KBytes:]))
					d, dmin := halfToFloat(uint16(h))*y, halfToFloat(uint16(h>>16))*y
					o += float32(d*float32(sums[0])) - float32(dmin*float32(sums[1]))
				}
				out[i] = o
			}
			continue
		}
		// the group's d, dmin (fp16) and, per activation, its scales to
		// match, built in registers (stores and a wide load would stall)
		xg := (*[4 * q4_KBytes]byte)(w[b0*q4_KBytes:])
		word := func(j int) uint32 { return binary.LittleEndian.Uint32(xg[j*q4_KBytes:]) }
		var hw archsimd.Uint32x4
		hw = hw.SetElem(0, word(0)).SetElem(1, word(1)).SetElem(2, word(2)).SetElem(3, word(3))
		f, ok := halvesToFloats(hw.AsUint16x8().ExtendToUint32())
		for i, a := range acts {
			sv := hsum4x2x8(parts[i][0], parts[i][1], parts[i][2], parts[i][3])
			yg := (*[4 * q8_KBytes]byte)(a[b0*q8_KBytes:])
			scale := func(j int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(yg[j*q8_KBytes:])) }
			if !ok { // a zero, subnormal, infinite or NaN scale
				sv.StoreArray(&sums)
				for j := range 4 {
					h, y := word(j), scale(j)
					d, dmin := FP16ToFP32(uint16(h))*y, FP16ToFP32(uint16(h>>16))*y
					out[i] += float32(d*float32(sums[2*j])) - float32(dmin*float32(sums[2*j+1]))
				}
				continue
			}
			// as in dotQ4_KAVX2: lanes 2j, 2j+1 the block terms, then their differences
			p := f.Mul(pairedScales(scale(0), scale(1), scale(2), scale(3))).Mul(sv.ConvertToFloat32())
			out[i] = addLanes0145(out[i], p.ConcatSubPairsGrouped(p))
		}
	}
}

// q4KGroup4 adds to out[k] the terms of a group of four decoded Q4_K
// blocks (qs, scs, mvs as kBlockDots takes them; f their d, dmin as
// float32 in lanes 2j, 2j+1) with activation k's four blocks yk, as
// dotQ4_KAVX2 does. quads is scratch.
//
//go:noinline
func q4KGroup4(out *[4]float32, qs *[4][8]archsimd.Uint8x32, scs *[4][8]archsimd.Int16x16, mvs *[4]archsimd.Int16x16, f archsimd.Float32x8,
	y0, y1, y2, y3 *[4 * q8_KBytes]byte, quads *[4][4]archsimd.Int32x8) {
	blk := func(j int) {
		quads[0][j], quads[1][j], quads[2][j], quads[3][j] = kDots4(&qs[j], &scs[j], mvs[j],
			(*[q8_KBytes]byte)(y0[j*q8_KBytes:]), (*[q8_KBytes]byte)(y1[j*q8_KBytes:]), (*[q8_KBytes]byte)(y2[j*q8_KBytes:]), (*[q8_KBytes]byte)(y3[j*q8_KBytes:]))
	}
	blk(0)
	blk(1)
	blk(2)
	blk(3)
	for k, yg := range [4]*[4 * q8_KBytes]byte{y0, y1, y2, y3} {
		v := &quads[k]
		sv := hsum4x2x8(v[0], v[1], v[2], v[3])
		scale := func(j int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(yg[j*q8_KBytes:])) }
		// as in dotQ4_KAVX2: lanes 2j, 2j+1 the block terms, then their differences
		p := f.Mul(pairedScales(scale(0), scale(1), scale(2), scale(3))).Mul(sv.ConvertToFloat32())
		out[k] = addLanes0145(out[k], p.ConcatSubPairsGrouped(p))
	}
}

// dotNQ6_KAVX2 is dotQ6_KAVX2 for several activations: each block is decoded once
// (low and high bits merged, scales broadcast), its integer sums with
// every activation are kept, and every four blocks each activation's sums
// are reduced together and scaled in float32 lanes as dotQ6_KAVX2 does.
func dotNQ6_KAVX2(n int, w []byte, acts [][]byte, out []float32) {
	if len(acts) > MaxDotN {
		dotEach(dotQ6_KAVX2, n, w, acts, out)
		return
	}
	nb := n / qkK
	w = w[:nb*q6_KBytes]
	out = out[:len(acts)]
	clear(out)
	m4, m30 := archsimd.BroadcastUint8x32(0x0f), archsimd.BroadcastUint8x32(0x30)
	scm := q6KScaleShuffles()
	shift := archsimd.LoadUint32x8Array(&q6KOffsetShift)
	var (
		parts [MaxDotN][4]archsimd.Int32x8 // activation i, block j of the group: scaled sums, Σ scale·bsum
		q     [8]archsimd.Uint8x32         // the quants (0..63) of activation bytes 32k..32k+31
		sc    [8]archsimd.Int16x16         // their two sub-blocks' scales
		zero  archsimd.Int32x8
		sums  [8]int32
	)
	for b0 := 0; b0 < nb; b0 += 4 {
		m := min(4, nb-b0)
		for j := range m {
			x := (*[q6_KBytes]byte)(w[(b0+j)*q6_KBytes:])
			scv := load16((*[16]byte)(x[192:])).BitsToInt8().ExtendToInt16()
			for h := range 2 {
				q[4*h], q[4*h+1], q[4*h+2], q[4*h+3] = q6KQuants(x, h, m4, m30)
				s := scv.ConcatPermute128Scalars(0, 0, scv)
				if h == 1 {
					s = scv.ConcatPermute128Scalars(1, 1, scv)
				}
				for k := range 4 {
					sc[4*h+k] = s.AsInt8x32().PermuteOrZeroGrouped(scm[k]).AsInt16x16()
				}
			}
			kBlockDots(&q, &sc, scv, acts, b0+j, &parts, j)
		}
		if m < 4 { // the last blocks of the row, one by one as dotQ6_KAVX2 does
			for i, a := range acts {
				o := out[i]
				for j := range m {
					sv := hsum4x2x8(parts[i][j], zero, zero, zero).ShiftLeft(shift)
					sv.ConcatSubPairsGrouped(sv).StoreArray(&sums)
					h := binary.LittleEndian.Uint16(w[(b0+j)*q6_KBytes+208:])
					y := math.Float32frombits(binary.LittleEndian.Uint32(a[(b0+j)*q8_KBytes:]))
					o += halfToFloat(h) * y * float32(sums[0])
				}
				out[i] = o
			}
			continue
		}
		// the group's d (fp16) and, per activation, its scales in lanes 0, 1
		// (blocks 0, 1) and 4, 5 (2, 3), built in registers
		xg := (*[4 * q6_KBytes]byte)(w[b0*q6_KBytes:])
		half := func(j int) uint16 { return binary.LittleEndian.Uint16(xg[j*q6_KBytes+208:]) }
		hv := archsimd.BroadcastUint16x8(0x3c00).SetElem(0, half(0)).SetElem(1, half(1)).SetElem(4, half(2)).SetElem(5, half(3))
		f, ok := halvesToFloats(hv.ExtendToUint32())
		for i, a := range acts {
			sv := hsum4x2x8(parts[i][0], parts[i][1], parts[i][2], parts[i][3]).ShiftLeft(shift)
			isum := sv.ConcatSubPairsGrouped(sv)
			yg := (*[4 * q8_KBytes]byte)(a[b0*q8_KBytes:])
			scale := func(j int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(yg[j*q8_KBytes:])) }
			if !ok { // a zero, subnormal, infinite or NaN scale
				isum.StoreArray(&sums)
				out[i] += FP16ToFP32(half(0)) * scale(0) * float32(sums[0])
				out[i] += FP16ToFP32(half(1)) * scale(1) * float32(sums[1])
				out[i] += FP16ToFP32(half(2)) * scale(2) * float32(sums[4])
				out[i] += FP16ToFP32(half(3)) * scale(3) * float32(sums[5])
				continue
			}
			var ylo, yhi archsimd.Float32x4
			ylo, yhi = ylo.SetElem(0, scale(0)).SetElem(1, scale(1)), yhi.SetElem(0, scale(2)).SetElem(1, scale(3))
			var yd archsimd.Float32x8
			yd = yd.SetLo(ylo).SetHi(yhi)
			out[i] = addLanes0145(out[i], f.Mul(yd).Mul(isum.ConvertToFloat32()))
		}
	}
}

// kBlockDots sets parts[i][j], for every activation i, to the integer
// sums of a decoded K-quant block with the activation's Q8_K block b: the
// lanes of Σ_k (q[k]·y_k pairs)·sc[k] (VPMADDUBSW, VPMADDWD) and of
// bsums·mv, pairwise added (VPHADDD). Four activations at a time share
// the loads of q[k] and sc[k].
func kBlockDots(q *[8]archsimd.Uint8x32, sc *[8]archsimd.Int16x16, mv archsimd.Int16x16, acts [][]byte, b int, parts *[MaxDotN][4]archsimd.Int32x8, j int) {
	dp := func(k int, y *[q8_KBytes]byte) archsimd.Int32x8 {
		return q[k].DotProductPairsSaturated(load32((*[32]byte)(y[4+32*k:])).BitsToInt8()).DotProductPairs(sc[k])
	}
	finish := func(acc archsimd.Int32x8, y *[q8_KBytes]byte) archsimd.Int32x8 {
		return acc.ConcatAddPairsGrouped(load32((*[32]byte)(y[4+qkK:])).AsInt16x16().DotProductPairs(mv))
	}
	acts = acts[:min(len(acts), MaxDotN)]
	i := 0
	for ; i+4 <= len(acts); i += 4 {
		y0 := (*[q8_KBytes]byte)(acts[i][b*q8_KBytes:])
		y1 := (*[q8_KBytes]byte)(acts[i+1][b*q8_KBytes:])
		y2 := (*[q8_KBytes]byte)(acts[i+2][b*q8_KBytes:])
		y3 := (*[q8_KBytes]byte)(acts[i+3][b*q8_KBytes:])
		parts[i][j], parts[i+1][j], parts[i+2][j], parts[i+3][j] = kDots4(q, sc, mv, y0, y1, y2, y3)
	}
	for ; i < len(acts); i++ {
		y := (*[q8_KBytes]byte)(acts[i][b*q8_KBytes:])
		acc := dp(0, y).Add(dp(1, y)).Add(dp(2, y).Add(dp(3, y))).Add(dp(4, y).Add(dp(5, y)).Add(dp(6, y).Add(dp(7, y))))
		parts[i][j] = finish(acc, y)
	}
}

// kDots4 is kBlockDots for four activations' blocks y0..y3, sharing the
// loads of q[k] and sc[k] (not inlined: with the block pointers in
// registers the loads take constant offsets).
//
//go:noinline
func kDots4(q *[8]archsimd.Uint8x32, sc *[8]archsimd.Int16x16, mv archsimd.Int16x16, y0, y1, y2, y3 *[q8_KBytes]byte) (archsimd.Int32x8, archsimd.Int32x8, archsimd.Int32x8, archsimd.Int32x8) {
	// sub-block k for the four activations, written out below
	step := func(k int, a0, a1, a2, a3 archsimd.Int32x8) (archsimd.Int32x8, archsimd.Int32x8, archsimd.Int32x8, archsimd.Int32x8) {
		qk, sk := q[k], sc[k]
		return a0.Add(qk.DotProductPairsSaturated(load32((*[32]byte)(y0[4+32*k:])).BitsToInt8()).DotProductPairs(sk)),
			a1.Add(qk.DotProductPairsSaturated(load32((*[32]byte)(y1[4+32*k:])).BitsToInt8()).DotProductPairs(sk)),
			a2.Add(qk.DotProductPairsSaturated(load32((*[32]byte)(y2[4+32*k:])).BitsToInt8()).DotProductPairs(sk)),
			a3.Add(qk.DotProductPairsSaturated(load32((*[32]byte)(y3[4+32*k:])).BitsToInt8()).DotProductPairs(sk))
	}
	var a0, a1, a2, a3 archsimd.Int32x8
	a0, a1, a2, a3 = step(0, a0, a1, a2, a3)
	a0, a1, a2, a3 = step(1, a0, a1, a2, a3)
	a0, a1, a2, a3 = step(2, a0, a1, a2, a3)
	a0, a1, a2, a3 = step(3, a0, a1, a2, a3)
	a0, a1, a2, a3 = step(4, a0, a1, a2, a3)
	a0, a1, a2, a3 = step(5, a0, a1, a2, a3)
	a0, a1, a2, a3 = step(6, a0, a1, a2, a3)
	a0, a1, a2, a3 = step(7, a0, a1, a2, a3)
	finish := func(acc archsimd.Int32x8, y *[q8_KBytes]byte) archsimd.Int32x8 {
		return acc.ConcatAddPairsGrouped(load32((*[32]byte)(y[4+qkK:])).AsInt16x16().DotProductPairs(mv))
	}
	return finish(a0, y0), finish(a1, y1), finish(a2, y2), finish(a3, y3)
}

// dotNQ4_0AVX2 is dotQ4_0AVX2 for several activations: four at a time, the four
// block sums are reduced together and scaled and added in float32 lanes
// (the same IEEE operations, per lane, as the one-activation kernel). The
// row is walked once per four activations (a Q4_0 block decodes in three
// instructions; the sums stay in registers).
func dotNQ4_0AVX2(n int, w []byte, acts [][]byte, out []float32) {
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
		out[i] = dotQ4_0AVX2(n, w, acts[i])
	}
}

// dotNQ8_0AVX2 is dotQ8_0AVX2 for several activations, four at a time like
// dotNQ4_0AVX2.
func dotNQ8_0AVX2(n int, w []byte, acts [][]byte, out []float32) {
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
		out[i] = dotQ8_0AVX2(n, w, acts[i])
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

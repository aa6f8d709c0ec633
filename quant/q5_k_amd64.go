//go:build goexperiment.simd

package quant

import "simd/archsimd"

// The AVX2 kernels of Q5_K (kernels_amd64.go); dotQ5_KGo in q5_k.go is
// their portable twin.

// dotQ5_KAVX2 computes the same as dotQ5_KRef, bit for bit, with the
// instructions of ggml's x86 kernel: per 32-weight sub-block VPMADDUBSW
// sums quant×int8 pairs (at most 2·31·128 = 7936, clear of saturation)
// and VPMADDWD multiplies the pairs by the 6-bit scale, which leaves the
// weights 4k..4k+3 of the 32 in int32 lane k; the block's lanes are
// widened and accumulated by VFMADD, the mins by a scalar FMA (in lane 0
// of a vector).
func dotQ5_KAVX2(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q5_KBytes], act[:nb*q8_KBytes]
	m4, m1 := archsimd.BroadcastUint8x32(0x0f), archsimd.BroadcastUint8x32(0x01)
	var scm [8]archsimd.Int8x32 // VPSHUFB patterns broadcasting scale k
	for k := range scm {
		scm[k] = byteBroadcastShuffle(k)
	}
	mnm := archsimd.LoadInt8x32Array(&q4KMinShuffle)
	var acc archsimd.Float32x8
	var summs archsimd.Float32x4 // lane 0
	for b := range nb {
		x := (*[q5_KBytes]byte)(w[b*q5_KBytes:])
		yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		sumi, summ := q5KBlockAVX2(x, yb, &scm, mnm, m4, m1)
		yd := f32At(yb[:])
		acc = sumi.ConvertToFloat32().MulAdd(archsimd.BroadcastFloat32x8(yd*fp16At(x[:])), acc)
		summs = archsimd.BroadcastFloat32x4(-yd*fp16At(x[2:])).MulAdd(archsimd.BroadcastFloat32x4(float32(summ)), summs)
	}
	return hsumX86Vec(acc) + summs.GetElem(0)
}

// q5KBlockAVX2 returns the integer lanes of block x·y in ggml's x86 order
// and its Σ min·bsum.
func q5KBlockAVX2(x *[q5_KBytes]byte, yb *[q8_KBytes]byte, scm *[8]archsimd.Int8x32, mnm archsimd.Int8x32, m4, m1 archsimd.Uint8x32) (archsimd.Int32x8, int32) {
	sc, mn := scalesMinsK4Array((*[12]byte)(x[4:]))
	scv := archsimd.BroadcastUint64x4(sc).AsInt8x32()
	s := func(k int) archsimd.Int16x16 { return scv.PermuteOrZeroGrouped(scm[k]).AsInt16x16() }
	hb := load32((*[32]byte)(x[16:])).ReshapeToUint16s()
	// the four groups of 64 weights, unrolled so that the shifts take
	// constant counts
	g := func(g int, b uint64) archsimd.Int32x8 {
		lo, hi := q5KQuants(load32((*[32]byte)(x[48+32*g:])), hb, b, m4, m1)
		plo := lo.DotProductPairsSaturated(load32((*[32]byte)(yb[4+64*g:])).BitsToInt8()).DotProductPairs(s(2 * g))
		return plo.Add(hi.DotProductPairsSaturated(load32((*[32]byte)(yb[36+64*g:])).BitsToInt8()).DotProductPairs(s(2*g + 1)))
	}
	sumi := g(0, 0).Add(g(1, 2)).Add(g(2, 4).Add(g(3, 6)))
	// Σ min·(bsum 2k + bsum 2k+1), exact in int32 like the reference's sum
	mins := archsimd.BroadcastUint64x4(mn).AsInt8x32().PermuteOrZeroGrouped(mnm).AsInt16x16()
	bs := load32((*[32]byte)(yb[4+qkK:])).AsInt16x16()
	return sumi, hsum8(bs.DotProductPairs(mins))
}

// q5KQuants returns the quants of a group of 64 weights: the low nibbles
// of v with the fifth bits at bit b of qh's bytes (hb), the high nibbles
// with those at bit b+1.
func q5KQuants(v archsimd.Uint8x32, hb archsimd.Uint16x16, b uint64, m4, m1 archsimd.Uint8x32) (lo, hi archsimd.Uint8x32) {
	h := hb.AsUint8x32()
	lo = v.And(m4).Or(sll(srl(h, int(b)).And(m1), 4))
	hi = srl(v, 4).And(m4).Or(sll(srl(h, int(b)+1).And(m1), 4))
	return lo, hi
}

// hsumX86Vec is hsumX86 of the lanes of v, in assembly that clears the
// vector registers' upper halves for the scalar code after it
// (hsum_amd64.s).
func hsumX86Vec(v archsimd.Float32x8) float32 {
	var a [8]float32
	v.StoreArray(&a)
	return hsumX86Asm(&a)
}

// hsumX86Asm is hsumX86 of v's lanes, leaving the upper halves clear.
//
//go:noescape
func hsumX86Asm(v *[8]float32) float32

// dotNQ5_KAVX2 is dotQ5_KAVX2 for several activations: each block is
// decoded once (quants with their fifth bits, scales broadcast) and dotted
// with every activation as dotQ5_KAVX2 does; the activations' min sums
// run four to a vector, one lane each.
func dotNQ5_KAVX2(n int, w []byte, acts [][]byte, out []float32) {
	if len(acts) > MaxDotN {
		dotEach(dotQ5_KAVX2, n, w, acts, out)
		return
	}
	nb := n / qkK
	w = w[:nb*q5_KBytes]
	out = out[:len(acts)]
	m4, m1 := archsimd.BroadcastUint8x32(0x0f), archsimd.BroadcastUint8x32(0x01)
	var scm [8]archsimd.Int8x32
	for k := range scm {
		scm[k] = byteBroadcastShuffle(k)
	}
	mnm := archsimd.LoadInt8x32Array(&q4KMinShuffle)
	var (
		acc   [MaxDotN]archsimd.Float32x8
		summs [MaxDotN / 4]archsimd.Float32x4 // activation i in lane i%4 of summs[i/4]
		dmins [MaxDotN]float32
		mins  [MaxDotN]float32
		q     [8]archsimd.Uint8x32 // sub-block k's quants
		sc    [8]archsimd.Int16x16 // sub-block k's scale, broadcast
	)
	for b := range nb {
		x := (*[q5_KBytes]byte)(w[b*q5_KBytes:])
		mv := q5KDecode(x, &q, &sc, &scm, mnm, m4, m1)
		dx, dminx := fp16At(x[:]), fp16At(x[2:])
		for i, a := range acts {
			yb := (*[q8_KBytes]byte)(a[b*q8_KBytes:])
			d := func(k int) archsimd.Int32x8 {
				return q[k].DotProductPairsSaturated(load32((*[32]byte)(yb[4+32*k:])).BitsToInt8()).DotProductPairs(sc[k])
			}
			sumi := d(0).Add(d(1)).Add(d(2).Add(d(3))).Add(d(4).Add(d(5)).Add(d(6).Add(d(7))))
			yd := f32At(yb[:])
			acc[i] = sumi.ConvertToFloat32().MulAdd(archsimd.BroadcastFloat32x8(yd*dx), acc[i])
			dmins[i] = -yd * dminx
			mins[i] = float32(hsum8(load32((*[32]byte)(yb[4+qkK:])).AsInt16x16().DotProductPairs(mv)))
		}
		for g := 0; g < len(acts); g += 4 {
			summs[g/4] = archsimd.LoadFloat32x4Array((*[4]float32)(dmins[g:])).MulAdd(archsimd.LoadFloat32x4Array((*[4]float32)(mins[g:])), summs[g/4])
		}
	}
	for g := 0; g < len(out); g += 4 {
		var sm [4]float32
		summs[g/4].StoreArray(&sm)
		for i := g; i < min(g+4, len(out)); i++ {
			out[i] = hsumX86Vec(acc[i]) + sm[i-g]
		}
	}
}

// q5KDecode decodes a Q5_K block for dotNQ5_KAVX2: sub-block k's quants
// in q[k], its scale in every int16 lane of sc[k], and it returns the mins
// in the int16 lanes m0 m0 m1 m1 … that meet the activation's bsums.
func q5KDecode(x *[q5_KBytes]byte, q *[8]archsimd.Uint8x32, sc *[8]archsimd.Int16x16, scm *[8]archsimd.Int8x32, mnm archsimd.Int8x32, m4, m1 archsimd.Uint8x32) archsimd.Int16x16 {
	scl, mnl := scalesMinsK4Array((*[12]byte)(x[4:]))
	scv := broadcast64(scl).AsInt8x32()
	for k := range sc {
		sc[k] = scv.PermuteOrZeroGrouped(scm[k]).AsInt16x16()
	}
	hb := load32((*[32]byte)(x[16:])).ReshapeToUint16s()
	q[0], q[1] = q5KQuants(load32((*[32]byte)(x[48:])), hb, 0, m4, m1)
	q[2], q[3] = q5KQuants(load32((*[32]byte)(x[80:])), hb, 2, m4, m1)
	q[4], q[5] = q5KQuants(load32((*[32]byte)(x[112:])), hb, 4, m4, m1)
	q[6], q[7] = q5KQuants(load32((*[32]byte)(x[144:])), hb, 6, m4, m1)
	return broadcast64(mnl).AsInt8x32().PermuteOrZeroGrouped(mnm).AsInt16x16()
}

//go:build goexperiment.simd && amd64

package quant

import (
	"encoding/binary"
	"math"
	"simd/archsimd"
)

// The native AVX2 kernel of Q4_K; q4_k_scalar.go has its portable twin.

// dotQ4_K computes the same as dotQ4_KRef, bit for bit: per 32-weight
// sub-block VPMADDUBSW sums nibble×int8 pairs (at most 2·15·128 = 3840, far
// from saturation) and VPMADDWD multiplies the pairs by the 6-bit scale
// into int32; the mins use the activation's block sums, as in the
// reference. The integer sums of four blocks are reduced together and
// scaled in float32 lanes (the reference's operations, lane by lane); only
// the running sum is added block by block.
func dotQ4_K(n int, w, act []byte) float32 {
	if !hasAVX2 {
		return dotQ4_KRef(n, w, act)
	}
	nb := n / qkK
	w, act = w[:nb*q4_KBytes], act[:nb*q8_KBytes]
	m4 := archsimd.BroadcastUint8x32(0x0f)
	var scm [8]archsimd.Int8x32 // VPSHUFB patterns broadcasting scale k
	for k := range scm {
		scm[k] = byteBroadcastShuffle(k)
	}
	mnm := archsimd.LoadInt8x32Array(&q4KMinShuffle)
	var (
		part [4]archsimd.Int32x8 // block j's scaled sums and min sums, half-reduced
		sums [8]int32            // isum, summ of block 0, of block 1, …
		hd   [8]uint32           // d, dmin of block 0, of block 1, … (fp16)
		yd   [8]float32          // the activation scale of block 0 (twice), …
		q    [8]float32          // the block terms, see below
	)
	var sum float32
	for b0 := 0; b0 < nb; b0 += 4 {
		m := min(4, nb-b0)
		for j := range m {
			x := (*[q4_KBytes]byte)(w[(b0+j)*q4_KBytes:])
			yb := (*[q8_KBytes]byte)(act[(b0+j)*q8_KBytes:])
			sc, mn := scalesMinsK4Array((*[12]byte)(x[4:]))
			scv := archsimd.BroadcastUint64x4(sc).AsInt8x32()
			s := func(k int) archsimd.Int16x16 { return scv.PermuteOrZeroGrouped(scm[k]).AsInt16x16() }
			acc := q4KPair((*[32]byte)(x[16:]), (*[32]byte)(yb[4:]), (*[32]byte)(yb[36:]), s(0), s(1), m4).Add(
				q4KPair((*[32]byte)(x[48:]), (*[32]byte)(yb[68:]), (*[32]byte)(yb[100:]), s(2), s(3), m4)).Add(
				q4KPair((*[32]byte)(x[80:]), (*[32]byte)(yb[132:]), (*[32]byte)(yb[164:]), s(4), s(5), m4).Add(
					q4KPair((*[32]byte)(x[112:]), (*[32]byte)(yb[196:]), (*[32]byte)(yb[228:]), s(6), s(7), m4)))
			// Σ min·(bsum 2k + bsum 2k+1), exact in int32 like the reference's sum
			mins := archsimd.BroadcastUint64x4(mn).AsInt8x32().PermuteOrZeroGrouped(mnm).AsInt16x16()
			bs := load32((*[32]byte)(yb[4+qkK:])).AsInt16x16()
			part[j] = acc.ConcatAddPairsGrouped(bs.DotProductPairs(mins))
			hd[2*j], hd[2*j+1] = uint32(binary.LittleEndian.Uint16(x[:])), uint32(binary.LittleEndian.Uint16(x[2:]))
			y := math.Float32frombits(binary.LittleEndian.Uint32(yb[:]))
			yd[2*j], yd[2*j+1] = y, y
		}
		sv := hsum4x2x8(&part)
		f, ok := halvesToFloats(archsimd.LoadUint32x8Array(&hd))
		if !ok { // a zero, subnormal, infinite or NaN scale
			sv.StoreArray(&sums)
			for j := range m {
				d := FP16ToFP32(uint16(hd[2*j])) * yd[2*j]
				dmin := FP16ToFP32(uint16(hd[2*j+1])) * yd[2*j]
				sum += float32(d*float32(sums[2*j])) - float32(dmin*float32(sums[2*j+1]))
			}
			continue
		}
		// lanes 2j, 2j+1: float32(d*float32(isum)), float32(dmin*float32(summ))
		// of block j, with d = fp16(d)·yd and dmin = fp16(dmin)·yd
		p := f.Mul(archsimd.LoadFloat32x8Array(&yd)).Mul(sv.ConvertToFloat32())
		p.ConcatSubPairsGrouped(p).StoreArray(&q) // their differences: blocks 0, 1, (0, 1), 2, 3, …
		for j := range m {
			sum += q[j&1+j&2*2]
		}
	}
	return sum
}

// q4KPair returns, in int32 lanes, the scaled dots of a 64-weight group:
// the low nibbles of q times ylo with scale slo, plus the high nibbles
// times yhi with scale shi.
func q4KPair(q, ylo, yhi *[32]byte, slo, shi archsimd.Int16x16, m4 archsimd.Uint8x32) archsimd.Int32x8 {
	v := load32(q)
	lo, hi := v.And(m4), v.ReshapeToUint16s().ShiftAllRight(4).AsUint8x32().And(m4)
	a := lo.DotProductPairsSaturated(load32(ylo).BitsToInt8()).DotProductPairs(slo)
	return a.Add(hi.DotProductPairsSaturated(load32(yhi).BitsToInt8()).DotProductPairs(shi))
}

// scalesMinsK4Array is scalesMinsK4 of a fixed-size array (inlined by the
// compiler, without bounds checks).
func scalesMinsK4Array(q *[12]byte) (sc, mn uint64) {
	const low6, low4, top2 = 0x3f3f3f3f, 0x0f0f0f0f, 0x03030303
	u0, u1, u2 := binary.LittleEndian.Uint32(q[:]), binary.LittleEndian.Uint32(q[4:]), binary.LittleEndian.Uint32(q[8:])
	s47 := u2&low4 | (u0>>6&top2)<<4
	m47 := u2>>4&low4 | (u1>>6&top2)<<4
	return uint64(u0&low6) | uint64(s47)<<32, uint64(u1&low6) | uint64(m47)<<32
}

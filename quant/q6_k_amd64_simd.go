//go:build goexperiment.simd && amd64

package quant

import (
	"encoding/binary"
	"math"
	"simd/archsimd"
)

// The native AVX2 kernel of Q6_K; q6_k_scalar.go has its portable twin.

// dotQ6_K computes the same as dotQ6_KRef, bit for bit, for activations
// made by the Q8_K quantizer (whose block sums are the sums of its quants):
// the unsigned quants q (0..63) times int8 activations go through
// VPMADDUBSW (pairs at most 2·63·128 = 16128) and VPMADDWD with the
// sub-block scales, and the offset is taken off once per block as
// 32·Σ scale·bsum; all of it is exact int32 arithmetic, so the sum equals
// the reference's Σ scale·Σ (q-32)·y. The integer sums of four blocks are
// reduced together and scaled in float32 lanes (the reference's operations,
// lane by lane); only the running sum is added block by block.
func dotQ6_K(n int, w, act []byte) float32 {
	if !hasAVX2 {
		return dotQ6_KRef(n, w, act)
	}
	nb := n / qkK
	w, act = w[:nb*q6_KBytes], act[:nb*q8_KBytes]
	m4, m30 := archsimd.BroadcastUint8x32(0x0f), archsimd.BroadcastUint8x32(0x30)
	scm := q6KScaleShuffles()
	var (
		part [4]archsimd.Int32x8 // block j's scaled sums and offsets, half-reduced
		sums [8]int32
		// lanes 0, 1, 4, 5 (block j in lane j&1 + 4·(j&2)/2): d (fp16) and
		// the activation scale; the other lanes stay 1.0
		hd = [8]uint32{0x3c00, 0x3c00, 0x3c00, 0x3c00, 0x3c00, 0x3c00, 0x3c00, 0x3c00}
		yd = [8]float32{1, 1, 1, 1, 1, 1, 1, 1}
		p  [8]float32
	)
	shift := archsimd.LoadUint32x8Array(&[8]uint32{0, 5, 0, 5, 0, 5, 0, 5})
	var sum float32
	for b := range nb {
		x := (*[q6_KBytes]byte)(w[b*q6_KBytes:])
		yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		scv := load16((*[16]byte)(x[192:])).BitsToInt8().ExtendToInt16() // the 16 scales
		var acc archsimd.Int32x8
		for h := range 2 { // 128 weights: ql[64h:64h+64], qh[32h:32h+32]
			a, c := load32((*[32]byte)(x[64*h:])), load32((*[32]byte)(x[64*h+32:]))
			hb := load32((*[32]byte)(x[128+32*h:])).ReshapeToUint16s()
			y := (*[128]byte)(yb[4+128*h:])
			sc := scv.ConcatPermute128Scalars(0, 0, scv)
			if h == 1 {
				sc = scv.ConcatPermute128Scalars(1, 1, scv)
			}
			// lanes < 16 of quants k: sub-block 2k, lanes >= 16: sub-block 2k+1
			d := func(q archsimd.Uint8x32, k int) archsimd.Int32x8 {
				return q.DotProductPairsSaturated(load32((*[32]byte)(y[32*k:])).BitsToInt8()).DotProductPairs(sc.AsInt8x32().PermuteOrZeroGrouped(scm[k]).AsInt16x16())
			}
			acc = acc.Add(d(a.And(m4).Or(hb.ShiftAllLeft(4).AsUint8x32().And(m30)), 0).Add(
				d(c.And(m4).Or(hb.ShiftAllLeft(2).AsUint8x32().And(m30)), 1)).Add(
				d(a.ReshapeToUint16s().ShiftAllRight(4).AsUint8x32().And(m4).Or(hb.AsUint8x32().And(m30)), 2).Add(
					d(c.ReshapeToUint16s().ShiftAllRight(4).AsUint8x32().And(m4).Or(hb.ShiftAllRight(2).AsUint8x32().And(m30)), 3))))
		}
		// Σ scale·bsum: 32 times it is the offset of the quants
		bs := load32((*[32]byte)(yb[4+qkK:])).AsInt16x16()
		j := b & 3
		part[j] = acc.ConcatAddPairsGrouped(bs.DotProductPairs(scv))
		l := j&1 + j&2*2
		hd[l] = uint32(binary.LittleEndian.Uint16(x[208:]))
		yd[l] = math.Float32frombits(binary.LittleEndian.Uint32(yb[:]))
		if j < 3 && b < nb-1 {
			continue
		}
		m := j + 1
		// lanes 2j, 2j+1: the sum and the offset of block j; their
		// difference (isum of the reference) in lane j&1 + 4·(j&2)/2
		sv := hsum4x2x8(&part).ShiftLeft(shift)
		isum := sv.ConcatSubPairsGrouped(sv)
		f, ok := halvesToFloats(archsimd.LoadUint32x8Array(&hd))
		if !ok { // a zero, subnormal, infinite or NaN scale
			isum.StoreArray(&sums)
			for j := range m {
				l := j&1 + j&2*2
				sum += FP16ToFP32(uint16(hd[l])) * yd[l] * float32(sums[l])
			}
			continue
		}
		f.Mul(archsimd.LoadFloat32x8Array(&yd)).Mul(isum.ConvertToFloat32()).StoreArray(&p)
		for j := range m {
			sum += p[j&1+j&2*2]
		}
	}
	return sum
}

// q6KScaleShuffles returns the VPSHUFB patterns k = 0..3 that broadcast
// int16 lane 2k of each 128-bit half to the low half of a vector and lane
// 2k+1 to the high half.
func q6KScaleShuffles() (scm [4]archsimd.Int8x32) {
	for k := range scm {
		var idx [32]int8
		for i := range 8 {
			idx[2*i], idx[2*i+1] = int8(4*k), int8(4*k+1)
			idx[16+2*i], idx[16+2*i+1] = int8(4*k+2), int8(4*k+3)
		}
		scm[k] = archsimd.LoadInt8x32Array(&idx)
	}
	return scm
}

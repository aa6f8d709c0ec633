package quant

import "encoding/binary"

// IQ1_M: super-blocks of 256 weights, 56 bytes, 1.75 bits per weight.
// Like IQ1_S (the iq1sGrid codebook plus ±iq1sDelta), with a delta sign per
// group of 8 and a 3-bit scale per 16 weights; the fp16 super-block scale is
// spread over the top nibbles of the scale words.
//
//	offset size
//	0      32   qs[32]      low 8 bits of the grid index of group g (= 4*ib+l)
//	32     16   qh[16]      qh[2ib+l/2], nibble l%2: bits 0..2 are bits 8..10 of
//	                        group l's index, bit 3 its delta sign (set: -iq1sDelta)
//	48     8    scales[8]   4 uint16 sc[k]: bits 6*(ib%2)..+2 of sc[ib/2] are the
//	                        scale s of weights 0..15 of sub-block ib, the next 3
//	                        bits that of weights 16..31; bits 12..15 of sc[k] are
//	                        bits 4k..4k+3 of the fp16 d
//
// x = d*(2s+1) * (grid + delta). Activation format: Q8_K.
const iq1_MBytes = qkK/8 + qkK/16 + qkK/32

var _ [0]struct{} = [iq1_MBytes - 56]struct{}{} // size check

// iq1MD returns the super-block scale of an IQ1_M block.
func iq1MD(blk []byte) float32 {
	var h uint16
	for k := range 4 {
		h |= binary.LittleEndian.Uint16(blk[48+2*k:]) >> 12 << (4 * k)
	}
	return FP16ToFP32(h)
}

// iq1MScale returns 2s+1 for half h (0: weights 0..15, 1: 16..31) of
// sub-block ib.
func iq1MScale(blk []byte, ib, h int) int32 {
	sc := binary.LittleEndian.Uint16(blk[48+2*(ib/2):])
	return int32(2*(sc>>(6*(ib%2)+3*h)&7) + 1)
}

// iq1MGroup returns the grid point of group l of sub-block ib and whether
// its delta is negative.
func iq1MGroup(blk []byte, ib, l int) (*[8]int8, bool) {
	qh := blk[32+2*ib+l/2] >> (4 * (l % 2))
	return &iq1sGrid[int(blk[4*ib+l])|int(qh&7)<<8], qh&8 != 0
}

func dequantizeIQ1_M(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qkK; b++ {
		blk := src[b*iq1_MBytes : (b+1)*iq1_MBytes]
		d := iq1MD(blk)
		y := dst[b*qkK : (b+1)*qkK]
		for ib := range qkK / 32 {
			for l := range 4 {
				dl := d * float32(iq1MScale(blk, ib, l/2))
				grid, neg := iq1MGroup(blk, ib, l)
				delta := float32(iq1sDelta)
				if neg {
					delta = -iq1sDelta
				}
				for j, g := range grid {
					y[32*ib+8*l+j] = dl * (float32(g) + delta)
				}
			}
		}
	}
}

// dotIQ1_MRef is ggml_vec_dot_iq1_m_q8_K of ggml's AVX2 build, the order
// llama.cpp runs on x86: two sets of eight lane sums per block (iq3Lanes,
// a scale per 16 weights), of the grid values and of the delta signs
// (±1 per group of 8) times the activation, each scaled and added to its
// own eight running sums (iqAccumulate); at the end hsum_float_8 of the first plus iq1sDelta times
// hsum_float_8 of the second.
func dotIQ1_MRef(n int, w, act []byte) float32 {
	var acc1, acc2 [8]float32
	for b := 0; b < n/qkK; b++ {
		x := w[b*iq1_MBytes : (b+1)*iq1_MBytes]
		yd, q8, _ := q8KBlock(act[b*q8_KBytes : (b+1)*q8_KBytes])
		var lanes1, lanes2 [8]int32
		for ib := range qkK / 32 {
			for l := range 4 {
				grid, neg := iq1MGroup(x, ib, l)
				ls := iq1MScale(x, ib, l/2)
				y := q8[32*ib+8*l : 32*ib+8*l+8]
				var g1, g2, d1, d2 int32
				for j := range 4 {
					g1 += int32(int8(y[j])) * int32(grid[j])
					g2 += int32(int8(y[j+4])) * int32(grid[j+4])
					d1 += int32(int8(y[j]))
					d2 += int32(int8(y[j+4]))
				}
				if neg {
					d1, d2 = -d1, -d2
				}
				lanes1[2*l] += ls * g1
				lanes1[2*l+1] += ls * g2
				lanes2[2*l] += ls * d1
				lanes2[2*l+1] += ls * d2
			}
		}
		d := yd * iq1MD(x)
		iqAccumulate(&acc1, d, &lanes1)
		iqAccumulate(&acc2, d, &lanes2)
	}
	return laneSum8(&acc1) + float32(iq1sDelta*laneSum8(&acc2))
}

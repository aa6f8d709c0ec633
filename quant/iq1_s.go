package quant

import "encoding/binary"

// IQ1_S: super-blocks of 256 weights, 50 bytes, 1.5625 bits per weight.
// Groups of 8 weights are points of the 2048-entry ternary codebook
// iq1sGrid (values -1, 0, 1), shifted by ±iq1sDelta per 32-weight sub-block.
//
//	offset size
//	0      2    d        fp16 super-block scale
//	2      32   qs[32]   low 8 bits of the grid index of group g (= 4*ib+l)
//	34     16   qh[8]    uint16 per sub-block ib: bits 3l..3l+2 are bits 8..10 of
//	                     group l's index, bits 12..14 the 3-bit scale s, bit 15 the
//	                     sign of the delta (set: -iq1sDelta)
//
// x = d*(2s+1) * (grid + delta). Activation format: Q8_K.
const iq1_SBytes = 2 + qkK/8 + qkK/16

var _ [0]struct{} = [iq1_SBytes - 50]struct{}{} // size check

func dequantizeIQ1_S(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qkK; b++ {
		blk := src[b*iq1_SBytes : (b+1)*iq1_SBytes]
		d := fp16At(blk)
		y := dst[b*qkK : (b+1)*qkK]
		for ib := range qkK / 32 {
			qh := binary.LittleEndian.Uint16(blk[34+2*ib:])
			dl := d * float32(2*(qh>>12&7)+1)
			delta := float32(iq1sDelta)
			if qh&0x8000 != 0 {
				delta = -iq1sDelta
			}
			for l := range 4 {
				grid := &iq1sGrid[int(blk[2+4*ib+l])|int(qh>>(3*l)&7)<<8]
				for j, g := range grid {
					y[32*ib+8*l+j] = dl * (float32(g) + delta)
				}
			}
		}
	}
}

// dotIQ1_SRef is ggml_vec_dot_iq1_s_q8_K of ggml's AVX2 build, the order
// llama.cpp runs on x86: the grid part as the other codebook formats'
// (eight lane sums per block, iq3Lanes, scaled and added to eight running
// sums, iqAccumulate);
// the delta part d·Σ_ib (2s+1)·(±1)·(the sub-block's activation sum), a
// float32 product added to a ninth running sum (ggml's C expression, not
// fused); at the end hsum_float_8 of the eight plus iq1sDelta times the
// ninth.
func dotIQ1_SRef(n int, w, act []byte) float32 {
	var acc [8]float32
	var acc1 float32
	for b := 0; b < n/qkK; b++ {
		x := w[b*iq1_SBytes : (b+1)*iq1_SBytes]
		yd, q8, bsums := q8KBlock(act[b*q8_KBytes : (b+1)*q8_KBytes])
		var lanes [8]int32
		var sumi1 int32
		for ib := range qkK / 32 {
			qh := binary.LittleEndian.Uint16(x[34+2*ib:])
			ls := int32(2*(qh>>12&7) + 1)
			delta := int32(1)
			if qh&0x8000 != 0 {
				delta = -1
			}
			for l := range 4 {
				grid := &iq1sGrid[int(x[2+4*ib+l])|int(qh>>(3*l)&7)<<8]
				y := q8[32*ib+8*l : 32*ib+8*l+8]
				var s1, s2 int32
				for j := range 4 {
					s1 += int32(int8(y[j])) * int32(grid[j])
					s2 += int32(int8(y[j+4])) * int32(grid[j+4])
				}
				lanes[2*l] += ls * s1
				lanes[2*l+1] += ls * s2
			}
			sumi1 += ls * delta * (bsum(bsums, 2*ib) + bsum(bsums, 2*ib+1))
		}
		d := yd * fp16At(x)
		iqAccumulate(&acc, d, &lanes)
		acc1 += float32(d * float32(sumi1))
	}
	return laneSum8(&acc) + float32(iq1sDelta*acc1)
}

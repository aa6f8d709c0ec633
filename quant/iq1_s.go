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

// dotIQ1_S is ggml_vec_dot_iq1_s_q8_K: the delta term uses the Q8_K block
// sums.
func dotIQ1_S(n int, w, act []byte) float32 {
	var sum float32
	for b := 0; b < n/qkK; b++ {
		x := w[b*iq1_SBytes : (b+1)*iq1_SBytes]
		yd, q8, bsums := q8KBlock(act[b*q8_KBytes : (b+1)*q8_KBytes])
		var sumi, sumi1 int32
		for ib := range qkK / 32 {
			qh := binary.LittleEndian.Uint16(x[34+2*ib:])
			ls := int32(2*(qh>>12&7) + 1)
			delta := int32(1)
			if qh&0x8000 != 0 {
				delta = -1
			}
			var lsum int32
			for l := range 4 {
				grid := &iq1sGrid[int(x[2+4*ib+l])|int(qh>>(3*l)&7)<<8]
				y := q8[32*ib+8*l : 32*ib+8*l+8]
				for j := range 8 {
					lsum += int32(int8(y[j])) * int32(grid[j])
				}
			}
			sumi += ls * lsum
			sumi1 += ls * delta * (bsum(bsums, 2*ib) + bsum(bsums, 2*ib+1))
		}
		sum += fp16At(x) * yd * (float32(sumi) + float32(iq1sDelta*float32(sumi1)))
	}
	return sum
}

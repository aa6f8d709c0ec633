package quant

// IQ3_S: super-blocks of 256 weights, 110 bytes, 3.4375 bits per weight.
// Groups of 4 weights are points of the 512-entry codebook iq3sGrid with
// explicit sign bits; 8 4-bit scales, one per 32 weights.
//
//	offset size
//	0      2    d           fp16 super-block scale
//	2      64   qs[64]      low 8 bits of the grid index of group g (4 weights)
//	66     8    qh[8]       bit k of qh[ib] is bit 8 of the index of group 8*ib+k
//	74     32   signs[32]   bit j of signs[4*ib+l] is the sign of weight 32*ib+8*l+j
//	106    4    scales[4]   4-bit s of sub-block ib: nibble ib%2 of scales[ib/2]
//
// x = d*(1+2s) * grid * sign. Activation format: Q8_K.
const iq3_SBytes = 2 + qkK/4 + qkK/32 + qkK/8 + qkK/64

var _ [0]struct{} = [iq3_SBytes - 110]struct{}{} // size check

// iq3SIndex returns the 9-bit grid index of group k (0..7) of sub-block ib.
func iq3SIndex(blk []byte, ib, k int) int {
	return int(blk[2+8*ib+k]) | int(blk[66+ib]>>k&1)<<8
}

// iq3SScale returns 2s+1 for sub-block ib.
func iq3SScale(blk []byte, ib int) int32 {
	return 1 + 2*int32(blk[106+ib/2]>>(4*(ib%2))&0xf)
}

func dequantizeIQ3_S(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qkK; b++ {
		blk := src[b*iq3_SBytes : (b+1)*iq3_SBytes]
		d := fp16At(blk)
		y := dst[b*qkK : (b+1)*qkK]
		for ib := range qkK / 32 {
			db := d * float32(iq3SScale(blk, ib))
			for l := range 4 {
				signs := blk[74+4*ib+l]
				gridDeq(y[32*ib+8*l:], db, iq3sGrid[iq3SIndex(blk, ib, 2*l)][:], signs)
				gridDeq(y[32*ib+8*l+4:], db, iq3sGrid[iq3SIndex(blk, ib, 2*l+1)][:], signs>>4)
			}
		}
	}
}

// dotIQ3_SRef is ggml_vec_dot_iq3_s_q8_K in the order of ggml's x86
// kernels (iq_dot.go): per block, eight int32 lane sums (iq3Lanes), each
// multiplied by d = fp16(d)·yd and added to its running sum
// (iqAccumulate), the eight sums reduced as hsum_float_8 (laneSum8).
// Products are exact (ggml's x86 code negates the activation instead,
// which wraps for a quant of -128; quantizeQ8_K never makes one).
func dotIQ3_SRef(n int, w, act []byte) float32 {
	var acc [8]float32
	for b := 0; b < n/qkK; b++ {
		x := w[b*iq3_SBytes : (b+1)*iq3_SBytes]
		yd, q8, _ := q8KBlock(act[b*q8_KBytes : (b+1)*q8_KBytes])
		var lanes [8]int32
		for ib := range qkK / 32 {
			s := iq3SScale(x, ib)
			for l := range 4 {
				g1, g2 := &iq3sGrid[iq3SIndex(x, ib, 2*l)], &iq3sGrid[iq3SIndex(x, ib, 2*l+1)]
				signs := x[74+4*ib+l]
				y := q8[32*ib+8*l : 32*ib+8*l+8]
				var s1, s2 int32
				for j := range 4 {
					s1 += applySign(int32(g1[j])*int32(int8(y[j])), signs, j)
					s2 += applySign(int32(g2[j])*int32(int8(y[j+4])), signs, j+4)
				}
				lanes[2*l] += s * s1
				lanes[2*l+1] += s * s2
			}
		}
		iqAccumulate(&acc, fp16At(x)*yd, &lanes)
	}
	return laneSum8(&acc)
}

package quant

// IQ2_S: super-blocks of 256 weights, 82 bytes, 2.5625 bits per weight.
// Groups of 8 weights are points of the 1024-entry codebook iq2sGrid with
// 8 explicit sign bits; 16 4-bit scales, one per 16 weights.
//
//	offset size
//	0      2    d           fp16 super-block scale
//	2      32   qs[32]      low 8 bits of the grid index of group g (= 4*ib+l)
//	34     32   signs[32]   sign bits of group g (bit j set: weight j negative)
//	66     8    qh[8]       bits 2l..2l+1 of qh[ib] are bits 8..9 of group 4*ib+l's index
//	74     8    scales[8]   sub-block ib: low nibble s scales groups 0,1, high nibble 2,3
//
// x = d*(0.5+s)*0.25 * grid * sign. Activation format: Q8_K.
const iq2_SBytes = 2 + qkK/4 + qkK/32 + qkK/32

var _ [0]struct{} = [iq2_SBytes - 82]struct{}{} // size check

// iq2SIndex returns the 10-bit grid index of group l of sub-block ib.
func iq2SIndex(blk []byte, ib, l int) int {
	return int(blk[2+4*ib+l]) | int(blk[66+ib]>>(2*l)&3)<<8
}

func dequantizeIQ2_S(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qkK; b++ {
		blk := src[b*iq2_SBytes : (b+1)*iq2_SBytes]
		d := fp16At(blk)
		scales := blk[74:82]
		y := dst[b*qkK : (b+1)*qkK]
		for ib := range qkK / 32 {
			db := [2]float32{
				d * (0.5 + float32(scales[ib]&0xf)) * 0.25,
				d * (0.5 + float32(scales[ib]>>4)) * 0.25,
			}
			for l := range 4 {
				gridDeq(y[32*ib+8*l:], db[l/2], iq2sGrid[iq2SIndex(blk, ib, l)][:], blk[34+4*ib+l])
			}
		}
	}
}

// dotIQ2_SRef is ggml_vec_dot_iq2_s_q8_K of ggml's AVX2 build, in the
// order of dotIQ2_XSRef.
func dotIQ2_SRef(n int, w, act []byte) float32 {
	var acc [8]float32
	for b := 0; b < n/qkK; b++ {
		x := w[b*iq2_SBytes : (b+1)*iq2_SBytes]
		scales := x[74:82]
		yd, q8, _ := q8KBlock(act[b*q8_KBytes : (b+1)*q8_KBytes])
		var lanes [8]int32
		for ib := range qkK / 32 {
			sc := [2]int32{int32(2*(scales[ib]&0xf) + 1), int32(2*(scales[ib]>>4) + 1)}
			for l := range 4 {
				grid := &iq2sGrid[iq2SIndex(x, ib, l)]
				signs := x[34+4*ib+l]
				y := q8[32*ib+8*l : 32*ib+8*l+8]
				var s1, s2 int32
				for j := range 4 {
					s1 += applySign(int32(grid[j])*int32(int8(y[j])), signs, j)
					s2 += applySign(int32(grid[j+4])*int32(int8(y[j+4])), signs, j+4)
				}
				lanes[2*l] += sc[l/2] * s1
				lanes[2*l+1] += sc[l/2] * s2
			}
		}
		iqAccumulate(&acc, fp16At(x)*yd, &lanes)
	}
	return 0.125 * laneSum8(&acc)
}

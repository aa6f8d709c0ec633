package quant

import "encoding/binary"

// IQ2_XS: super-blocks of 256 weights, 74 bytes, 2.3125 bits per weight.
// Groups of 8 weights are points of the 512-entry codebook iq2xsGrid with
// signs from ksignsIQ2XS; 16 4-bit scales, one per 16 weights.
//
//	offset size
//	0      2    d           fp16 super-block scale
//	2      64   qs[32]      uint16 per group of 8 weights (group 4*ib+l of
//	                        sub-block ib): bits 0..8 grid index, bits 9..15 sign index
//	66     8    scales[8]   sub-block ib: low nibble s scales groups 0,1,
//	                        high nibble groups 2,3
//
// x = d*(0.5+s)*0.25 * grid * sign. Activation format: Q8_K.
const iq2_XSBytes = 2 + qkK/4 + qkK/32

var _ [0]struct{} = [iq2_XSBytes - 74]struct{}{} // size check

func dequantizeIQ2_XS(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qkK; b++ {
		blk := src[b*iq2_XSBytes : (b+1)*iq2_XSBytes]
		d := fp16At(blk)
		scales := blk[66:74]
		y := dst[b*qkK : (b+1)*qkK]
		for ib := range qkK / 32 {
			db := [2]float32{
				d * (0.5 + float32(scales[ib]&0xf)) * 0.25,
				d * (0.5 + float32(scales[ib]>>4)) * 0.25,
			}
			for l := range 4 {
				q := binary.LittleEndian.Uint16(blk[2+8*ib+2*l:])
				gridDeq(y[32*ib+8*l:], db[l/2], iq2xsGrid[q&511][:], ksignsIQ2XS[q>>9])
			}
		}
	}
}

// dotIQ2_XSRef is ggml_vec_dot_iq2_xs_q8_K of ggml's AVX2 build, the
// order llama.cpp runs on x86: the eight lane sums of a block (iq3Lanes,
// each 16 weights with their own scale; a grid point's 8 weights are
// lanes 2l and 2l+1), multiplied by d = fp16(d)·yd and added to eight
// running sums (iqAccumulate), reduced as hsum_float_8
// (laneSum8) and scaled by 0.125. Products are exact (see dotIQ3_SRef).
func dotIQ2_XSRef(n int, w, act []byte) float32 {
	var acc [8]float32
	for b := 0; b < n/qkK; b++ {
		x := w[b*iq2_XSBytes : (b+1)*iq2_XSBytes]
		scales := x[66:74]
		yd, q8, _ := q8KBlock(act[b*q8_KBytes : (b+1)*q8_KBytes])
		var lanes [8]int32
		for ib := range qkK / 32 {
			sc := [2]int32{int32(2*(scales[ib]&0xf) + 1), int32(2*(scales[ib]>>4) + 1)}
			for l := range 4 {
				q := binary.LittleEndian.Uint16(x[2+8*ib+2*l:])
				grid := &iq2xsGrid[q&511]
				signs := ksignsIQ2XS[q>>9]
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

package quant

import "encoding/binary"

// IQ3_XXS: super-blocks of 256 weights, 98 bytes, 3.0625 bits per weight.
// Groups of 4 weights are points of the 256-entry codebook iq3xxsGrid; each
// pair of groups (8 weights) takes 8 signs from a 7-bit index into
// ksignsIQ2XS.
//
//	offset size
//	0      2    d        fp16 super-block scale
//	2      64   qs[64]   grid index of each group of 4: sub-block ib uses qs[8ib..8ib+7]
//	66     32   aux[8]   uint32 per sub-block ib: bits 7l..7l+6 are the sign index of
//	                     weights 8l..8l+7, bits 28..31 the 4-bit scale s
//
// x = d*(0.5+s)*0.5 * grid * sign. Activation format: Q8_K.
const iq3_XXSBytes = 2 + 3*qkK/8

var _ [0]struct{} = [iq3_XXSBytes - 98]struct{}{} // size check

func dequantizeIQ3_XXS(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qkK; b++ {
		blk := src[b*iq3_XXSBytes : (b+1)*iq3_XXSBytes]
		d := fp16At(blk)
		y := dst[b*qkK : (b+1)*qkK]
		for ib := range qkK / 32 {
			qs := blk[2+8*ib : 2+8*ib+8]
			aux := binary.LittleEndian.Uint32(blk[66+4*ib:])
			db := d * (0.5 + float32(aux>>28)) * 0.5
			for l := range 4 {
				signs := ksignsIQ2XS[aux>>(7*l)&127]
				gridDeq(y[32*ib+8*l:], db, iq3xxsGrid[qs[2*l]][:], signs)
				gridDeq(y[32*ib+8*l+4:], db, iq3xxsGrid[qs[2*l+1]][:], signs>>4)
			}
		}
	}
}

// iq3Lanes: ggml's AVX2 kernels of IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS and
// IQ3_S multiply a 32-weight sub-block with the activation in one 32-byte
// VPMADDUBSW, VPMADDWD the pair sums by the scale (of the sub-block, or of
// its 16-weight half), and add the sub-blocks' eight int32 lanes: lane L
// of a block is Σ_ib scale · Σ_{j<4} w[32ib+4L+j]·y[32ib+4L+j], exactly
// (|lane| < 2^24, so its conversion to float32 is exact too).

// dotIQ3_XXSRef is ggml_vec_dot_iq3_xxs_q8_K in the order of ggml's x86
// kernels (iq_dot.go): the eight lane sums of a block (iq3Lanes)
// multiplied by d = fp16(d)·yd and added to eight running sums
// (iqAccumulate), reduced as hsum_float_8 (laneSum8) and scaled by 0.25.
// Products are exact (see dotIQ3_SRef).
func dotIQ3_XXSRef(n int, w, act []byte) float32 {
	var acc [8]float32
	for b := 0; b < n/qkK; b++ {
		x := w[b*iq3_XXSBytes : (b+1)*iq3_XXSBytes]
		yd, q8, _ := q8KBlock(act[b*q8_KBytes : (b+1)*q8_KBytes])
		var lanes [8]int32
		for ib := range qkK / 32 {
			qs := x[2+8*ib : 2+8*ib+8]
			aux := binary.LittleEndian.Uint32(x[66+4*ib:])
			s := int32(2*(aux>>28) + 1)
			for l := range 4 {
				g1, g2 := &iq3xxsGrid[qs[2*l]], &iq3xxsGrid[qs[2*l+1]]
				signs := ksignsIQ2XS[aux>>(7*l)&127]
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
	return 0.25 * laneSum8(&acc)
}

package quant

import "encoding/binary"

// IQ2_XXS: super-blocks of 256 weights, 66 bytes, 2.0625 bits per weight.
// Each group of 8 weights is a point of the 256-entry E8-lattice codebook
// iq2xxsGrid (magnitudes 8, 25, 43) with 8 signs from a 7-bit index into
// ksignsIQ2XS (an even number of them negative).
//
//	offset size
//	0      2    d        fp16 super-block scale
//	2      64   qs[64]   8 bytes per 32-weight sub-block ib: bytes 0..3 are the
//	                     grid indices of groups 0..3; bytes 4..7 are a uint32 whose
//	                     bits 7l..7l+6 are the sign index of group l and bits
//	                     28..31 the 4-bit sub-block scale s
//
// x = d*(0.5+s)*0.25 * grid * sign (in ggml's float order). Activation format: Q8_K.
const iq2_XXSBytes = 2 + qkK/4

var _ [0]struct{} = [iq2_XXSBytes - 66]struct{}{} // size check

// applySign returns v negated if bit j of signs is set.
func applySign(v int32, signs uint8, j int) int32 {
	m := -int32(signs >> j & 1)
	return (v ^ m) - m
}

// gridDeq writes the 8 or 4 dequantised weights dl*grid[j] of one codebook
// point into y, negating those whose bit j in signs is set (exactly as
// ggml's dl*grid[j]*(±1.f)).
func gridDeq(y []float32, dl float32, grid []uint8, signs uint8) {
	for j, g := range grid {
		v := dl * float32(g)
		if signs>>j&1 != 0 {
			v = -v
		}
		y[j] = v
	}
}

func dequantizeIQ2_XXS(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qkK; b++ {
		blk := src[b*iq2_XXSBytes : (b+1)*iq2_XXSBytes]
		d := fp16At(blk)
		y := dst[b*qkK : (b+1)*qkK]
		for ib := range qkK / 32 {
			q := blk[2+8*ib : 2+8*ib+8]
			aux := binary.LittleEndian.Uint32(q[4:])
			db := d * (0.5 + float32(aux>>28)) * 0.25
			for l := range 4 {
				gridDeq(y[32*ib+8*l:], db, iq2xxsGrid[q[l]][:], ksignsIQ2XS[aux>>(7*l)&127])
			}
		}
	}
}

// dotIQ2_XXSRef is ggml_vec_dot_iq2_xxs_q8_K of ggml's AVX2 build, the
// order llama.cpp runs on x86: the eight lane sums of a block (iq3Lanes;
// a grid point's 8 weights are lanes 2l and 2l+1) multiplied by d =
// fp16(d)·yd and added to eight running sums (iqAccumulate), reduced as hsum_float_8 (laneSum8) and scaled by 0.125. Products
// are exact (see dotIQ3_SRef).
func dotIQ2_XXSRef(n int, w, act []byte) float32 {
	var acc [8]float32
	for b := 0; b < n/qkK; b++ {
		x := w[b*iq2_XXSBytes : (b+1)*iq2_XXSBytes]
		yd, q8, _ := q8KBlock(act[b*q8_KBytes : (b+1)*q8_KBytes])
		var lanes [8]int32
		for ib := range qkK / 32 {
			q := x[2+8*ib : 2+8*ib+8]
			aux := binary.LittleEndian.Uint32(q[4:])
			s := int32(2*(aux>>28) + 1)
			for l := range 4 {
				grid := &iq2xxsGrid[q[l]]
				signs := ksignsIQ2XS[aux>>(7*l)&127]
				y := q8[32*ib+8*l : 32*ib+8*l+8]
				var s1, s2 int32
				for j := range 4 {
					s1 += applySign(int32(grid[j])*int32(int8(y[j])), signs, j)
					s2 += applySign(int32(grid[j+4])*int32(int8(y[j+4])), signs, j+4)
				}
				lanes[2*l] += s * s1
				lanes[2*l+1] += s * s2
			}
		}
		iqAccumulate(&acc, fp16At(x)*yd, &lanes)
	}
	return 0.125 * laneSum8(&acc)
}

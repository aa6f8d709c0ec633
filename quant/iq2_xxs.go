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

// dotIQ2_XXS is ggml_vec_dot_iq2_xxs_q8_K: integer sums per sub-block,
// weighted by 2s+1, one float term per super-block, times 1/8 at the end.
func dotIQ2_XXS(n int, w, act []byte) float32 {
	var sum float32
	for b := 0; b < n/qkK; b++ {
		x := w[b*iq2_XXSBytes : (b+1)*iq2_XXSBytes]
		yd, q8, _ := q8KBlock(act[b*q8_KBytes : (b+1)*q8_KBytes])
		var bsum int32
		for ib := range qkK / 32 {
			q := x[2+8*ib : 2+8*ib+8]
			aux := binary.LittleEndian.Uint32(q[4:])
			var sumi int32
			for l := range 4 {
				grid := &iq2xxsGrid[q[l]]
				signs := ksignsIQ2XS[aux>>(7*l)&127]
				y := q8[32*ib+8*l : 32*ib+8*l+8]
				for j := range 8 {
					sumi += applySign(int32(grid[j])*int32(int8(y[j])), signs, j)
				}
			}
			bsum += sumi * int32(2*(aux>>28)+1)
		}
		sum += fp16At(x) * yd * float32(bsum)
	}
	return 0.125 * sum
}

package quant

import (
	"encoding/binary"
	"math"
)

// Q8_K: super-blocks of 256 values, 292 bytes, 9.125 bits per value.
// Activation format of the K-quants and most IQ formats (ggml has no
// dequantiser for it).
//
//	offset size
//	0      4    d           float32 scale; x[i] = d * qs[i]
//	4      256  qs[256]     int8 quants
//	260    32   bsums[16]   int16: sum of each run of 16 qs
const q8_KBytes = 4 + qkK + qkK/16*2

var _ [0]struct{} = [q8_KBytes - 292]struct{}{} // size check

// quantizeQ8_KRef is ggml's quantize_row_q8_K_ref: iscale = -127/max where max
// is the value of largest magnitude, q = min(127, nearestInt(iscale*x)),
// d = 1/iscale.
func quantizeQ8_KRef(dst []byte, src []float32) {
	for b := 0; b < len(src)/qkK; b++ {
		x := src[b*qkK : (b+1)*qkK]
		blk := dst[b*q8_KBytes : (b+1)*q8_KBytes]
		var amax, vmax float32
		for _, v := range x {
			if ax := absf(v); ax > amax {
				amax, vmax = ax, v
			}
		}
		if amax == 0 {
			clear(blk)
			continue
		}
		iscale := -127 / vmax
		qs := blk[4 : 4+qkK]
		for j, v := range x {
			qs[j] = byte(int8(min(127, nearestInt(iscale*v))))
		}
		for j := range qkK / 16 {
			var s int32
			for _, q := range qs[16*j : 16*j+16] {
				s += int32(int8(q))
			}
			binary.LittleEndian.PutUint16(blk[4+qkK+2*j:], uint16(int16(s)))
		}
		binary.LittleEndian.PutUint32(blk, math.Float32bits(1/iscale))
	}
}

// nearestInt rounds to the nearest integer, ties to even, with ggml's
// trick of adding 1.5*2^23 and reading the low mantissa bits. Valid for
// |x| <= 4194303.
func nearestInt(x float32) int32 {
	v := float32(x) + 12582912
	return int32(math.Float32bits(v)&0x007fffff) - 0x00400000
}

// q8KBlock splits a Q8_K block into its scale, quants and bsums bytes.
func q8KBlock(blk []byte) (d float32, qs []byte, bsums []byte) {
	return math.Float32frombits(binary.LittleEndian.Uint32(blk)), blk[4 : 4+qkK], blk[4+qkK : 4+qkK+qkK/8]
}

// bsum returns the j-th int16 block sum of a Q8_K block.
func bsum(bsums []byte, j int) int32 {
	return int32(int16(binary.LittleEndian.Uint16(bsums[2*j:])))
}

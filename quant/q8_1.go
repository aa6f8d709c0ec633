package quant

import "encoding/binary"

// Q8_1: blocks of 32 values, 36 bytes, 9 bits per value. Activation format
// of Q4_1 and Q5_1 (ggml has no dequantiser for it).
//
//	offset size
//	0      2    d       fp16 scale
//	2      2    s       fp16, d * sum(qs) rounded to fp16
//	4      32   qs[32]  int8 quants; x[i] = d * qs[i]
const q8_1Bytes = 4 + qk

var _ [0]struct{} = [q8_1Bytes - 36]struct{}{} // size check

// quantizeQ8_1 is ggml's quantize_row_q8_1_ref.
func quantizeQ8_1(dst []byte, src []float32) {
	for b := 0; b < len(src)/qk; b++ {
		x := src[b*qk : (b+1)*qk]
		blk := dst[b*q8_1Bytes : (b+1)*q8_1Bytes]
		var amax float32
		for _, v := range x {
			amax = max(amax, absf(v))
		}
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		var sum int32
		for j, v := range x {
			q := int8(roundf(v * id))
			blk[4+j] = byte(q)
			sum += int32(q)
		}
		putFP16(blk, d)
		binary.LittleEndian.PutUint16(blk[2:], FP32ToFP16(float32(sum)*d))
	}
}

package quant

// Q6_K: super-blocks of 256 weights, 210 bytes, 6.5625 bits per weight.
// 16 sub-blocks of 16 weights, each with an int8 scale.
//
//	offset size
//	0      128  ql[128]     low 4 bits
//	128    64   qh[64]      high 2 bits
//	192    16   scales[16]  int8 sub-block scales
//	208    2    d           fp16 super-block scale
//
// In each half h (128 weights), weight 128*h + 32*k + l (k < 4, l < 32) has
// low bits from ql[64*h + l + 32*(k&1)] (low nibble for k < 2, high for
// k >= 2) and high bits 2k..2k+1 of qh[32*h + l]; its sub-block is
// 8*h + 2*k + l/16. x = d*scale*(q - 32).
const q6_KBytes = qkK/2 + qkK/4 + qkK/16 + 2

var _ [0]struct{} = [q6_KBytes - 210]struct{}{} // size check

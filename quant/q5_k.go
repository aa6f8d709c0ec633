package quant

// Q5_K: super-blocks of 256 weights, 176 bytes, 5.5 bits per weight.
// 8 sub-blocks of 32 weights, each with a 6-bit scale and a 6-bit min.
//
//	offset size
//	0      2    d           fp16 super-block scale of the scales
//	2      2    dmin        fp16 super-block scale of the mins
//	4      12   scales[12]  packed as in Q4_K
//	16     32   qh[32]      5th bit: weight 32*k + l is bit k of qh[l]
//	48     128  qs[128]     low 4 bits, arranged as in Q4_K
//
// x = d*scale*q - dmin*min.
const q5_KBytes = 2 + 2 + 12 + qkK/8 + qkK/2

var _ [0]struct{} = [q5_KBytes - 176]struct{}{} // size check

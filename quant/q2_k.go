package quant

// Q2_K: super-blocks of 256 weights, 84 bytes, 2.625 bits per weight.
// 16 sub-blocks of 16 weights, each with a 4-bit scale and a 4-bit min.
//
//	offset size
//	0      16   scales[16]  low nibble: scale of sub-block j, high nibble: its min
//	16     64   qs[64]      2-bit quants, see below
//	80     2    d           fp16 super-block scale of the scales
//	82     2    dmin        fp16 super-block scale of the mins
//
// Weight 128*h + 32*s + l (h < 2, s < 4, l < 32) is bits 2s..2s+1 of
// qs[32*h + l]; it belongs to sub-block 8*h + 2*s + l/16.
// x = d*scale*q - dmin*min.
const q2_KBytes = qkK/16 + qkK/4 + 2 + 2

var _ [0]struct{} = [q2_KBytes - 84]struct{}{} // size check

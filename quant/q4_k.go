package quant

// Q4_K: super-blocks of 256 weights, 144 bytes, 4.5 bits per weight.
// 8 sub-blocks of 32 weights, each with a 6-bit scale and a 6-bit min.
//
//	offset size
//	0      2    d           fp16 super-block scale of the scales
//	2      2    dmin        fp16 super-block scale of the mins
//	4      12   scales[12]  8 6-bit scales and 8 6-bit mins, packed, see scaleMinK4
//	16     128  qs[128]     nibbles: weight 64*g + l is the low nibble of
//	                        qs[32*g + l] (l < 32), weight 64*g + 32 + l its high nibble
//
// x = d*scale*q - dmin*min.
const q4_KBytes = 2 + 2 + 12 + qkK/2

var _ [0]struct{} = [q4_KBytes - 144]struct{}{} // size check

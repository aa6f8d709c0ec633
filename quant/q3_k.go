package quant

// Q3_K: super-blocks of 256 weights, 110 bytes, 3.4375 bits per weight.
// 16 sub-blocks of 16 weights, each with a 6-bit signed scale.
//
//	offset size
//	0      32   hmask[32]   high bit of each quant: weight 32*k + l is bit k of hmask[l]
//	32     64   qs[64]      low 2 bits, arranged as in Q2_K
//	96     12   scales[12]  16 6-bit scales (biased by 32), packed, see q3KScales
//	108    2    d           fp16 super-block scale
//
// x = d*(scale-32)*(q - 4*(1-hbit)), q the 2 low bits.
const q3_KBytes = qkK/8 + qkK/4 + 12 + 2

var _ [0]struct{} = [q3_KBytes - 110]struct{}{} // size check

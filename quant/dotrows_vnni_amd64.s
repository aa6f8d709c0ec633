//go:build goexperiment.simd

#include "go_asm.h"
#include "textflag.h"

// The AVX-512 (512-bit) VNNI block terms of the Q4_0 and Q8_0 DotRows
// kernels (dotRowsQ4_0VNNI, dotRowsQ8_0VNNI in dotrows_vnni_amd64.go, which
// add them up row by row; the references are dotQ4_0Ref / dotQ8_0Ref).
//
// One iteration computes the terms of sixteen consecutive blocks of a row,
// in four groups of four blocks. A group's quants are gathered from two
// 64-byte loads by VPERMT2B (AVX512-VBMI) into one vector whose 128-bit
// lane k holds 16 quants of block 4g+k (Q4_0: its 16 nibble bytes, whose
// low and high nibbles VPSRLW/VPANDD split; Q8_0: quants 0..15 and, in a
// second vector, 16..31, made unsigned by flipping the sign bit). VPDPBUSD
// with the activation, laid out the same way (vnniGroup),
// adds the products to four dwords per block, on top of the prepared
// -8·Σy (Q4_0) or -128·Σy (Q8_0) of the offset: exact int32 (no
// saturation), so the order does not matter. The four groups' dwords are
// transposed and added (VPUNPCK*, VPADDD) into one dword per block and put
// in block order (VPERMD); converted to float32 and multiplied by dx·dy
// (the sixteen fp16 dx gathered by VPERMI2W, widened by VCVTPH2PS: exact,
// NaNs made quiet, as FP16ToFP32) they are the reference's terms,
// float32(sumi)·float32(dx·dy), stored to p.
//
// register use: SI the row's blocks, DI the activation groups, DX p, CX
// groups left; Z0..Z3 the groups' dwords, Z4..Z11 scratch, Z12, Z13 the
// scales, Z16..Z23 the loads, Z27..Z30 the permutations (the constants),
// Z31 0x0f (Q4_0) or 0x80 (Q8_0) bytes.

// LOADCONSTS loads the constants at k and bytes (a dword) into Z31.
#define LOADCONSTS(bytes) \
	MOVQ x+0(FP), SI; \
	MOVQ yp+8(FP), DI; \
	MOVQ p+16(FP), DX; \
	MOVQ ng+24(FP), CX; \
	MOVQ k+32(FP), AX; \
	VMOVDQU64 0(AX), Z27; \
	VMOVDQU64 64(AX), Z28; \
	VMOVDQU64 128(AX), Z29; \
	VMOVDQU64 192(AX), Z30; \
	MOVL $bytes, AX; \
	VPBROADCASTD AX, Z31

// TERMS turns the groups' dwords Z0..Z3 and the scales Z12 (dx·dy) into
// the sixteen blocks' terms and stores them to p.
#define TERMS \
	VPUNPCKLDQ Z1, Z0, Z8; \
	VPUNPCKHDQ Z1, Z0, Z9; \
	VPADDD Z9, Z8, Z8; \
	VPUNPCKLDQ Z3, Z2, Z9; \
	VPUNPCKHDQ Z3, Z2, Z10; \
	VPADDD Z10, Z9, Z9; \
	VPUNPCKLQDQ Z9, Z8, Z10; \
	VPUNPCKHQDQ Z9, Z8, Z11; \
	VPADDD Z11, Z10, Z10; \
	VPERMD Z10, Z30, Z10; \
	VCVTDQ2PS Z10, Z10; \
	VMULPS Z12, Z10, Z10; \
	VMOVUPS Z10, (DX)

// NIBBLES(q, acc, tmp, g) adds the products of the nibbles of group g (in
// q) and the group's activation quants to its offset sums, in acc.
#define NIBBLES(q, acc, tmp, g) \
	VMOVDQU64 (vnniGroup_init+g*64)(DI), acc; \
	VPSRLW $4, q, tmp; \
	VPANDD Z31, q, q; \
	VPANDD Z31, tmp, tmp; \
	VPDPBUSD (g*128)(DI), q, acc; \
	VPDPBUSD (g*128+64)(DI), tmp, acc

// AHEAD8 is how far ahead of the group being summed the Q8_0 kernel
// prefetches: four groups (4·544 bytes; at the end of a row the next row's
// first groups, which the driver sums next). Decode of a TinyLlama-shaped
// Q8_0 went from 11.4–11.7 to 13.2–14.0 tok/s with it (AMD EPYC Zen 5); the
// same in the Q4_0 kernel measured no gain.
#define AHEAD8 2176

// func q4_0TermsVNNI(x *byte, yp *vnniGroup, p *float32, ng int, k *vnniRowConsts)
TEXT ·q4_0TermsVNNI(SB), NOSPLIT, $0-40
	LOADCONSTS(0x0f0f0f0f)
	TESTQ CX, CX
	JZ q40done
q40loop:
	// group g's 72 bytes start at 72g: the tables at 72g and 72g+64 (the
	// last group: 72g+8, not to read past the sixteen blocks)
	VMOVDQU64 0(SI), Z16
	VMOVDQU64 64(SI), Z17
	VMOVDQU64 72(SI), Z18
	VMOVDQU64 136(SI), Z19
	VMOVDQU64 144(SI), Z20
	VMOVDQU64 208(SI), Z21
	VMOVDQU64 216(SI), Z22
	VMOVDQU64 224(SI), Z23
	// the scales: words 9j of bytes 0..127 (blocks 0..7) and 144..271 (8..15)
	VMOVDQA64 Z29, Z12
	VPERMI2W Z17, Z16, Z12
	VMOVDQA64 Z29, Z13
	VPERMI2W Z21, Z20, Z13
	VINSERTI32X4 $1, X13, Z12, Z12
	VCVTPH2PS Y12, Z12
	VMULPS vnniGroup_fy(DI), Z12, Z12
	VPERMT2B Z17, Z27, Z16
	VPERMT2B Z19, Z27, Z18
	VPERMT2B Z21, Z27, Z20
	VPERMT2B Z23, Z28, Z22
	NIBBLES(Z16, Z0, Z4, 0)
	NIBBLES(Z18, Z1, Z5, 1)
	NIBBLES(Z20, Z2, Z6, 2)
	NIBBLES(Z22, Z3, Z7, 3)
	TERMS
	ADDQ $(16*18), SI
	ADDQ $vnniGroup__size, DI
	ADDQ $64, DX
	DECQ CX
	JNZ q40loop
q40done:
	VZEROUPPER
	RET

// QUANTS8(g, acc) adds the products of the quants of group g (136 bytes
// from 136g: quants 0..15 from the tables at 136g and 136g+64, quants
// 16..31 from 136g+8 and 136g+72) and the group's activation quants to
// its offset sums, in acc. Its tables at 136g and 136g+64 are in Z16, Z17.
#define QUANTS8(g, acc) \
	VMOVDQU64 (g*136+8)(SI), Z18; \
	VPERMT2B Z17, Z27, Z16; \
	VPERMT2B (g*136+72)(SI), Z28, Z18; \
	VPXORD Z31, Z16, Z16; \
	VPXORD Z31, Z18, Z18; \
	VMOVDQU64 (vnniGroup_init+g*64)(DI), acc; \
	VPDPBUSD (g*128)(DI), Z16, acc; \
	VPDPBUSD (g*128+64)(DI), Z18, acc

// SCALES8(g, dst) puts the scales of group g (words 17j of the tables at
// 136g and 136g+64, Z16 and Z17) in words 0..3 of dst.
#define SCALES8(g, dst) \
	VMOVDQU64 (g*136)(SI), Z16; \
	VMOVDQU64 (g*136+64)(SI), Z17; \
	VMOVDQA64 Z29, dst; \
	VPERMI2W Z17, Z16, dst

// func q8_0TermsVNNI(x *byte, yp *vnniGroup, p *float32, ng int, k *vnniRowConsts)
TEXT ·q8_0TermsVNNI(SB), NOSPLIT, $0-40
	LOADCONSTS(0x80808080)
	TESTQ CX, CX
	JZ q80done
q80loop:
	PREFETCHT0 (AHEAD8+0)(SI)
	PREFETCHT0 (AHEAD8+64)(SI)
	PREFETCHT0 (AHEAD8+128)(SI)
	PREFETCHT0 (AHEAD8+192)(SI)
	PREFETCHT0 (AHEAD8+256)(SI)
	PREFETCHT0 (AHEAD8+320)(SI)
	PREFETCHT0 (AHEAD8+384)(SI)
	PREFETCHT0 (AHEAD8+448)(SI)
	PREFETCHT0 (AHEAD8+512)(SI)
	SCALES8(0, Z12)
	QUANTS8(0, Z0)
	SCALES8(1, Z13)
	QUANTS8(1, Z1)
	SCALES8(2, Z14)
	QUANTS8(2, Z2)
	SCALES8(3, Z15)
	QUANTS8(3, Z3)
	VPUNPCKLQDQ X13, X12, X12
	VPUNPCKLQDQ X15, X14, X14
	VINSERTI32X4 $1, X14, Z12, Z12
	VCVTPH2PS Y12, Z12
	VMULPS vnniGroup_fy(DI), Z12, Z12
	TERMS
	ADDQ $(16*34), SI
	ADDQ $vnniGroup__size, DI
	ADDQ $64, DX
	DECQ CX
	JNZ q80loop
q80done:
	VZEROUPPER
	RET

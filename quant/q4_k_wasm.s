//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"

// The integer part of the wasm SIMD128 Q4_K dot (dotQ4_KSIMD128 in q4_k_wasm.go),
// written by hand because simd/archsimd has no i32x4.dot_i16x8_s and
// because a tight wasm loop keeps its values in registers.
//
// The 16 bytes of quants in a vector are read as eight int16 lanes:
// lane i holds bytes 2i and 2i+1, so its four nibbles are the quants of
// weights 2i and 2i+1 of the low and of the high sub-block. Masks and
// shifts put each in an int16 lane, the int8 activations are split into
// even and odd bytes the same way (arithmetic shifts), and
// i32x4.dot_i16x8_s multiplies and adds them in pairs. Every product is at
// most 15·128 in magnitude, a sub-block's int32 lanes at most 8 of them
// (15360), times its 6-bit scale (i32x4.mul) at most 967680, and a
// block's lanes at most 8 of those: all exact in int32, so the lane sums
// equal the reference's integer sums.

// The assembler encodes the lane index of ExtractLane/ReplaceLane (and the
// offset of V128Store) from an instruction's second operand, so they are
// written with two: "I32x4ExtractLane $0, $lane".
//
// register use:
//	R0 weight block, R1 activation block, R2 blocks left, R3 output
//	R4..R6 the packed scale words, R7 s03, R8 s47, R9 m03, R10 m47
//	V0 the int16 nibble mask, V1 the block's accumulator,
//	V2, V3 the 32 bytes of a group's quants, V4 16 activations, V5 the mins

// LO16 pushes the int32 lanes of Σ lo·y over 16 weights: the low nibbles
// of vector rv against the activations at R1+yoff.
#define LO16(rv, yoff) \
	Get R1; I32WrapI64; V128Load $(yoff); Set V4; \
	Get rv; Get V0; V128And; \
	Get V4; I32Const $8; I16x8Shl; I32Const $8; I16x8ShrS; \
	I32x4DotI16x8S; \
	Get rv; I32Const $8; I16x8ShrU; Get V0; V128And; \
	Get V4; I32Const $8; I16x8ShrS; \
	I32x4DotI16x8S; \
	I32x4Add

// HI16 is LO16 for the high nibbles.
#define HI16(rv, yoff) \
	Get R1; I32WrapI64; V128Load $(yoff); Set V4; \
	Get rv; I32Const $4; I16x8ShrU; Get V0; V128And; \
	Get V4; I32Const $8; I16x8Shl; I32Const $8; I16x8ShrS; \
	I32x4DotI16x8S; \
	Get rv; I32Const $12; I16x8ShrU; \
	Get V4; I32Const $8; I16x8ShrS; \
	I32x4DotI16x8S; \
	I32x4Add

// SCALE multiplies the pushed lanes by the scale in byte sh/8 of sreg
// and adds them to V1.
#define SCALE(sreg, sh) \
	Get sreg; I64Const $(sh); I64ShrU; I64Const $0xff; I64And; I32WrapI64; I32x4Splat; \
	I32x4Mul; Get V1; I32x4Add; Set V1

// GROUP adds the 64 weights of quant bytes qoff..qoff+31 (sub-blocks with
// the scales in bytes sh1/8 and sh2/8 of sreg) against activation bytes
// yoff..yoff+63 to V1.
#define GROUP(qoff, yoff, sreg, sh1, sh2) \
	Get R0; I32WrapI64; V128Load $(qoff); Set V2; \
	Get R0; I32WrapI64; V128Load $(qoff+16); Set V3; \
	LO16(V2, yoff); LO16(V3, yoff+16); I32x4Add; SCALE(sreg, sh1); \
	HI16(V2, yoff+32); HI16(V3, yoff+48); I32x4Add; SCALE(sreg, sh2)

// func q4KIntSums(x, y *byte, nb int, out *[2 * q4KChunk]int32)
TEXT ·q4KIntSums(SB), NOSPLIT, $0-32
	I64Load x+0(FP)
	Set R0
	I64Load y+8(FP)
	Set R1
	I64Load nb+16(FP)
	Set R2
	I64Load out+24(FP)
	Set R3
	V128Const $0x000f000f000f000f, $0x000f000f000f000f
	Set V0

	Block
	Get R2
	I64Eqz
	BrIf $0
	Loop
		// the 6-bit scales and mins, four to a word (scalesMinsK4)
		SCALESMINS

		V128Const $0, $0
		Set V1
		GROUP(16, 4, R7, 0, 8)
		GROUP(48, 68, R7, 16, 24)
		GROUP(80, 132, R8, 0, 8)
		GROUP(112, 196, R8, 16, 24)

		// Σ min·bsum: the 16 block sums added in pairs, times the mins
		Get R9; I32WrapI64; I32x4Splat; Get R10; I32WrapI64; I32x4ReplaceLane $0, $1
		I16x8ExtendLowI8x16U; Set V5
		Get R1; I32WrapI64; V128Load $260; I32x4ExtaddPairwiseI16x8S
		Get V5; I32x4ExtendLowI16x8U; I32x4Mul
		Get R1; I32WrapI64; V128Load $276; I32x4ExtaddPairwiseI16x8S
		Get V5; I32x4ExtendHighI16x8U; I32x4Mul
		I32x4Add; Set V5

		Get R3; I32WrapI64; HSUM(V1); I32Store $0
		Get R3; I32WrapI64; HSUM(V5); I32Store $128

		ADD(R0, 144)
		ADD(R1, 292)
		ADD(R3, 4)
		COUNTDOWN(R2)
	End
	End
	RET

//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"

// The wasm SIMD128 Q5_K dots (dotQ5_KSIMD128 and dotRowsQ5_KSIMD128 in
// q5_k_wasm.go), written by hand as q4_k_wasm.s is; the float part runs
// in float64 lanes (simd_wasm.h's FMA2).
//
// A sub-block's 32 quants are two vectors of 16 bytes: the nibbles of
// qs with the fifth bit from qh moved in (bit b of qh[l] to bit 4 of
// byte l, by 16-bit shifts and a mask of bits 0 and 8). Their even and
// odd bytes become int16 lanes against the int8 activations' (arithmetic
// shifts), and i32x4.dot_i16x8_s adds them in pairs, so int32 lane m of
// the two dots' sum holds the weights 4m..4m+3 of the 16: the first
// vector of each sub-block is lanes 0..3 of ggml's x86 order, the second
// lanes 4..7, kept in separate accumulators (V1, V10). Every product is at
// most 31·128 in magnitude, a lane at most 4 of them times a 6-bit scale
// (999936), and a block's lane at most 8 of those: exact in int32.
//
// register use:
//	R0 weight block, R1 activation block, R2 blocks left, R3 output (q5KDot,
//	q5KDotPrep: the accumulators), R11 the blocks' d and dmin, R12 the
//	prepared activation block (q5KDotPrep),
//	R4..R6 the packed scale words, R7 s03, R8 s47, R9 m03, R10 m47
//	V0 the int16 mask 0x00ff, V6 the byte mask 0x0f, V7 the mask of bits 0 and 8,
//	V1, V10 the block's lanes 0..3 and 4..7, V2, V3 the 32 bytes of a group's
//	nibbles, V8, V9 the 32 bytes of qh, V4 16 activations (q5KDotPrep: a
//	scale), V5 16 quants, then the mins;
//	V11..V15 the float accumulators (simd_wasm.h's FMA2), V2..V4, V8, V9 its scratch and d

// DOT16 pushes the int32 lanes of Σ q·y over 16 weights: the byte quants
// in V5 against the activations at R1+yoff.
#define DOT16(yoff) \
	Get R1; I32WrapI64; V128Load $(yoff); Set V4; \
	Get V5; Get V0; V128And; \
	EVEN(V4); \
	I32x4DotI16x8S; \
	Get V5; I32Const $8; I16x8ShrU; \
	ODD(V4); \
	I32x4DotI16x8S; \
	I32x4Add

// HIGHBIT pushes bit b of each byte of hv, moved to bit 4.
#define HIGHBIT(hv, b) \
	Get hv; I32Const $(b); I16x8ShrU; Get V7; V128And; I32Const $4; I16x8Shl

// LOQ sets V5 to the quants of the low nibbles of qv, fifth bits at bit b of hv.
#define LOQ(qv, hv, b) \
	Get qv; Get V6; V128And; HIGHBIT(hv, b); V128Or; Set V5

// HIQ sets V5 to the quants of the high nibbles of qv, fifth bits at bit b of hv.
#define HIQ(qv, hv, b) \
	Get qv; I32Const $4; I16x8ShrU; Get V6; V128And; HIGHBIT(hv, b); V128Or; Set V5

// SCALEACC multiplies the pushed lanes by the scale in byte sh/8 of sreg
// and adds them to acc.
#define SCALEACC(sreg, sh, acc) \
	Get sreg; I64Const $(sh); I64ShrU; I64Const $0xff; I64And; I32WrapI64; I32x4Splat; \
	I32x4Mul; Get acc; I32x4Add; Set acc

// GROUP5 adds the 64 weights of quant bytes qoff..qoff+31 (fifth bits b
// and b+1 of qh; sub-blocks with the scales in bytes sh1/8 and sh2/8 of
// sreg) against activation bytes yoff..yoff+63 to V1 and V10.
#define GROUP5(qoff, yoff, b, sreg, sh1, sh2) \
	Get R0; I32WrapI64; V128Load $(qoff); Set V2; \
	Get R0; I32WrapI64; V128Load $(qoff+16); Set V3; \
	LOQ(V2, V8, b); DOT16(yoff); SCALEACC(sreg, sh1, V1); \
	LOQ(V3, V9, b); DOT16(yoff+16); SCALEACC(sreg, sh1, V10); \
	HIQ(V2, V8, b+1); DOT16(yoff+32); SCALEACC(sreg, sh2, V1); \
	HIQ(V3, V9, b+1); DOT16(yoff+48); SCALEACC(sreg, sh2, V10)

// func q5KDot(x, y *byte, nb int, ds *[2 * q5KChunk]float32, acc *[12]float32)
//
// The dot of nb blocks with the float part of the reference: block j's lanes times
// ds[2j] and its Σ min·bsum times ds[2j+1] are accumulated into acc[0:8]
// and acc[8] (FMA2), kept meanwhile in V11..V15 as float64 pairs.
TEXT ·q5KDot(SB), NOSPLIT, $0-40
	I64Load x+0(FP)
	Set R0
	I64Load y+8(FP)
	Set R1
	I64Load nb+16(FP)
	Set R2
	I64Load ds+24(FP)
	Set R11
	I64Load acc+32(FP)
	Set R3
	V128Const $0x00ff00ff00ff00ff, $0x00ff00ff00ff00ff
	Set V0
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f
	Set V6
	V128Const $0x0101010101010101, $0x0101010101010101
	Set V7
	LOADACC

	Block
	Get R2
	I64Eqz
	BrIf $0
	Loop
		SCALESMINS

		Get R0; I32WrapI64; V128Load $16; Set V8
		Get R0; I32WrapI64; V128Load $32; Set V9
		V128Const $0, $0
		Set V1
		V128Const $0, $0
		Set V10
		GROUP5(48, 4, 0, R7, 0, 8)
		GROUP5(80, 68, 2, R7, 16, 24)
		GROUP5(112, 132, 4, R8, 0, 8)
		GROUP5(144, 196, 6, R8, 16, 24)

		Get R9; I32WrapI64; I32x4Splat; Get R10; I32WrapI64; I32x4ReplaceLane $0, $1
		I16x8ExtendLowI8x16U; Set V5
		Get R1; I32WrapI64; V128Load $260; I32x4ExtaddPairwiseI16x8S
		Get V5; I32x4ExtendLowI16x8U; I32x4Mul
		Get R1; I32WrapI64; V128Load $276; I32x4ExtaddPairwiseI16x8S
		Get V5; I32x4ExtendHighI16x8U; I32x4Mul
		I32x4Add; Set V5

		// the float part: d in V9, the lanes, then dmin·Σ min·bsum
		Get R11; I32WrapI64; F32Load $0; F64PromoteF32; F64x2Splat; Set V9
		LANES8(V1, V10, V9)
		HSUM(V5); F64ConvertI32S; Get R11; I32WrapI64; F32Load $4; F64PromoteF32; F64Mul; F64x2Splat; Set V2
		FMA2(V2, V15, V3, V4, V8)

		ADD(R0, 176)
		ADD(R1, 292)
		ADD(R11, 8)
		COUNTDOWN(R2)
	End
	End
	STOREACC
	RET

// GROUP5P is GROUP5 against prepared activations (prepared offset p of the
// group's first weight): each sub-block's scale is splat once (V4).
#define GROUP5P(qoff, p, b, sreg, sh1, sh2) \
	Get R0; I32WrapI64; V128Load $(qoff); Set V2; \
	Get R0; I32WrapI64; V128Load $(qoff+16); Set V3; \
	Get sreg; I64Const $(sh1); I64ShrU; I64Const $0xff; I64And; I32WrapI64; I32x4Splat; Set V4; \
	LOQ(V2, V8, b); DOT16P(p); Get V4; I32x4Mul; Get V1; I32x4Add; Set V1; \
	LOQ(V3, V9, b); DOT16P(p+32); Get V4; I32x4Mul; Get V10; I32x4Add; Set V10; \
	Get sreg; I64Const $(sh2); I64ShrU; I64Const $0xff; I64And; I32WrapI64; I32x4Splat; Set V4; \
	HIQ(V2, V8, b+1); DOT16P(p+64); Get V4; I32x4Mul; Get V1; I32x4Add; Set V1; \
	HIQ(V3, V9, b+1); DOT16P(p+96); Get V4; I32x4Mul; Get V10; I32x4Add; Set V10

// func q5KDotPrep(x, y, yp *byte, nb int, ds *float32, acc *[12]float32)
//
// q5KDot against the activation y prepared at yp by splitQ8_K (y itself
// for its bsums), ds[2j], ds[2j+1] the d and dmin of block j, nb blocks.
TEXT ·q5KDotPrep(SB), NOSPLIT, $0-48
	I64Load x+0(FP)
	Set R0
	I64Load y+8(FP)
	Set R1
	I64Load yp+16(FP)
	Set R12
	I64Load nb+24(FP)
	Set R2
	I64Load ds+32(FP)
	Set R11
	I64Load acc+40(FP)
	Set R3
	V128Const $0x00ff00ff00ff00ff, $0x00ff00ff00ff00ff
	Set V0
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f
	Set V6
	V128Const $0x0101010101010101, $0x0101010101010101
	Set V7
	LOADACC

	Block
	Get R2
	I64Eqz
	BrIf $0
	Loop
		SCALESMINS

		Get R0; I32WrapI64; V128Load $16; Set V8
		Get R0; I32WrapI64; V128Load $32; Set V9
		V128Const $0, $0
		Set V1
		V128Const $0, $0
		Set V10
		GROUP5P(48, 0, 0, R7, 0, 8)
		GROUP5P(80, 128, 2, R7, 16, 24)
		GROUP5P(112, 256, 4, R8, 0, 8)
		GROUP5P(144, 384, 6, R8, 16, 24)

		Get R9; I32WrapI64; I32x4Splat; Get R10; I32WrapI64; I32x4ReplaceLane $0, $1
		I16x8ExtendLowI8x16U; Set V5
		Get R1; I32WrapI64; V128Load $260; I32x4ExtaddPairwiseI16x8S
		Get V5; I32x4ExtendLowI16x8U; I32x4Mul
		Get R1; I32WrapI64; V128Load $276; I32x4ExtaddPairwiseI16x8S
		Get V5; I32x4ExtendHighI16x8U; I32x4Mul
		I32x4Add; Set V5

		Get R11; I32WrapI64; F32Load $0; F64PromoteF32; F64x2Splat; Set V9
		LANES8(V1, V10, V9)
		HSUM(V5); F64ConvertI32S; Get R11; I32WrapI64; F32Load $4; F64PromoteF32; F64Mul; F64x2Splat; Set V2
		FMA2(V2, V15, V3, V4, V8)

		ADD(R0, 176)
		ADD(R1, 292)
		ADD(R12, 544)
		ADD(R11, 8)
		COUNTDOWN(R2)
	End
	End
	STOREACC
	RET

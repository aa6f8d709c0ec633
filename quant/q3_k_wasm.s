//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"

// The wasm SIMD128 Q3_K and Q2_K dots (q3_k_wasm.go), written by hand as
// q4_k_wasm.s is; the float part runs in float64 lanes (simd_wasm.h's
// FMA2).
//
// Each 32 weights of a block are two vectors of 16 byte quants: a 2-bit
// field of qs (16-bit shifts and a byte mask) and, for Q3_K, its high bit
// from hmask (4 where it is set) less 4. Their even and odd bytes become
// int16 lanes against the int8 activations', and i32x4.dot_i16x8_s adds
// them in pairs, so int32 lane m of the two dots' sum holds the weights
// 4m..4m+3 of the 16: the first vector of each 32 is lanes 0..3 of
// ggml's x86 order, the second lanes 4..7, kept in separate accumulators
// (V1, V10), each times its 16 weights' scale. Q3_K's lanes are at most
// 8·4·4·128·32 in magnitude, Q2_K's 8·4·3·128·15: exact in int32.
//
// register use:
//	R0 weight block, R1 activation block, R2 blocks left, R3 output
//	(q3KDot, q2KDot: the accumulators), R11 the blocks' d and dmin,
//	R4, R5 scratch, R7 scales 0..7, R8 scales 8..15 (a byte each)
//	Q3_K: V0 the bytes 4, V6 the byte mask 3, V7 the byte mask 1;
//	Q2_K: V0 the int16 mask 0x00ff, V6 the byte mask 3, V7, V9 the min lanes;
//	V1, V10 the block's lanes 0..3 and 4..7, V2, V3 the 32 bytes of qs of
//	a half, V8, V9 hmask, V4 16 activations, V5 16 quants;
//	V11..V14 the float accumulators (simd_wasm.h's FMA2), V2..V4, V8 its scratch

// DOT16S pushes the int32 lanes of Σ q·y over 16 weights: the int8
// quants in V5 against the activations at R1+yoff.
#define DOT16S(yoff) \
	Get R1; I32WrapI64; V128Load $(yoff); Set V4; \
	EVEN(V5); EVEN(V4); I32x4DotI16x8S; \
	ODD(V5); ODD(V4); I32x4DotI16x8S; \
	I32x4Add

// DOT16U is DOT16S for quants 0..255.
#define DOT16U(yoff) \
	Get R1; I32WrapI64; V128Load $(yoff); Set V4; \
	Get V5; Get V0; V128And; EVEN(V4); I32x4DotI16x8S; \
	Get V5; I32Const $8; I16x8ShrU; ODD(V4); I32x4DotI16x8S; \
	I32x4Add

// SCALE3 multiplies the pushed lanes by the Q3_K scale in byte sh/8 of
// sreg, less 32, and adds them to acc.
#define SCALE3(sreg, sh, acc) \
	Get sreg; I64Const $(sh); I64ShrU; I64Const $0xff; I64And; I32WrapI64; I32Const $32; I32Sub; I32x4Splat; \
	I32x4Mul; Get acc; I32x4Add; Set acc

// SCALE2 multiplies the pushed lanes by the Q2_K scale in the low nibble
// of byte sh/8 of sreg and adds them to acc.
#define SCALE2(sreg, sh, acc) \
	Get sreg; I64Const $(sh); I64ShrU; I64Const $0x0f; I64And; I32WrapI64; I32x4Splat; \
	I32x4Mul; Get acc; I32x4Add; Set acc

// Q3Q sets V5 to the quants -4..3 of the 2-bit field at bit s2 of the
// bytes of qv with the high bits at bit t of hv.
#define Q3Q(qv, hv, s2, t) \
	Get qv; I32Const $(s2); I16x8ShrU; Get V6; V128And; \
	Get hv; I32Const $(t); I16x8ShrU; Get V7; V128And; I32Const $2; I16x8Shl; \
	V128Or; Get V0; I8x16Sub; Set V5

// SECTION3 adds the 32 weights of field s2 of V2, V3 (high bits t of V8,
// V9) against the activations at R1+yoff to V1 and V10, the scales in
// bytes sh1/8 and sh2/8 of sreg.
#define SECTION3(s2, t, yoff, sreg, sh1, sh2) \
	Q3Q(V2, V8, s2, t); DOT16S(yoff); SCALE3(sreg, sh1, V1); \
	Q3Q(V3, V9, s2, t); DOT16S(yoff+16); SCALE3(sreg, sh2, V10)

// SECTION3P is SECTION3 against prepared activations at R12+p.
#define SECTION3P(s2, t, p, sreg, sh1, sh2) \
	Q3Q(V2, V8, s2, t); DOT16SP(p); SCALE3(sreg, sh1, V1); \
	Q3Q(V3, V9, s2, t); DOT16SP(p+32); SCALE3(sreg, sh2, V10)

// SECTION2 is SECTION3 for Q2_K's unsigned fields.
#define SECTION2(s2, yoff, sreg, sh1, sh2) \
	Get V2; I32Const $(s2); I16x8ShrU; Get V6; V128And; Set V5; DOT16U(yoff); SCALE2(sreg, sh1, V1); \
	Get V3; I32Const $(s2); I16x8ShrU; Get V6; V128And; Set V5; DOT16U(yoff+16); SCALE2(sreg, sh2, V10)

// SECTION2P is SECTION2 against prepared activations at R12+p.
#define SECTION2P(s2, p, sreg, sh1, sh2) \
	Get V2; I32Const $(s2); I16x8ShrU; Get V6; V128And; Set V5; DOT16P(p); SCALE2(sreg, sh1, V1); \
	Get V3; I32Const $(s2); I16x8ShrU; Get V6; V128And; Set V5; DOT16P(p+32); SCALE2(sreg, sh2, V10)

// CONSTS3 sets Q3_K's constants: the bytes 4 (V0), the byte masks 3
// (V6) and 1 (V7).
#define CONSTS3 \
	V128Const $0x0404040404040404, $0x0404040404040404; Set V0; \
	V128Const $0x0303030303030303, $0x0303030303030303; Set V6; \
	V128Const $0x0101010101010101, $0x0101010101010101; Set V7

// CONSTS2 sets Q2_K's: the int16 mask 0x00ff (V0), the byte mask 3 (V6).
#define CONSTS2 \
	V128Const $0x00ff00ff00ff00ff, $0x00ff00ff00ff00ff; Set V0; \
	V128Const $0x0303030303030303, $0x0303030303030303; Set V6

// SCALES3 sets R7 and R8 to the 16 Q3_K scales (plus 32), a byte each,
// as q3KScalesVec computes them.
#define SCALES3 \
	Get R0; I32WrapI64; I64Load $96; Set R4; \
	Get R0; I32WrapI64; I64Load32U $104; Set R5; \
	Get R4; I64Const $0x0f0f0f0f0f0f0f0f; I64And; \
	Get R5; Get R5; I64Const $2; I64ShrU; I64Const $32; I64Shl; I64Or; \
	I64Const $0x0303030303030303; I64And; I64Const $4; I64Shl; \
	I64Or; Set R7; \
	Get R4; I64Const $4; I64ShrU; I64Const $0x0f0f0f0f0f0f0f0f; I64And; \
	Get R5; I64Const $4; I64ShrU; Get R5; I64Const $6; I64ShrU; I64Const $32; I64Shl; I64Or; \
	I64Const $0x0303030303030303; I64And; I64Const $4; I64Shl; \
	I64Or; Set R8

// BLOCK3 sets V1 and V10 to the lanes of the Q3_K block at R0 against the
// activation block at R1.
#define BLOCK3 \
	SCALES3; \
	Get R0; I32WrapI64; V128Load $0; Set V8; \
	Get R0; I32WrapI64; V128Load $16; Set V9; \
	V128Const $0, $0; Set V1; \
	V128Const $0, $0; Set V10; \
	Get R0; I32WrapI64; V128Load $32; Set V2; \
	Get R0; I32WrapI64; V128Load $48; Set V3; \
	SECTION3(0, 0, 4, R7, 0, 8); \
	SECTION3(2, 1, 36, R7, 16, 24); \
	SECTION3(4, 2, 68, R7, 32, 40); \
	SECTION3(6, 3, 100, R7, 48, 56); \
	Get R0; I32WrapI64; V128Load $64; Set V2; \
	Get R0; I32WrapI64; V128Load $80; Set V3; \
	SECTION3(0, 4, 132, R8, 0, 8); \
	SECTION3(2, 5, 164, R8, 16, 24); \
	SECTION3(4, 6, 196, R8, 32, 40); \
	SECTION3(6, 7, 228, R8, 48, 56)

// BLOCK2 sets V1 and V10 to the lanes of the Q2_K block at R0 against the
// activation block at R1, and pushes its min lanes 0..3, then 4..7.
#define BLOCK2 \
	Get R0; I32WrapI64; I64Load $0; Set R7; \
	Get R0; I32WrapI64; I64Load $8; Set R8; \
	V128Const $0, $0; Set V1; \
	V128Const $0, $0; Set V10; \
	Get R0; I32WrapI64; V128Load $16; Set V2; \
	Get R0; I32WrapI64; V128Load $32; Set V3; \
	SECTION2(0, 4, R7, 0, 8); \
	SECTION2(2, 36, R7, 16, 24); \
	SECTION2(4, 68, R7, 32, 40); \
	SECTION2(6, 100, R7, 48, 56); \
	Get R0; I32WrapI64; V128Load $48; Set V2; \
	Get R0; I32WrapI64; V128Load $64; Set V3; \
	SECTION2(0, 132, R8, 0, 8); \
	SECTION2(2, 164, R8, 16, 24); \
	SECTION2(4, 196, R8, 32, 40); \
	SECTION2(6, 228, R8, 48, 56); \
	Get R0; I32WrapI64; V128Load $0; I32Const $4; I16x8ShrU; \
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; V128And; Set V5; \
	Get V5; I16x8ExtendLowI8x16U; Get R1; I32WrapI64; V128Load $260; I32x4DotI16x8S; \
	Get V5; I16x8ExtendHighI8x16U; Get R1; I32WrapI64; V128Load $276; I32x4DotI16x8S

// BLOCK3P is BLOCK3 against prepared activations at R12.
#define BLOCK3P \
	SCALES3; \
	Get R0; I32WrapI64; V128Load $0; Set V8; \
	Get R0; I32WrapI64; V128Load $16; Set V9; \
	V128Const $0, $0; Set V1; \
	V128Const $0, $0; Set V10; \
	Get R0; I32WrapI64; V128Load $32; Set V2; \
	Get R0; I32WrapI64; V128Load $48; Set V3; \
	SECTION3P(0, 0, 0, R7, 0, 8); \
	SECTION3P(2, 1, 64, R7, 16, 24); \
	SECTION3P(4, 2, 128, R7, 32, 40); \
	SECTION3P(6, 3, 192, R7, 48, 56); \
	Get R0; I32WrapI64; V128Load $64; Set V2; \
	Get R0; I32WrapI64; V128Load $80; Set V3; \
	SECTION3P(0, 4, 256, R8, 0, 8); \
	SECTION3P(2, 5, 320, R8, 16, 24); \
	SECTION3P(4, 6, 384, R8, 32, 40); \
	SECTION3P(6, 7, 448, R8, 48, 56)

// BLOCK2P is BLOCK2 against prepared activations at R12 (the bsums from
// R1).
#define BLOCK2P \
	Get R0; I32WrapI64; I64Load $0; Set R7; \
	Get R0; I32WrapI64; I64Load $8; Set R8; \
	V128Const $0, $0; Set V1; \
	V128Const $0, $0; Set V10; \
	Get R0; I32WrapI64; V128Load $16; Set V2; \
	Get R0; I32WrapI64; V128Load $32; Set V3; \
	SECTION2P(0, 0, R7, 0, 8); \
	SECTION2P(2, 64, R7, 16, 24); \
	SECTION2P(4, 128, R7, 32, 40); \
	SECTION2P(6, 192, R7, 48, 56); \
	Get R0; I32WrapI64; V128Load $48; Set V2; \
	Get R0; I32WrapI64; V128Load $64; Set V3; \
	SECTION2P(0, 256, R8, 0, 8); \
	SECTION2P(2, 320, R8, 16, 24); \
	SECTION2P(4, 384, R8, 32, 40); \
	SECTION2P(6, 448, R8, 48, 56); \
	Get R0; I32WrapI64; V128Load $0; I32Const $4; I16x8ShrU; \
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; V128And; Set V5; \
	Get V5; I16x8ExtendLowI8x16U; Get R1; I32WrapI64; V128Load $260; I32x4DotI16x8S; \
	Get V5; I16x8ExtendHighI8x16U; Get R1; I32WrapI64; V128Load $276; I32x4DotI16x8S

// func q3KDot(x, y *byte, nb int, ds *[2 * q3KChunk]float32, acc *[12]float32)
//
// The Q3_K dot of nb blocks with the float part of the reference: block j's lanes times
// ds[2j] accumulated into acc[0:8] (FMA2), kept meanwhile in V11..V14 as
// float64 pairs.
TEXT ·q3KDot(SB), NOSPLIT, $0-40
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
	CONSTS3
	LOADACC

	Block
	Get R2
	I64Eqz
	BrIf $0
	Loop
		BLOCK3
		Get R11; I32WrapI64; F32Load $0; F64PromoteF32; F64x2Splat; Set V9
		LANES8(V1, V10, V9)

		ADD(R0, 110)
		ADD(R1, 292)
		ADD(R11, 8)
		COUNTDOWN(R2)
	End
	End
	STOREACC
	RET

// func q2KDot(x, y *byte, nb int, ds *[2 * q3KChunk]float32, acc *[12]float32)
//
// The Q2_K dot of nb blocks with the float part of the reference: block j's min lanes
// times ds[2j+1], then its lanes times ds[2j], accumulated into acc[0:8]
// (FMA2), kept meanwhile in V11..V14 as float64 pairs.
TEXT ·q2KDot(SB), NOSPLIT, $0-40
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
	CONSTS2
	LOADACC

	Block
	Get R2
	I64Eqz
	BrIf $0
	Loop
		BLOCK2
		Set V9; Set V7
		Get R11; I32WrapI64; F32Load $4; F64PromoteF32; F64x2Splat; Set V5
		LANES8(V7, V9, V5)
		Get R11; I32WrapI64; F32Load $0; F64PromoteF32; F64x2Splat; Set V5
		LANES8(V1, V10, V5)

		ADD(R0, 84)
		ADD(R1, 292)
		ADD(R11, 8)
		COUNTDOWN(R2)
	End
	End
	STOREACC
	RET

// func q3KDotPrep(x, y, yp *byte, nb int, ds *float32, acc *[12]float32)
//
// q3KDot against the activation prepared at yp by splitQ8_K.
TEXT ·q3KDotPrep(SB), NOSPLIT, $0-48
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
	CONSTS3
	LOADACC

	Block
	Get R2
	I64Eqz
	BrIf $0
	Loop
		BLOCK3P
		Get R11; I32WrapI64; F32Load $0; F64PromoteF32; F64x2Splat; Set V9
		LANES8(V1, V10, V9)

		ADD(R0, 110)
		ADD(R12, 544)
		ADD(R11, 8)
		COUNTDOWN(R2)
	End
	End
	STOREACC
	RET

// func q2KDotPrep(x, y, yp *byte, nb int, ds *float32, acc *[12]float32)
//
// q2KDot against the activation y prepared at yp by splitQ8_K (y itself
// for its bsums).
TEXT ·q2KDotPrep(SB), NOSPLIT, $0-48
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
	CONSTS2
	LOADACC

	Block
	Get R2
	I64Eqz
	BrIf $0
	Loop
		BLOCK2P
		Set V9; Set V7
		Get R11; I32WrapI64; F32Load $4; F64PromoteF32; F64x2Splat; Set V5
		LANES8(V7, V9, V5)
		Get R11; I32WrapI64; F32Load $0; F64PromoteF32; F64x2Splat; Set V5
		LANES8(V1, V10, V5)

		ADD(R0, 84)
		ADD(R1, 292)
		ADD(R12, 544)
		ADD(R11, 8)
		COUNTDOWN(R2)
	End
	End
	STOREACC
	RET

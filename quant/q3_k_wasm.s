//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"
#include "kkq_wasm.h"

// The wasm SIMD128 DotRows kernel of Q3_K (q3_k_wasm.go; the reference is
// dotQ3_KRef): rows of Q3_K blocks against one activation prepared by
// splitQ8_K (its int8 values split into even and odd int16 lanes).
//
// Bits 2s, 2s+1 of a block's qs byte 32h+l (h < 2, l < 32) are weight
// 128h+32s+l's low bits, bit 4h+s of hmask byte l its high bit (set: no
// offset, clear: -4). Each 16 of them t (weights 16t..16t+15, t = 8h+2s
// for l < 16, t+1 for the rest) are decoded to signed bytes (V5): the two
// bits, less 4 where the inverted high bit is set. Their even and odd
// ones times the activation's as int16 lanes (i16x8.mul, at most 4·128),
// added, are dotted with the sub-block's scale (i32x4.dot_i16x8_s): int32
// lane m holds weights 4m..4m+3 times the scale, lanes 0..3 of ggml's x86
// order for even t, 4..7 for odd t (V10, V11), exact in int32 (at most
// 16 · 4·4·128·32 a lane). The float part is the reference's: yd·d in
// float32, one fused multiply-add per lane and block (simd_wasm.h's FMA8),
// at the end of a row hsumX86 of the lanes (KROWS).
//
// register use: R0 weight block, R1 prepared activation block, R3 the
// activation's scale of the block, R4, R5 SCALES3's scratch, R7, R8 the
// scales (plus 32) and KROWS's; V6 0x03 and V7 0x04 bytes, V12, V13 the
// scales as int16 lanes (0..7, 8..15), V2, V3 32 qs bytes, V8, V9 the
// inverted hmask (then V8 d), V5 16 quants, V10, V11 the block's lanes,
// V14, V15 the accumulators, V2..V4, V9..V13 FMA8's

// SCALES3 sets R7 and R8 to the 16 Q3_K scales (plus 32), a byte each,
// as q3KScalesVec computes them (R4, R5 scratch).
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

#define SHL2 I32Const $2; I16x8Shl
#define SHL1 I32Const $1; I16x8Shl
#define SHR1 I32Const $1; I16x8ShrU
#define SHR2 I32Const $2; I16x8ShrU
#define SHR3 I32Const $3; I16x8ShrU
#define SHR4 I32Const $4; I16x8ShrU
#define SHR5 I32Const $5; I16x8ShrU
#define SHR6 I32Const $6; I16x8ShrU
#define NOSH

// S16(sv, i) pushes int16 lane i of sv in every int16 lane.
#define S16(sv, i) \
	Get sv; V128Const $((((2*(i)+1)<<8)|(2*(i)))*0x0001000100010001), $((((2*(i)+1)<<8)|(2*(i)))*0x0001000100010001); I8x16Swizzle

// Q3T(t, qv, nv, qsh, nsh, sv, i, acc) adds weights 16t.. to acc: their
// low bits in qv (moved to bits 0, 1 by qsh), their inverted high bits in
// nv (moved to bit 2 by nsh), their scale lane i of sv.
#define Q3T(t, qv, nv, qsh, nsh, sv, i, acc) \
	Get qv; qsh; Get V6; V128And; Get nv; nsh; Get V7; V128And; I8x16Sub; Set V5; \
	EVEN(V5); Get R1; I32WrapI64; V128Load $(32*(t)); I16x8Mul; \
	ODD(V5); Get R1; I32WrapI64; V128Load $(32*(t)+16); I16x8Mul; \
	I16x8Add; S16(sv, i); I32x4DotI16x8S; Get acc; I32x4Add; Set acc

// Q3F(h, s, qsh, nsh, sv) adds field s of half h: weights 16t.. for t =
// 8h+2s (qs bytes in V2, inverted hmask in V8) and t+1 (V3, V9).
#define Q3F(h, s, qsh, nsh, sv) \
	Q3T(8*(h)+2*(s), V2, V8, qsh, nsh, sv, 2*(s), V10); \
	Q3T(8*(h)+2*(s)+1, V3, V9, qsh, nsh, sv, 2*(s)+1, V11)

// Q3BLOCK adds the block at R0 to the accumulators.
#define Q3BLOCK \
	SCALES3; \
	Get R7; I64x2Splat; Get R8; I64x2ReplaceLane $0, $1; V128Const $0x2020202020202020, $0x2020202020202020; I8x16Sub; Set V5; \
	Get V5; I16x8ExtendLowI8x16S; Set V12; \
	Get V5; I16x8ExtendHighI8x16S; Set V13; \
	Get R0; I32WrapI64; V128Load $0; V128Not; Set V8; \
	Get R0; I32WrapI64; V128Load $16; V128Not; Set V9; \
	Get R0; I32WrapI64; V128Load $32; Set V2; \
	Get R0; I32WrapI64; V128Load $48; Set V3; \
	V128Const $0, $0; Set V10; \
	V128Const $0, $0; Set V11; \
	Q3F(0, 0, NOSH, SHL2, V12); Q3F(0, 1, SHR2, SHL1, V12); \
	Q3F(0, 2, SHR4, NOSH, V12); Q3F(0, 3, SHR6, SHR1, V12); \
	Get R0; I32WrapI64; V128Load $64; Set V2; \
	Get R0; I32WrapI64; V128Load $80; Set V3; \
	Q3F(1, 0, NOSH, SHR2, V13); Q3F(1, 1, SHR2, SHR3, V13); \
	Q3F(1, 2, SHR4, SHR4, V13); Q3F(1, 3, SHR6, SHR5, V13); \
	KD(108); \
	Get V10; Set V2; \
	Get V11; Set V3; \
	FMA8

// func q3KDotRows(x *byte, nb, rows int, yp *byte, yd, tab, out *float32)
//
// sets out[r] to the dot of row r (nb ≥ 1 blocks at x + r·nb·110) with the
// activation prepared at yp (its blocks' scales at yd) for r < rows.
TEXT ·q3KDotRows(SB), NOSPLIT, $0-56
	V128Const $0x0303030303030303, $0x0303030303030303; Set V6
	V128Const $0x0404040404040404, $0x0404040404040404; Set V7
	KROWS(110, Q3BLOCK)
	RET

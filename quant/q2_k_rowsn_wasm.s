//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"
#include "kkq_wasm.h"

// The wasm SIMD128 DotRowsN kernel of Q2_K (q2_k_wasm.go; the reference is
// dotQ2_KRef): KROWSN (kkq_wasm.h) with Q2_K's decoder. A chunk t's
// quants (bits 2s, 2s+1 of the qs bytes, as q2KDotRows decodes them)
// times their scale (the low nibble of scale byte t, at most 3·15) as
// int16 lanes, even then odd; the float part per activation first the min
// lanes (lane m: i32x4.dot_i16x8_s of the mins and bsums of sub-blocks
// 2m, 2m+1) times -yd·dmin, then the lanes times yd·d, one fused
// multiply-add a lane each (KFMA2: both in one pass).
//
// decoder registers: R7, R8 the scale bytes 0..7, 8..15, V0 int16 0x00ff,
// V6 0x03 bytes, V2, V3 32 qs bytes, V4 a scale, V5 16 quants; then V6,
// V7 the mins 0..7, 8..15 as int16 lanes.

// Q2C(qv, sh, sreg, b, ev, od) sets ev, od to a chunk's even and odd
// quants (in qv, moved to bits 0, 1 by sh) times their scale (the low
// nibble of byte b of sreg).
#define Q2C(qv, sh, sreg, b, ev, od) \
	Get qv; sh; Get V6; V128And; Set V5; \
	Get sreg; I64Const $(8*(b)); I64ShrU; I64Const $0x0f; I64And; I32WrapI64; I16x8Splat; Set V4; \
	Get V5; Get V0; V128And; Get V4; I16x8Mul; Set ev; \
	Get V5; I32Const $8; I16x8ShrU; Get V4; I16x8Mul; Set od

// Q2G(g, qoff, sreg, b, sh0, sh1) decodes group g: fields with shifts sh0
// (chunks 4g, 4g+1) and sh1 (4g+2, 4g+3) of the qs at qoff, their scales
// bytes b.. of sreg.
#define Q2G(g, qoff, sreg, b, sh0, sh1) \
	Get R0; I32WrapI64; V128Load $(qoff); Set V2; \
	Get R0; I32WrapI64; V128Load $(qoff+16); Set V3; \
	Q2C(V2, sh0, sreg, b, V8, V9); \
	Q2C(V3, sh0, sreg, (b)+1, V10, V11); \
	Q2C(V2, sh1, sreg, (b)+2, V12, V13); \
	Q2C(V3, sh1, sreg, (b)+3, V14, V15)

#define Q2BLOCKN \
	Get R0; I32WrapI64; I64Load $0; Set R7; \
	Get R0; I32WrapI64; I64Load $8; Set R8; \
	V128Const $0x00ff00ff00ff00ff, $0x00ff00ff00ff00ff; Set V0; \
	V128Const $0x0303030303030303, $0x0303030303030303; Set V6; \
	Q2G(0, 16, R7, 0, NOSH, SHR2); \
	KACTS(0, KSTORELANES); \
	Q2G(1, 16, R7, 4, SHR4, SHR6); \
	KACTS(1, KADDLANES); \
	Q2G(2, 48, R8, 0, NOSH, SHR2); \
	KACTS(2, KADDLANES); \
	Q2G(3, 48, R8, 4, SHR4, SHR6); \
	KACTS(3, KADDLANES)

// Q2MINS sets V6, V7 to the block's mins as int16 lanes.
#define Q2MINS \
	Get R0; I32WrapI64; V128Load $0; I32Const $4; I16x8ShrU; V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; V128And; Set V5; \
	Get V5; I16x8ExtendLowI8x16U; Set V6; \
	Get V5; I16x8ExtendHighI8x16U; Set V7

#define Q2DMIN KYD; F32Neg; KTAB(R0, 82); F32Mul
#define Q2D KYD; KTAB(R0, 80); F32Mul
#define Q2FLOAT \
	Get R12; I32WrapI64; Get V6; Get R11; I32WrapI64; V128Load $512; I32x4DotI16x8S; V128Store $0, $32; \
	Get R12; I32WrapI64; Get V7; Get R11; I32WrapI64; V128Load $528; I32x4DotI16x8S; V128Store $0, $48; \
	KFMA2(Q2DMIN, 32, Q2D, 0)

// func q2KRowsN(x *byte, nb, rows int, yp *byte, k int, yd, tab *float32, st *byte, out *float32)
TEXT ·q2KRowsN(SB), NOSPLIT, $0-72
	KROWSN(84, Q2BLOCKN, Q2MINS, Q2FLOAT)
	RET

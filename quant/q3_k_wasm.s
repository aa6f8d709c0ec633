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

// func q3KDotRows(x *byte, nb, rows int, yp *byte, yd, tab, out *float32)
//
// sets out[r] to the dot of row r (nb ≥ 1 blocks at x + r·nb·110) with the
// activation prepared at yp (its blocks' scales at yd) for r < rows.
TEXT ·q3KDotRows(SB), NOSPLIT, $0-56
	V128Const $0x0303030303030303, $0x0303030303030303; Set V6
	V128Const $0x0404040404040404, $0x0404040404040404; Set V7
	KROWS(110, Q3BLOCK(V128Not, Q3F, FMA8))
	RET

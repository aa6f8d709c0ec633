//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"
#include "kkq_wasm.h"

// The wasm SIMD128 DotRows kernel of Q2_K (q2_k_wasm.go; the reference is
// dotQ2_KRef): rows of Q2_K blocks against one activation prepared by
// splitQ8_K (its int8 values split into even and odd int16 lanes, then the
// activation's own 16 bsums, see prepareQ8_KX86).
//
// Bits 2s, 2s+1 of a block's qs byte 32h+l (h < 2, l < 32) are weight
// 128h+32s+l's quant. Each 16 of them t (weights 16t..16t+15, t = 8h+2s
// for l < 16, t+1 for the rest) are decoded to bytes (V5), split into even
// and odd int16 lanes and dotted with the activation's (i32x4.dot_i16x8_s,
// added): int32 lane m holds weights 4m..4m+3, lanes 0..3 of ggml's x86
// order for even t, 4..7 for odd t, then times the sub-block's scale
// (i32x4.mul) and added up (V10, V11), exact in int32 (at most 16 ·
// 4·3·128·15 a lane). The min lanes (lane m: sub-blocks 2m and 2m+1) are
// i32x4.dot_i16x8_s of the mins and the bsums. The float part is the
// reference's: per block first the min lanes times -yd·dmin, then the
// lanes times yd·d, one fused multiply-add per lane each (simd_wasm.h's
// FMA8); at the end of a row hsumX86 of the lanes (KROWS).
//
// register use: R0 weight block, R1 prepared activation block, R3 the
// activation's scale of the block, and KROWS's; V0 int16 0x00ff, V6 0x03
// and V7 0x0f bytes, V1 the scales (low nibbles), V12 the mins, V2, V3
// 32 qs bytes, V4 a scale (int32 lanes), V5 16 quants, V10, V11 the
// block's lanes (then in V1, V5: FMA8 takes V10, V11), V14, V15 the
// accumulators, V2..V4, V8..V13 FMA8's

// Q2T(t, qv, sh, acc) adds weights 16t.. (qs bytes in qv, the quants moved
// to bits 0, 1 by sh; scale t) to acc.
#define Q2T(t, qv, sh, acc) \
	KSPLAT(t); \
	Get qv; sh; Get V6; V128And; Set V5; \
	Get V5; Get V0; V128And; Get R1; I32WrapI64; V128Load $(32*(t)); I32x4DotI16x8S; \
	Get V5; I32Const $8; I16x8ShrU; Get R1; I32WrapI64; V128Load $(32*(t)+16); I32x4DotI16x8S; \
	I32x4Add; Get V4; I32x4Mul; Get acc; I32x4Add; Set acc

// Q2F(h, s, sh) adds field s of half h: weights 16t.. for t = 8h+2s (qs
// bytes in V2) and t+1 (V3).
#define Q2F(h, s, sh) \
	Q2T(8*(h)+2*(s), V2, sh, V10); \
	Q2T(8*(h)+2*(s)+1, V3, sh, V11)

// func q2KDotRows(x *byte, nb, rows int, yp *byte, yd, tab, out *float32)
//
// sets out[r] to the dot of row r (nb ≥ 1 blocks at x + r·nb·84) with the
// activation prepared at yp (its blocks' scales at yd) for r < rows.
TEXT ·q2KDotRows(SB), NOSPLIT, $0-56
	V128Const $0x00ff00ff00ff00ff, $0x00ff00ff00ff00ff; Set V0
	V128Const $0x0303030303030303, $0x0303030303030303; Set V6
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; Set V7
	KROWS(84, Q2BLOCK(Q2F, 512, FMA8))
	RET

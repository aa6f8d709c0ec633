//go:build goexperiment.simd && relaxedsimd

#include "textflag.h"
#include "simd_wasm.h"
#include "kkq_wasm.h"
#include "relaxed_wasm.h"
#include "q5kn_wasm.h"

// The relaxed-SIMD DotRows kernels of the K-quants summed in ggml's x86
// order (relaxedkx_wasm.go; the references are dotQ5_KRef, …): the
// SIMD128 kernels (q5_k_wasm.s, kkq_wasm.h's KROWSY and Q5BLOCK) with
// their integer lanes computed by i16x8.relaxed_dot_i8x16_i7x16_s (RDOT16)
// of the Q8_K activation as it is (its int8 quants the signed operand, no
// prepared copy) with the weights' unsigned quants (the i7 operand, kept
// in 0..127). Each 16 weights t (weights 16t..16t+15) give eight int16
// pairs of products, which i32x4.dot_i16x8_s with the sub-block's scale
// (splat in the int16 lanes) adds in pairs and scales at once: int32 lane
// m holds scale·Σ q·y over weights 4m..4m+3, lanes 0..3 of ggml's x86
// order for even t, 4..7 for odd t, the SIMD128 kernels' exact lanes. The
// float part is the reference's: each lane (below 2^24 in magnitude, so
// exact in float32) added by one fused multiply-add, f32x4.relaxed_madd
// (kkq_wasm.h's FMA8R; the relaxed build runs only where it is fused, see
// relaxed_wasm.h's RMADD), and so are Q5_K's min sums (Q5MINFMAR).
//
// register use: as q5_k_wasm.s's, with R1 the Q8_K activation block (its
// scale at R3 = R1), V4 the scale splat in the int16 lanes, V0 Q5_K's min
// sums (lane 0), V9 FMA8R's d.

// KSPLAT16(k) pushes byte k of V1 in every int16 lane (i8x16.swizzle: an
// index of 0x80 gives zero).
#define KSPLAT16(k) \
	Get V1; V128Const $((0x8000|(k))*0x0001000100010001), $((0x8000|(k))*0x0001000100010001); I8x16Swizzle

// ---- Q5_K ----

// Q5RDOT(t, acc) adds the lanes of the quants in V5 (0..31, weights
// 16t..) against the activation at R1, times the scale in V4, to acc: a
// pair of products is at most 2·31·128 in magnitude.
#define Q5RDOT(t, acc) \
	Get R1; I32WrapI64; V128Load $(4+16*(t)); Get V5; RDOT16; \
	Get V4; I32x4DotI16x8S; Get acc; I32x4Add; Set acc

// Q5GR(g, shlo, shhi) adds the 64 weights of qs bytes 32g.. to V10, V11.
#define Q5GR(g, shlo, shhi) \
	Get R0; I32WrapI64; V128Load $(48+32*(g)); Set V2; \
	Get R0; I32WrapI64; V128Load $(64+32*(g)); Set V3; \
	KSPLAT16(2*(g)); Set V4; \
	Q5LO(V2, V8, shlo); Set V5; Q5RDOT(4*(g), V10); \
	Q5LO(V3, V9, shlo); Set V5; Q5RDOT(4*(g)+1, V11); \
	KSPLAT16(2*(g)+1); Set V4; \
	Q5HI(V2, V8, shhi); Set V5; Q5RDOT(4*(g)+2, V10); \
	Q5HI(V3, V9, shhi); Set V5; Q5RDOT(4*(g)+3, V11)

#define Q5GROUPSR Q5GR(0, SHL4, SHL3); Q5GR(1, SHL2, SHL1); Q5GR(2, NOSH, SHR1); Q5GR(3, SHR2, SHR3)

// Q5MINFMAR adds -yd·dmin (F1 yd, dmin the fp16 at R0+2) times the
// block's Σ min·bsum (the int32 lanes of V5, at most 8·63·4096 in
// magnitude, exact in float32) to the min sums (lane 0 of V0) by one fused
// multiply-add (RMADD); Q5INITR clears them, Q5FINR adds them to the
// pushed result.
#define Q5MINFMAR \
	Get F1; F32Neg; KTAB(R0, 2); F32Mul; F32x4Splat; \
	HSUM(V5); F32ConvertI32S; F32x4Splat; \
	Get V0; RMADD; Set V0
#define Q5INITR V128Const $0, $0; Set V0
#define Q5FINR Get V0; F32x4ExtractLane $0, $0; F32Add

// func q5KDotRowsRelaxed(x *byte, nb, rows int, yp, yd *byte, tab, out *float32)
//
// sets out[r] to the dot of row r (nb ≥ 1 blocks at x + r·nb·176) with
// the Q8_K activation at yp (yd = yp: its blocks' scales) for r < rows.
TEXT ·q5KDotRowsRelaxed(SB), NOSPLIT, $0-56
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; Set V6
	V128Const $0x1010101010101010, $0x1010101010101010; Set V7
	KROWSY(176, 292, 292, Q5INITR, Q5BLOCK(Q5GROUPSR, 260, FMA8R, Q5MINFMAR), Q5FINR)
	RET

// ---- Q3_K ----

// Q3RT(t, qv, hv, qsh, hsh, sv, i, acc) adds weights 16t.. to acc: their
// low bits in qv (moved to bits 0, 1 by qsh) and their high bits in hv
// (moved to bit 2 by hsh) make q+4 (0..7), whose relaxed dot with the
// activation at R1, less four times the activation's pairs of bytes
// added (i16x8.extadd_pairwise_i8x16_s), is Σ q·y in each int16 pair
// (at most 2·4·128 in magnitude), dotted with lane i of sv, the scale.
#define Q3RT(t, qv, hv, qsh, hsh, sv, i, acc) \
	Get R1; I32WrapI64; V128Load $(4+16*(t)); Set V5; \
	Get V5; Get qv; qsh; Get V6; V128And; Get hv; hsh; Get V7; V128And; V128Or; RDOT16; \
	Get V5; I16x8ExtaddPairwiseI8x16S; I32Const $2; I16x8Shl; I16x8Sub; \
	S16(sv, i); I32x4DotI16x8S; Get acc; I32x4Add; Set acc

// Q3RF(h, s, qsh, hsh, sv) adds field s of half h (Q3BLOCK's field):
// weights 16t.. for t = 8h+2s (qs bytes in V2, hmask in V8) and t+1 (V3,
// V9).
#define Q3RF(h, s, qsh, hsh, sv) \
	Q3RT(8*(h)+2*(s), V2, V8, qsh, hsh, sv, 2*(s), V10); \
	Q3RT(8*(h)+2*(s)+1, V3, V9, qsh, hsh, sv, 2*(s)+1, V11)

// func q3KDotRowsRelaxed(x *byte, nb, rows int, yp, yd *byte, tab, out *float32)
//
// is q5KDotRowsRelaxed for Q3_K rows (110-byte blocks).
TEXT ·q3KDotRowsRelaxed(SB), NOSPLIT, $0-56
	V128Const $0x0303030303030303, $0x0303030303030303; Set V6
	V128Const $0x0404040404040404, $0x0404040404040404; Set V7
	KROWSY(110, 292, 292, KNONE, Q3BLOCK(KNONE, Q3RF, FMA8R), KNONE)
	RET

// ---- Q2_K ----

// Q2RT(t, qv, sh, acc) adds weights 16t.. (qs bytes in qv, the quants
// moved to bits 0, 1 by sh) to acc: their relaxed dot with the activation
// at R1 (pairs at most 2·3·128), dotted with their scale (byte t of V1).
#define Q2RT(t, qv, sh, acc) \
	Get R1; I32WrapI64; V128Load $(4+16*(t)); Get qv; sh; Get V6; V128And; RDOT16; \
	KSPLAT16(t); I32x4DotI16x8S; Get acc; I32x4Add; Set acc

// Q2RF(h, s, sh) adds field s of half h (Q2BLOCK's field): weights 16t..
// for t = 8h+2s (qs bytes in V2) and t+1 (V3).
#define Q2RF(h, s, sh) \
	Q2RT(8*(h)+2*(s), V2, sh, V10); \
	Q2RT(8*(h)+2*(s)+1, V3, sh, V11)

// func q2KDotRowsRelaxed(x *byte, nb, rows int, yp, yd *byte, tab, out *float32)
//
// is q5KDotRowsRelaxed for Q2_K rows (84-byte blocks).
TEXT ·q2KDotRowsRelaxed(SB), NOSPLIT, $0-56
	V128Const $0x0303030303030303, $0x0303030303030303; Set V6
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; Set V7
	KROWSY(84, 292, 292, KNONE, Q2BLOCK(Q2RF, 260, FMA8R), KNONE)
	RET

// ---- Q5_K DotRowsN ----

// KFMAACTR is q5KRowsN's float part per activation (q5kn_wasm.h's
// KFMAACT) with f32x4.relaxed_madd: the activation's int32 lanes at R12
// (exact in float32) times d = yd·dx added to its float32 accumulators at
// R13, four lanes a madd, and its min sums (a float32 at R13+1024) by one
// more (mins in V0, scratch V5, V8).
#define KFMAACTR \
	Get R4; I32WrapI64; F32Load $0; Set F1; \
	Get F1; KTAB(R0, 0); F32Mul; F32x4Splat; Set V8; \
	Get R13; I32WrapI64; LANESLO; F32x4ConvertI32x4S; Get V8; Get R13; I32WrapI64; V128Load $0; RMADD; V128Store $0, $0; \
	Get R13; I32WrapI64; LANESHI; F32x4ConvertI32x4S; Get V8; Get R13; I32WrapI64; V128Load $16; RMADD; V128Store $0, $16; \
	Get V0; Q5MINSLOV; Get R11; I32WrapI64; V128Load $512; I32x4DotI16x8S; \
	Get V0; Q5MINSHIV; Get R11; I32WrapI64; V128Load $528; I32x4DotI16x8S; \
	I32x4Add; Set V5; \
	Get R13; I32WrapI64; \
	Get F1; F32Neg; KTAB(R0, 2); F32Mul; F32x4Splat; \
	HSUM(V5); F32ConvertI32S; F32x4Splat; \
	Get R13; I32WrapI64; F32Load $(1536-512); F32x4Splat; RMADD; F32x4ExtractLane $0, $0; F32Store $(1536-512)

// Q5NACC32 and Q5NMIN32 load KFMAACTR's accumulators and min sums.
#define Q5NACC32 Get R13; I32WrapI64; V128Load $0; Set V14; Get R13; I32WrapI64; V128Load $16; Set V15
#define Q5NMIN32 Get R13; I32WrapI64; F32Load $(1536-512)

// func q5KRowsNRelaxed(x *byte, nb, rows int, yp *byte, k int, yd, tab *float32, st *byte, out *float32)
//
// is q5KRowsN (q5_k_rowsn_wasm.s) with the float part KFMAACTR.
TEXT ·q5KRowsNRelaxed(SB), NOSPLIT, $0-72
	Q5KROWSN(KFMAACTR, Q5NACC32, Q5NMIN32)
	RET

// ---- Q3_K and Q2_K DotRowsN ----

// KFMALR(dpush, loff) is kkq_wasm.h's KFMAL with f32x4.relaxed_madd: d
// (the float32 pushed by dpush) times the int32 lanes at R12+loff (exact
// in float32) added to the activation's float32 accumulators at R13, four
// lanes a madd (V8 the d splat).
#define KFMALR(dpush, loff) \
	dpush; F32x4Splat; Set V8; \
	Get R13; I32WrapI64; Get R12; I32WrapI64; V128Load $(loff); F32x4ConvertI32x4S; Get V8; Get R13; I32WrapI64; V128Load $0; RMADD; V128Store $0, $0; \
	Get R13; I32WrapI64; Get R12; I32WrapI64; V128Load $(loff+16); F32x4ConvertI32x4S; Get V8; Get R13; I32WrapI64; V128Load $16; RMADD; V128Store $0, $16

// func q3KRowsNRelaxed(x *byte, nb, rows int, yp *byte, k int, yd, tab *float32, st *byte, out *float32)
//
// is q3KRowsN (q3_k_rowsn_wasm.s) with the float part by KFMALR.
TEXT ·q3KRowsNRelaxed(SB), NOSPLIT, $0-72
	KROWSNA(110, Q3BLOCKN, NOPRE, KFMALR(Q3D, 0), KACC32)
	RET

// func q2KRowsNRelaxed(x *byte, nb, rows int, yp *byte, k int, yd, tab *float32, st *byte, out *float32)
//
// is q2KRowsN (q2_k_rowsn_wasm.s) with the float part by KFMALR: the min
// lanes times -yd·dmin, then the lanes times yd·d, as the reference.
TEXT ·q2KRowsNRelaxed(SB), NOSPLIT, $0-72
	KROWSNA(84, Q2BLOCKN, Q2MINS, Q2MINLANES; KFMALR(Q2DMIN, 32); KFMALR(Q2D, 0), KACC32)
	RET

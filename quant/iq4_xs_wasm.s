//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"
#include "iq4_wasm.h"

// The wasm SIMD128 IQ4_XS dot (dotIQ4_XSSIMD128 in iq4_xs_wasm.go) in
// ggml's x86 order (x86order.go), written by hand: simd/archsimd has no
// i32x4.dot_i16x8_s and no float32/float64 conversions of vectors.
//
// Per sub-block, i8x16.swizzle looks the 16 low and the 16 high nibbles up
// in kvaluesIQ4NL; the levels and the int8 activations are split into
// their even and odd bytes as int16 lanes (EVEN, ODD) and multiplied and
// added in pairs by i32x4.dot_i16x8_s, so int32 lane i holds the products
// of bytes 4i..4i+3: lanes 0..3 from the low nibbles, 4..7 from the high
// ones, as ggml's x86 lanes. Times the sub-block's scale-32 (i32x4.mul)
// and added over the super-block they are exact (|lane| < 2^24, see
// dotIQ4_XSRef).
//
// Each lane is then added to its float32 accumulator by the fused
// multiply-add of simd_wasm.h (FMA8: fma32 emulated in f64x2 lanes).
//
// register use:
//	R0 weight block, R1 activation block (R11 prepared), R2 blocks left,
//	R3 acc, R6 the blocks' d·dy
//	V0 0x0f bytes, V1 the levels, V2, V3 int32 lanes 0..3, 4..7,
//	V4 16 bytes of nibbles, V5 16 levels, V6 the scale, V7 16 activations,
//	V8 d·dy (f64x2), V12, V13 the scales (then, with V9..V11 and V4, FMA8's
//	scratch), V14, V15 accumulators 0..3, 4..7

// SCALE pushes lane k of v (sub-block 4·(v is V13)+k's scale-32) in every
// int32 lane.
#define SCALE(v, k) Get v; V128Const $(0x0302010003020100+0x0404040404040404*k), $(0x0302010003020100+0x0404040404040404*k); I8x16Swizzle

// DOT16 pushes the int32 lanes of Σ level·y over the 16 levels in V5 and
// the activations at R1+yoff (four consecutive bytes a lane).
#define DOT16(yoff) \
	Get R1; I32WrapI64; V128Load $(yoff); Set V7; \
	EVEN(V5); EVEN(V7); I32x4DotI16x8S; \
	ODD(V5); ODD(V7); I32x4DotI16x8S; I32x4Add

// SUBX(DOT, j, v, k, a, b0, b1) adds sub-block j's scaled lanes to V2 and
// V3: its low nibbles' levels dotted by DOT at activation offset b0+a·j,
// the high ones' at b1+a·j. (The high nibbles are shifted in int16 lanes
// and masked: V8 lowers i8x16.shr_u to five instructions.) SUB takes the Q8_K block at R1 (DOT16), SUBP
// the prepared activation at R11 (DOT16R11).
#define SUBX(DOT, j, v, k, a, b0, b1) \
	Get R0; I32WrapI64; V128Load $(8+16*j); Set V4; \
	SCALE(v, k); Set V6; \
	Get V1; Get V4; Get V0; V128And; I8x16Swizzle; Set V5; \
	DOT(b0+a*j); Get V6; I32x4Mul; Get V2; I32x4Add; Set V2; \
	Get V1; Get V4; I32Const $4; I16x8ShrU; Get V0; V128And; I8x16Swizzle; Set V5; \
	DOT(b1+a*j); Get V6; I32x4Mul; Get V3; I32x4Add; Set V3
#define SUB(j, v, k) SUBX(DOT16, j, v, k, 32, 4, 20); BARRIER
#define SUBP(j, v, k) SUBX(DOT16R11, j, v, k, 64, 0, 32); BARRIER

// BARRIER stores the lanes V2, V3 to acc (R3), which holds them until the
// accumulators are stored at the end. The stores order each sub-block's
// loads after the previous sub-block's arithmetic: without them V8
// (TurboFan) issues every load of the block first and spills most of the
// vectors to the stack (measured 0.55 -> 0.64 of Q4_K's DotRows rate).
#define BARRIER \
	Get R3; I32WrapI64; Get V2; V128Store $0, $0; \
	Get R3; I32WrapI64; Get V3; V128Store $0, $16

// DOT16R11 is DOT16 against the prepared activations at R11+p (splitQ8_K):
// their even and odd int16 lanes.
#define DOT16R11(p) \
	EVEN(V5); Get R11; I32WrapI64; V128Load $(p); I32x4DotI16x8S; \
	ODD(V5); Get R11; I32WrapI64; V128Load $(p+16); I32x4DotI16x8S; I32x4Add

// FMA8D is iq4XSRowsN's float part: FMA8 with d·dy at R12.
#define FMA8D Get R12; I32WrapI64; F32Load $0; F64PromoteF32; F64x2Splat; Set V8; FMA8

// func iq4XSAcc(x, y *byte, d *float32, nb int, tab *[16]int8, acc *[8]float32)
// adds the terms of the nb ≥ 1 blocks at x and y (d[b] their d·dy) to the
// accumulators acc.
TEXT ·iq4XSAcc(SB), NOSPLIT, $0-48
	I64Load x+0(FP); Set R0
	I64Load y+8(FP); Set R1
	I64Load d+16(FP); Set R6
	I64Load nb+24(FP); Set R2
	I64Load tab+32(FP); I32WrapI64; V128Load $0; Set V1
	I64Load acc+40(FP); Set R3
	Get R3; I32WrapI64; V128Load $0; Set V14
	Get R3; I32WrapI64; V128Load $16; Set V15
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f
	Set V0
	Loop
		V128Const $0, $0; Set V2
		V128Const $0, $0; Set V3
		SCALES
		SUB(0, V12, 0); SUB(1, V12, 1); SUB(2, V12, 2); SUB(3, V12, 3); SUB(4, V13, 0); SUB(5, V13, 1); SUB(6, V13, 2); SUB(7, V13, 3)
		Get R6; I32WrapI64; F32Load $0; F64PromoteF32; F64x2Splat; Set V8
		FMA8
		ADD(R0, 136)
		ADD(R1, 292)
		ADD(R6, 4)
		COUNTDOWN(R2)
	End
	Get R3; I32WrapI64; Get V14; V128Store $0, $0
	Get R3; I32WrapI64; Get V15; V128Store $0, $16
	RET

// func iq4XSAccRow(x, yp *byte, d *float32, nb int, tab *[16]int8, acc *[8]float32)
// is iq4XSAcc with the activation prepared by splitQ8_K at yp.
TEXT ·iq4XSAccRow(SB), NOSPLIT, $0-48
	I64Load x+0(FP); Set R0
	I64Load yp+8(FP); Set R11
	I64Load d+16(FP); Set R6
	I64Load nb+24(FP); Set R2
	I64Load tab+32(FP); I32WrapI64; V128Load $0; Set V1
	I64Load acc+40(FP); Set R3
	Get R3; I32WrapI64; V128Load $0; Set V14
	Get R3; I32WrapI64; V128Load $16; Set V15
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f
	Set V0
	Loop
		V128Const $0, $0; Set V2
		V128Const $0, $0; Set V3
		SCALES
		SUBP(0, V12, 0); SUBP(1, V12, 1); SUBP(2, V12, 2); SUBP(3, V12, 3); SUBP(4, V13, 0); SUBP(5, V13, 1); SUBP(6, V13, 2); SUBP(7, V13, 3)
		Get R6; I32WrapI64; F32Load $0; F64PromoteF32; F64x2Splat; Set V8
		FMA8
		ADD(R0, 136)
		ADD(R11, 544)
		ADD(R6, 4)
		COUNTDOWN(R2)
	End
	Get R3; I32WrapI64; Get V14; V128Store $0, $0
	Get R3; I32WrapI64; Get V15; V128Store $0, $16
	RET

// ---- DotRowsN: one row against a batch (iq4_wasm.h) ----

// func iq4XSRowsN(x *byte, nb int, yp *byte, k int, d *float32, acc *[MaxDotN][8]float32, lanes *[MaxDotN][8]int32)
// adds, for the nb ≥ 1 blocks j of the row at x and the k ≥ 1
// activations i prepared at yp (splitQ8_K, nb blocks each), the lanes of
// dotIQ4_XSRef times d[i·nb+j] to acc[i] by fused multiply-adds; lanes is
// scratch.
TEXT ·iq4XSRowsN(SB), NOSPLIT, $0-56
	IQ4XSROWSN(FMA8D)
	RET

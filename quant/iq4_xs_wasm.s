//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"

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
// Each lane is then added to its float32 accumulator by a fused
// multiply-add, emulated exactly as fma32 does, two lanes at a time in
// f64x2: the product d·lane (exact), the sum, its error (TwoSum), the sum
// rounded to odd with it (one step of its bit pattern toward the error
// when it is even and inexact) and rounded to float32
// (f32x4.demote_f64x2_zero).
//
// register use:
//	R0 weight block, R1 activation block, R2 blocks left, R3 acc,
//	R4 scales_h, R5 scales_l, R6 the blocks' d·dy
//	V0 0x0f bytes, V1 the levels, V2, V3 int32 lanes 0..3, 4..7,
//	V4 16 bytes of nibbles, V5 16 levels, V6 the scale, V7 16 activations,
//	V8 d·dy (f64x2), V9..V13 the fused multiply-add's, V14, V15
//	accumulators 0..3, 4..7

// SCALE pushes sub-block j's scale-32 in every int32 lane.
#define SCALE(j) \
	Get R5; I64Const $(4*j); I64ShrU; I64Const $0xf; I64And; \
	Get R4; I64Const $(2*j); I64ShrU; I64Const $3; I64And; I64Const $4; I64Shl; I64Or; \
	I64Const $32; I64Sub; I32WrapI64; I32x4Splat

// DOT16 pushes the int32 lanes of Σ level·y over the 16 levels in V5 and
// the activations at R1+yoff (four consecutive bytes a lane).
#define DOT16(yoff) \
	Get R1; I32WrapI64; V128Load $(yoff); Set V7; \
	EVEN(V5); EVEN(V7); I32x4DotI16x8S; \
	ODD(V5); ODD(V7); I32x4DotI16x8S; I32x4Add

// SUB adds sub-block j's scaled lanes to V2 and V3.
#define SUB(j) \
	Get R0; I32WrapI64; V128Load $(8+16*j); Set V4; \
	SCALE(j); Set V6; \
	Get V1; Get V4; Get V0; V128And; I8x16Swizzle; Set V5; \
	DOT16(4+32*j); Get V6; I32x4Mul; Get V2; I32x4Add; Set V2; \
	Get V1; Get V4; I32Const $4; I8x16ShrU; I8x16Swizzle; Set V5; \
	DOT16(20+32*j); Get V6; I32x4Mul; Get V3; I32x4Add; Set V3

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
		Get R0; I32WrapI64; I64Load16U $2; Set R4
		Get R0; I32WrapI64; I64Load32U $4; Set R5
		V128Const $0, $0; Set V2
		V128Const $0, $0; Set V3
		SUB(0); SUB(1); SUB(2); SUB(3); SUB(4); SUB(5); SUB(6); SUB(7)
		Get R6; I32WrapI64; F32Load $0; F64PromoteF32; F64x2Splat; Set V8
		FMA4(V2, V14)
		FMA4(V3, V15)
		ADD(R0, 136)
		ADD(R1, 292)
		ADD(R6, 4)
		COUNTDOWN(R2)
	End
	Get R3; I32WrapI64; Get V14; V128Store $0, $0
	Get R3; I32WrapI64; Get V15; V128Store $0, $16
	RET

// DOT16P is DOT16 against the prepared activations at R11+p (splitQ8_K).
#define DOT16P(p) \
	EVEN(V5); Get R11; I32WrapI64; V128Load $(p); I32x4DotI16x8S; \
	ODD(V5); Get R11; I32WrapI64; V128Load $(p+16); I32x4DotI16x8S; I32x4Add

// SUBP is SUB with the prepared activations.
#define SUBP(j) \
	Get R0; I32WrapI64; V128Load $(8+16*j); Set V4; \
	SCALE(j); Set V6; \
	Get V1; Get V4; Get V0; V128And; I8x16Swizzle; Set V5; \
	DOT16P(64*j); Get V6; I32x4Mul; Get V2; I32x4Add; Set V2; \
	Get V1; Get V4; I32Const $4; I8x16ShrU; I8x16Swizzle; Set V5; \
	DOT16P(64*j+32); Get V6; I32x4Mul; Get V3; I32x4Add; Set V3

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
		Get R0; I32WrapI64; I64Load16U $2; Set R4
		Get R0; I32WrapI64; I64Load32U $4; Set R5
		V128Const $0, $0; Set V2
		V128Const $0, $0; Set V3
		SUBP(0); SUBP(1); SUBP(2); SUBP(3); SUBP(4); SUBP(5); SUBP(6); SUBP(7)
		Get R6; I32WrapI64; F32Load $0; F64PromoteF32; F64x2Splat; Set V8
		FMA4(V2, V14)
		FMA4(V3, V15)
		ADD(R0, 136)
		ADD(R11, 544)
		ADD(R6, 4)
		COUNTDOWN(R2)
	End
	Get R3; I32WrapI64; Get V14; V128Store $0, $0
	Get R3; I32WrapI64; Get V15; V128Store $0, $16
	RET

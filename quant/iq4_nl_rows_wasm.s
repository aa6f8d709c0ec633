//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"

// The wasm SIMD128 IQ4_NL DotRows kernel (iq4_nl_rows_wasm.go), the
// activation split by splitQ8_0 (dotrows_wasm.s). Four rows a pass, block
// by block: each row's block decoded to its int8 levels (i8x16.swizzle of
// the nibbles in kvaluesIQ4NL), split into even and odd int16 lanes and
// dotted with the prepared activation (i32x4.dot_i16x8_s: a lane adds two
// products of at most 127·128), the four rows' int32 lanes reduced
// together to their four exact block sums (NLREDUCE4), and each row's
// term fma32(float32(Σ), float32(dx·dy), sum) computed in its lane as
// dotIQ4_NLRef does: the products and sums in float64 (the products
// exact), rounded to float32 unless a sum is a float32 midpoint or tiny,
// then all four by the exact emulation (simd_wasm.h's FMAHALF).
// (Every macro comes before the first TEXT: go vet reads the arguments a
// macro names as those of the function above it.)
//
// register use: R0, R4, R5, R6 the four rows' weight blocks (R15 =
// rowBytes apart), R11 the prepared activation block, R1 its float32
// scale, R2 blocks left, R12 groups of four rows left, R13 the fp16
// table, R14 the output; V0 the levels, V15 0x0f bytes, V4, V12, V13,
// V14 the prepared block, V1 the four rows' running sums, V5..V8 their
// int32 block lanes, then V5 the block sums,
// V6 dx·dy, V2, V3, V4, V7, V8, V12 float64 products, accumulators and
// sums; V9, V10, V11 NLREDUCE4's constants (NLCONSTS; FMAHALF's scratch
// in the exact path, which sets them again), V13, V14 scratch.

// NLYLOAD loads the prepared activation block at R11 into V4, V12, V13,
// V14 (even and odd int16 lanes of activations 0..15, then 16..31).
#define NLYLOAD \
	Get R11; I32WrapI64; V128Load $0; Set V4; \
	Get R11; I32WrapI64; V128Load $16; Set V12; \
	Get R11; I32WrapI64; V128Load $32; Set V13; \
	Get R11; I32WrapI64; V128Load $48; Set V14

// NLROW sets dst to the int32 lanes of Σ level·y of the block at r (V2,
// V3 scratch) and stores them at the output (R14), which the group's
// results overwrite: the stores keep V8 (TurboFan) from issuing the loads
// of all four rows first and spilling.
#define NLROW(r, dst) \
	Get r; I32WrapI64; V128Load $2; Set V2; \
	Get V0; Get V2; Get V15; V128And; I8x16Swizzle; Set V3; \
	EVEN(V3); Get V4; I32x4DotI16x8S; \
	ODD(V3); Get V12; I32x4DotI16x8S; I32x4Add; \
	Get V0; Get V2; I32Const $4; I16x8ShrU; Get V15; V128And; I8x16Swizzle; Set V3; \
	EVEN(V3); Get V13; I32x4DotI16x8S; I32x4Add; \
	ODD(V3); Get V14; I32x4DotI16x8S; I32x4Add; \
	Set dst; Get R14; I32WrapI64; Get dst; V128Store $0, $0

// NLCONSTS sets NLREDUCE4's constants: V9 the low int32 of each int64
// lane, V10 the low int64 lane, V11 the swizzle that swaps the int64
// lanes.
#define NLCONSTS \
	V128Const $0x00000000ffffffff, $0x00000000ffffffff; Set V9; \
	V128Const $-1, $0; Set V10; \
	V128Const $0x0f0e0d0c0b0a0908, $0x0706050403020100; Set V11

// NLPAIRS4 sets a to [a0+a1, b0+b1, a2+a3, b2+b3].
#define NLPAIRS4(a, b) \
	Get a; Get a; I32Const $32; I64x2ShrU; I32x4Add; \
	Get b; Get b; I32Const $32; I64x2Shl; I32x4Add; \
	Get V9; V128Bitselect; Set a

// NLREDUCE4 pushes [ΣV5, ΣV6, ΣV7, ΣV8] (exact: each below 2^20).
#define NLREDUCE4 \
	NLPAIRS4(V5, V6); NLPAIRS4(V7, V8); \
	Get V5; Get V5; Get V11; I8x16Swizzle; I32x4Add; \
	Get V7; Get V7; Get V11; I8x16Swizzle; I32x4Add; \
	Get V10; V128Bitselect

// NLDX pushes the float32 of the fp16 scale at the start of the block at
// r (through fp16ToFP32Table at R13).
#define NLDX(r) Get R13; Get r; I32WrapI64; I64Load16U $0; I64Const $2; I64Shl; I64Add; I32WrapI64; F32Load $0

// NLCHECK pushes the lanes of the float64 sums s that are float32
// midpoints (their 29 low bits 1<<28) or below float32's normal range:
// only there can rounding s differ from rounding the exact sum.
#define NLCHECK(s) \
	Get s; V128Const $0x1fffffff, $0x1fffffff; V128And; V128Const $0x10000000, $0x10000000; I64x2Eq; \
	Get s; F64x2Abs; V128Const $0x3810000000000000, $0x3810000000000000; F64x2Lt; V128Or

// NLFMA4 sets V1 to fma32(float32(V5), V6, V1), lane by lane.
#define NLFMA4 \
	Get V5; F64x2ConvertLowI32x4S; Get V6; F64x2PromoteLowF32x4; F64x2Mul; Set V2; \
	Get V1; F64x2PromoteLowF32x4; Set V3; \
	Get V2; Get V3; F64x2Add; Set V4; \
	Get V5; HIHALF; F64x2ConvertLowI32x4S; Get V6; HIHALF; F64x2PromoteLowF32x4; F64x2Mul; Set V7; \
	Get V1; HIHALF; F64x2PromoteLowF32x4; Set V8; \
	Get V7; Get V8; F64x2Add; Set V12; \
	NLCHECK(V4); NLCHECK(V12); V128Or; V128AnyTrue; \
	If; \
		Get V2; Set V9; Get V3; Set V10; FMAHALF; Set V14; \
		Get V7; Set V9; Get V8; Set V10; FMAHALF; TOHIGH; Get V14; V128Or; Set V1; \
		NLCONSTS; \
	Else; \
		Get V4; F32x4DemoteF64x2Zero; \
		Get V12; F32x4DemoteF64x2Zero; TOHIGH; V128Or; Set V1; \
	End

// func iq4NLRows4(x, yp *byte, yd, tab *float32, nb, rowBytes, groups int, out *float32)
// sets out[0:4·groups] to the dots of the rows at x (rowBytes apart, nb ≥
// 1 blocks each) with the activation split at yp (its blocks' scales as
// float32 at yd; tab fp16ToFP32Table), four rows a pass.
TEXT ·iq4NLRows4(SB), NOSPLIT, $0-64
	I64Load x+0(FP); Set R0
	I64Load rowBytes+40(FP); Set R15
	I64Load groups+48(FP); Set R12
	I64Load tab+24(FP); Set R13
	I64Load out+56(FP); Set R14
	V128Const $0xf6eaddcfbfad9881, $0x7159453526190d01 // kvaluesIQ4NL
	Set V0
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f
	Set V15
	NLCONSTS
	Block
	Get R12; I64Eqz; BrIf $0
	Loop
		Get R0; Get R15; I64Add; Set R4
		Get R4; Get R15; I64Add; Set R5
		Get R5; Get R15; I64Add; Set R6
		I64Load yp+8(FP); Set R11
		I64Load yd+16(FP); Set R1
		I64Load nb+32(FP); Set R2
		V128Const $0, $0; Set V1
		Loop
			NLYLOAD
			NLROW(R0, V5); NLROW(R4, V6); NLROW(R5, V7); NLROW(R6, V8)
			NLREDUCE4; Set V5
			NLDX(R0); F32x4Splat; NLDX(R4); F32x4ReplaceLane $0, $1; NLDX(R5); F32x4ReplaceLane $0, $2; NLDX(R6); F32x4ReplaceLane $0, $3
			Get R1; I32WrapI64; F32Load $0; F32x4Splat; F32x4Mul; Set V6
			NLFMA4
			ADD(R0, 18); ADD(R4, 18); ADD(R5, 18); ADD(R6, 18)
			ADD(R11, 64); ADD(R1, 4)
			COUNTDOWN(R2)
		End
		Get R14; I32WrapI64; Get V1; V128Store $0, $0
		ADD(R14, 16)
		Get R6; Set R0
		COUNTDOWN(R12)
	End
	End
	RET

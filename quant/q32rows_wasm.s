//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"
#include "quads_wasm.h"

// The wasm SIMD128 DotRows and DotRowsN kernels of the 32-weight formats
// summed with fused multiply-adds (q32rows_wasm.go). IQ4_NL's DotRowsN:
// the integer parts here, the float part by fmaLanes; its activations are
// prepared as for Q8_0 (prepQ8_0Quad in quads_wasm.s), a weight block
// decoded to int8 levels, then dotted as Q8_0's are. (Q5_0, Q5_1, Q4_1:
// q5rows_wasm.s; IQ4_NL's DotRows: iq4_nl_rows_wasm.s.) Every macro comes
// before the first TEXT: go vet reads the arguments a macro names as those
// of the function above it.

// NLLEVELS sets V2 and V3 to the int8 levels (kvaluesIQ4NL, in V0) of the
// IQ4_NL block at R0: weights 0..15 (the low nibbles, V15 0x0f bytes) and
// 16..31 (the high ones).
#define NLLEVELS \
	Get R0; I32WrapI64; V128Load $2; Set V1; \
	Get V0; Get V1; Get V15; V128And; I8x16Swizzle; Set V2; \
	Get V0; Get V1; I32Const $4; I8x16ShrU; I8x16Swizzle; Set V3

// ---- DotRowsN ----
// The activations four to a vector (quads, prepared by prepQ8_0Quad; see
// quads_wasm.s): a weight pair splat over the lanes, dotted with the
// prepared pairs of each quad, gives each activation's sum in its own
// lane.
//
// register use (iq4NLRowSumsN): R0 weight block, R1 its quad 0 block, R7,
// R8, R9 quads 1..3 (R15 apart), R2 blocks left, R5 quads, R14 the
// output; V0 the levels, V1 the quant bytes, V2, V3 the levels, V4..V7
// the quads' block sums, V8 a splat weight pair, V9 the weights as int16,
// V10..V13 the splat masks, V15 0x0f bytes.

// INT8Q adds the int8 weights 0..15 in V2 and 16..31 in V3 against the
// quads to V4..V7, storing the sums (stores) after each 8 weights: the
// stores keep V8 (TurboFan) from issuing the loads of the whole block
// first and spilling.
#define INT8Q(macs, stores) \
	EVEN(V2); Set V9; LANES4(macs, 0); stores; \
	ODD(V2); Set V9; LANES4(macs, 16); stores; \
	EVEN(V3); Set V9; LANES4(macs, 128); stores; \
	ODD(V3); Set V9; LANES4(macs, 144)

// STOREQ stores the sums of quad q (vector v) at R14+16q.
#define STOREQ(v, q) Get R14; I32WrapI64; Get v; V128Store $0, $(16*q)
#define STORES1 STOREQ(V4, 0)
#define STORES2 STORES1; STOREQ(V5, 1)
#define STORES3 STORES2; STOREQ(V6, 2)
#define STORES4 STORES3; STOREQ(V7, 3)

// QUADSUMS is the block's sums for the quads (macs, stores).
#define QUADSUMS(decode, macs, stores) ZERO(V4); ZERO(V5); ZERO(V6); ZERO(V7); decode; INT8Q(macs, stores); stores

// ---- the float part ----

// FMACHECK pushes, for the float64 sums s = p+a in v (products p, addends
// a), all ones where s is a float32 midpoint (its 29 low bits 1<<28) or
// below float32's normal range (V12, V13, V14 the constants) and is not
// p+a exactly (TwoSum's error, t scratch): only there can rounding s to
// float32 differ from rounding the exact p+a (see fma32Fast). (The
// products of short scales, such as two fp16 ones, are often exact
// midpoints: those need no exact step.)
#define FMACHECK(v, p, a, t) \
	Get v; Get p; F64x2Sub; Set t; \
	Get p; Get v; Get t; F64x2Sub; F64x2Sub; Get a; Get t; F64x2Sub; F64x2Add; \
	V128Const $0, $0; F64x2Ne; \
	Get v; Get V12; V128And; Get V13; I64x2Eq; \
	Get v; F64x2Abs; Get V14; F64x2Lt; V128Or; V128And
#define FMACONSTS \
	V128Const $0x1fffffff, $0x1fffffff; Set V12; \
	V128Const $0x10000000, $0x10000000; Set V13; \
	V128Const $0x3810000000000000, $0x3810000000000000; Set V14


// func iq4NLRowSumsN(x, yq *byte, tab *int8, nb, quads int, out *int32)
// sets out[16j+4q+l] to the IQ4_NL row at x's block j's Σ level·y
// against activation l of quad q < quads (1..4, prepared by
// prepQ8_0Quad at yq, nb quad blocks apart); nb ≥ 1.
TEXT ·iq4NLRowSumsN(SB), NOSPLIT, $0-48
	I64Load x+0(FP); Set R0
	I64Load out+40(FP); Set R14
	I64Load nb+24(FP); Tee R2; I64Const $288; I64Mul; Set R15
	I64Load quads+32(FP); Set R5
	I64Load yq+8(FP); Set R1
	I64Load tab+16(FP); I32WrapI64; V128Load $0; Set V0
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; Set V15
	MASKS
	Loop
		Get R1; Get R15; I64Add; Set R7; Get R7; Get R15; I64Add; Set R8; Get R8; Get R15; I64Add; Set R9
		Get R5; I64Const $4; I64Eq
		If; QUADSUMS(NLLEVELS, MACS4, STORES4); Else
		Get R5; I64Const $3; I64Eq
		If; QUADSUMS(NLLEVELS, MACS3, STORES3); Else
		Get R5; I64Const $2; I64Eq
		If; QUADSUMS(NLLEVELS, MACS2, STORES2); Else
		QUADSUMS(NLLEVELS, MACS1, STORES1)
		End; End; End
		ADD(R0, 18)
		ADD(R1, 288)
		ADD(R14, 64)
		COUNTDOWN(R2)
	End
	RET

// func fmaLanes(s *int32, d *float32, n, stride int, acc *[4]float32)
// sets each lane l of acc to fma32(float32(s_i[l]), d_i[l], acc[l]) for
// i = 0..n-1 in order, s_i and d_i the four int32 and float32 at s and d
// plus i·stride bytes: the products are exact in float64 (the sums are
// below 2^24 in magnitude, exact in float32), the float64 sums p+a rounded
// to float32 unless one is an inexact midpoint or tiny (FMACHECK), then all four
// rounded as fma32 does (simd_wasm.h's FMAHALF). n ≥ 0.
//
// register use: R0 s_i, R1 d_i, R2 terms left, R3 the stride; V0 the
// accumulators, V1 the sums as float32, V2 d; lanes 0, 1: V5 the
// products, V6 the accumulators, V7 the sums; lanes 2, 3: V8, V3, V4;
// V12..V14 FMACHECK's constants; FMAHALF's scratch V9..V13, V15.
TEXT ·fmaLanes(SB), NOSPLIT, $0-40
	I64Load s+0(FP); Set R0
	I64Load d+8(FP); Set R1
	I64Load n+16(FP); Set R2
	I64Load stride+24(FP); Set R3
	I64Load acc+32(FP); I32WrapI64; V128Load $0; Set V0
	FMACONSTS
	Block
	Get R2
	I64Eqz
	BrIf $0
	Loop
		Get R0; I32WrapI64; V128Load $0; F32x4ConvertI32x4S; Set V1
		Get R1; I32WrapI64; V128Load $0; Set V2
		Get V1; F64x2PromoteLowF32x4; Get V2; F64x2PromoteLowF32x4; F64x2Mul; Set V5
		Get V0; F64x2PromoteLowF32x4; Set V6
		Get V5; Get V6; F64x2Add; Set V7
		Get V1; HIHALF; F64x2PromoteLowF32x4; Get V2; HIHALF; F64x2PromoteLowF32x4; F64x2Mul; Set V8
		Get V0; HIHALF; F64x2PromoteLowF32x4; Set V3
		Get V8; Get V3; F64x2Add; Set V4
		FMACHECK(V7, V5, V6, V9); FMACHECK(V4, V8, V3, V9); V128Or; V128AnyTrue
		If
			Get V5; Set V9; Get V6; Set V10
			FMAHALF; Set V15
			Get V8; Set V9; Get V3; Set V10
			FMAHALF; TOHIGH; Get V15; V128Or; Set V0
			FMACONSTS
		Else
			Get V7; F32x4DemoteF64x2Zero
			Get V4; F32x4DemoteF64x2Zero; TOHIGH; V128Or; Set V0
		End
		Get R0; Get R3; I64Add; Set R0
		Get R1; Get R3; I64Add; Set R1
		COUNTDOWN(R2)
	End
	End
	I64Load acc+32(FP); I32WrapI64; Get V0; V128Store $0, $0
	RET

//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"
#include "quads_wasm.h"

// The wasm SIMD128 DotRows and DotRowsN kernels of the 32-weight formats
// summed with fused multiply-adds (q32rows_wasm.go). IQ4_NL's DotRowsN:
// the integer parts here, the float part by fmaLanes; its activations are
// prepared as for Q8_0 (prepQ8_0Quad in quads_wasm.s), a weight block
// decoded to int8 levels, then dotted as Q8_0's are. Q5_0,
// Q5_1, Q4_1: the whole dot, see below. (Every macro comes before the
// first TEXT: go vet reads the arguments a macro names as those of the
// function above it.)

// PY pushes the 8 prepared int16 activations at R11+off.
#define PY(off) Get R11; I32WrapI64; V128Load $(off)

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

// MAC adds the splat weights V8 dotted with the prepared pairs at rq+off
// to v.
#define MAC(v, rq, off) Get V8; Get rq; I32WrapI64; V128Load $(off); I32x4DotI16x8S; Get v; I32x4Add; Set v
#define MACS1(off) MAC(V4, R1, off)
#define MACS2(off) MACS1(off); MAC(V5, R7, off)
#define MACS3(off) MACS2(off); MAC(V6, R8, off)
#define MACS4(off) MACS3(off); MAC(V7, R9, off)

// LANES4 runs the four int32 lanes (weight pairs) of V9 through macs,
// against the prepared pairs at off, off+32, off+64, off+96.
#define LANES4(macs, off) SPL(V10); macs(off); SPL(V11); macs(off+32); SPL(V12); macs(off+64); SPL(V13); macs(off+96)

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

// ---- Q5_0, Q5_1 and Q4_1 ----
// Summed in ggml's x86 order as q5_wasm.s sums them (see there): per
// block, int32 lane i of the two halves holds the products of weights
// 4i..4i+3 and 16+4i..16+4i+3, each lane added to its accumulator by
// FMA8M or FMA8X (below) with the block's d·dy; Q5_1's and Q4_1's min terms
// m·s go to their own sum, by a fused multiply-add each (MINFMA). Their activations are split once per call (splitQ8: for each block,
// the even then the odd int16 of activations 0..15, then of 16..31).

// HIBITS pushes 0x10 in the bytes of the 16 weights (from 16h) whose 5th
// bit is set (qh splat in V1), as q5_wasm.s.
#define HIBITS(h) \
	Get V1; V128Const $(0x0000000000000000+0x0202020202020202*h), $(0x0101010101010101+0x0202020202020202*h); I8x16Swizzle; \
	V128Const $0x7fbfdfeff7fbfdfe, $0x7fbfdfeff7fbfdfe; V128Or; \
	V128Const $-1, $-1; I8x16Eq; \
	V128Const $0x1010101010101010, $0x1010101010101010; V128And

#define NIB V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f

// DEC50, DEC51, DEC41 set V5 and V7 to the quants (int8) of weights 0..15
// and 16..31 of the block at R0 (V1, V6 scratch).
#define DEC50 \
	Get R0; I32WrapI64; V128Load $6; Set V6; \
	Get R0; I32WrapI64; I32Load $2; I32x4Splat; Set V1; \
	Get V6; NIB; V128And; HIBITS(0); V128Or; I32Const $16; I8x16Splat; I8x16Sub; Set V5; \
	Get V6; I32Const $4; I8x16ShrU; HIBITS(1); V128Or; I32Const $16; I8x16Splat; I8x16Sub; Set V7
#define DEC51 \
	Get R0; I32WrapI64; V128Load $8; Set V6; \
	Get R0; I32WrapI64; I32Load $4; I32x4Splat; Set V1; \
	Get V6; NIB; V128And; HIBITS(0); V128Or; Set V5; \
	Get V6; I32Const $4; I8x16ShrU; HIBITS(1); V128Or; Set V7
#define DEC41 \
	Get R0; I32WrapI64; V128Load $4; Set V6; \
	Get V6; NIB; V128And; Set V5; \
	Get V6; I32Const $4; I8x16ShrU; Set V7

// TABAT pushes the float32 of the fp16 at r+off (R12 fp16ToFP32Table).
#define TABAT(r, off) Get R12; Get r; I32WrapI64; I64Load16U $(off); I64Const $2; I64Shl; I64Add; I32WrapI64; F32Load $0

// DXDY sets V8 to the f64x2 splat of float32(dx·dy), dx the fp16 at R0,
// dy the float32 at ry.
#define DXDY(ry) TABAT(R0, 0); Get ry; I32WrapI64; F32Load $0; F32Mul; F64PromoteF32; F64x2Splat; Set V8

// MINFMA sets the float32 at racc+32 to fma32(m, s, it), m the fp16 at
// R0+2, s the float32 at rs (an fp16 value too): m·s (at most 22
// significant bits) plus a float32 is exact in float64 unless one term is
// below 2^-29 of the other, far below half an ulp of the larger, where
// both roundings give the larger; so the float64 sum rounded to float32
// is the fused multiply-add.
#define MINFMA(rs, racc) \
	Get racc; I32WrapI64; \
	TABAT(R0, 2); F64PromoteF32; Get rs; I32WrapI64; F32Load $0; F64PromoteF32; F64Mul; \
	Get racc; I32WrapI64; F32Load $32; F64PromoteF32; F64Add; F32DemoteF64; F32Store $32
#define NOMIN(rs, racc)

// FMA8M and FMA8X are simd_wasm.h's FMA8 for these formats: their
// products d·lane and accumulators are multiples of 2^-48 (d·dy is a
// product of two fp16 values, the lanes integers, and rounding to float32
// keeps a multiple of 2^-48 one), so a float64 sum is 0 or at least 2^-48
// in magnitude, never below float32's normals: only a sum on a float32
// midpoint can round differently from the exact p+a. FMA8M takes the exact
// steps (FMA4) where a sum is a midpoint; FMA8X only where it is one
// inexactly (TwoSum's error: d·dy times a short lane sum often lands
// exactly on a midpoint). FMA8M measured faster for one activation, FMA8X
// for a batch. They use V4..V7 and V9..V13 as scratch, V8 as d (an f64x2
// splat), V2, V3 the lanes, V14, V15 the accumulators.
#define ESUM(lanes, acc) \
	Get acc; F64x2PromoteLowF32x4; Set V5; \
	Get lanes; F64x2ConvertLowI32x4S; Get V8; F64x2Mul; Set V6; \
	Get V6; Get V5; F64x2Add; Set V11
#define ESUMHI(lanes, acc) \
	Get acc; HIHALF; F64x2PromoteLowF32x4; Set V5; \
	Get lanes; HIHALF; F64x2ConvertLowI32x4S; Get V8; F64x2Mul; Set V6; \
	Get V6; Get V5; F64x2Add; Set V11
#define MIDPOINT Get V11; V128Const $0x1fffffff, $0x1fffffff; V128And; V128Const $0x10000000, $0x10000000; I64x2Eq
#define CHECKM MIDPOINT; Get V13; V128Or; Set V13
#define CHECKX \
	Get V11; Get V6; F64x2Sub; Set V7; \
	Get V6; Get V11; Get V7; F64x2Sub; F64x2Sub; Get V5; Get V7; F64x2Sub; F64x2Add; \
	V128Const $0, $0; F64x2Ne; MIDPOINT; V128And; \
	Get V13; V128Or; Set V13
#define FASTE4(CHECK, lanes, acc, out) \
	ESUM(lanes, acc); CHECK; Get V11; F32x4DemoteF64x2Zero; Set V4; \
	ESUMHI(lanes, acc); CHECK; Get V11; F32x4DemoteF64x2Zero; TOHIGH; Get V4; V128Or; Set out
#define FMA8E(CHECK) \
	V128Const $0, $0; Set V13; \
	FASTE4(CHECK, V2, V14, V9); \
	FASTE4(CHECK, V3, V15, V10); \
	Get V13; V128AnyTrue; \
	If; \
		FMA4(V2, V14); \
		FMA4(V3, V15); \
	Else; \
		Get V9; Set V14; \
		Get V10; Set V15; \
	End
#define FMA8M FMA8E(CHECKM)
#define FMA8X FMA8E(CHECKX)

// register use (q5_0RowsAcc, …): R0 weight block, R11 prepared block, R2
// blocks left in the row, R13 rows left, R3 the row's accumulators, R6 dy,
// R7 sy, R12 the fp16 table; V1, V6 scratch, V5, V7 the quants, V2, V3 the
// lanes, V8 d·dy, V14, V15 the accumulators (FMA8M's V4..V7, V9..V13).

// ROWSACC(DEC, MIN, xsize) is the body of a DotRows kernel: for each of
// the rows (consecutive at x) the nb blocks' lanes against the split
// activation at yp, fused-multiply-added into the row's 12 float32 at
// acc (8 lanes, then its min sum).
#define ROWSACC(DEC, MIN, xsize) \
	I64Load x+0(FP); Set R0; \
	I64Load acc+56(FP); Set R3; \
	I64Load tab+32(FP); Set R12; \
	I64Load rows+48(FP); Set R13; \
	Loop; \
		I64Load yp+8(FP); Set R11; \
		I64Load dy+16(FP); Set R6; \
		I64Load sy+24(FP); Set R7; \
		I64Load nb+40(FP); Set R2; \
		V128Const $0, $0; Set V14; \
		V128Const $0, $0; Set V15; \
		Get R3; I32WrapI64; I32Const $0; I32Store $32; \
		Loop; \
			DEC; \
			EVEN(V5); PY(0); I32x4DotI16x8S; ODD(V5); PY(16); I32x4DotI16x8S; I32x4Add; Set V2; \
			EVEN(V7); PY(32); I32x4DotI16x8S; ODD(V7); PY(48); I32x4DotI16x8S; I32x4Add; Set V3; \
			DXDY(R6); \
			FMA8M; \
			MIN(R7, R3); \
			ADD(R0, xsize); \
			ADD(R11, 64); \
			ADD(R6, 4); \
			ADD(R7, 4); \
			COUNTDOWN(R2); \
		End; \
		Get R3; I32WrapI64; Get V14; V128Store $0, $0; \
		Get R3; I32WrapI64; Get V15; V128Store $0, $16; \
		ADD(R3, 48); \
		COUNTDOWN(R13); \
	End

// register use (q5_0RowAccN, …): R0 weight block, R1 block j of the first
// activation, R2 blocks left, R3 wd, R6, R7 dy, sy of block j (first
// activation), R12 the fp16 table; per activation R11 its split block,
// R4, R10 its dy and sy, R13 its accumulators, R14 activations left, R5,
// R9 the strides of the split activations and of dy, sy; V0, V1 the
// weights 0..15 (even, odd) as int16, those of 16..31 at wd, V2, V3 the
// lanes, V8 d·dy, V14, V15 the accumulators (FMA8X's V4..V7, V9..V13).

// ROWACCN(DEC, MIN, xsize) is the body of a DotRowsN kernel: the row's
// blocks decoded once, each against the k activations split one after
// the other at yp (nb·64 bytes each, their dy and sy [k][nb]), fused-
// multiply-added into activation i's 12 float32 at acc+48i.
#define ROWACCN(DEC, MIN, xsize) \
	I64Load x+0(FP); Set R0; \
	I64Load yp+8(FP); Set R1; \
	I64Load dy+16(FP); Set R6; \
	I64Load sy+24(FP); Set R7; \
	I64Load tab+32(FP); Set R12; \
	I64Load nb+40(FP); Tee R2; I64Const $64; I64Mul; Set R5; \
	Get R2; I64Const $4; I64Mul; Set R9; \
	I64Load wd+64(FP); Set R3; \
	Loop; \
		DEC; \
		EVEN(V5); Set V0; ODD(V5); Set V1; \
		Get R3; I32WrapI64; EVEN(V7); V128Store $0, $0; \
		Get R3; I32WrapI64; ODD(V7); V128Store $0, $16; \
		Get R1; Set R11; Get R6; Set R4; Get R7; Set R10; \
		I64Load acc+56(FP); Set R13; \
		I64Load k+48(FP); Set R14; \
		Loop; \
			Get V0; PY(0); I32x4DotI16x8S; Get V1; PY(16); I32x4DotI16x8S; I32x4Add; Set V2; \
			Get R3; I32WrapI64; V128Load $0; PY(32); I32x4DotI16x8S; \
			Get R3; I32WrapI64; V128Load $16; PY(48); I32x4DotI16x8S; I32x4Add; Set V3; \
			Get R13; I32WrapI64; V128Load $0; Set V14; \
			Get R13; I32WrapI64; V128Load $16; Set V15; \
			DXDY(R4); \
			FMA8X; \
			Get R13; I32WrapI64; Get V14; V128Store $0, $0; \
			Get R13; I32WrapI64; Get V15; V128Store $0, $16; \
			MIN(R10, R13); \
			Get R11; Get R5; I64Add; Set R11; \
			Get R4; Get R9; I64Add; Set R4; \
			Get R10; Get R9; I64Add; Set R10; \
			ADD(R13, 48); \
			COUNTDOWN(R14); \
		End; \
		ADD(R0, xsize); \
		ADD(R1, 64); \
		ADD(R6, 4); \
		ADD(R7, 4); \
		COUNTDOWN(R2); \
	End

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

// func splitQ8(dst, src *byte, nb, stride int)
// splits the 32 int8 quants of the nb blocks of stride bytes at src
// (pointing at the first block's quants) into 64 bytes each at dst.
TEXT ·splitQ8(SB), NOSPLIT, $0-32
	I64Load dst+0(FP); Set R0
	I64Load src+8(FP); Set R1
	I64Load nb+16(FP); Set R2
	I64Load stride+24(FP); Set R3
	Block
	Get R2
	I64Eqz
	BrIf $0
	Loop
		Get R1; I32WrapI64; V128Load $0; Set V1
		Get R1; I32WrapI64; V128Load $16; Set V2
		Get R0; I32WrapI64; EVEN(V1); V128Store $0, $0
		Get R0; I32WrapI64; ODD(V1); V128Store $0, $16
		Get R0; I32WrapI64; EVEN(V2); V128Store $0, $32
		Get R0; I32WrapI64; ODD(V2); V128Store $0, $48
		ADD(R0, 64)
		Get R1; Get R3; I64Add; Set R1
		COUNTDOWN(R2)
	End
	End
	RET

// func q5_0RowsAcc(x, yp *byte, dy, sy, tab *float32, nb, rows int, acc *float32)
// is the DotRows body for Q5_0 rows (sy unused); nb, rows ≥ 1.
TEXT ·q5_0RowsAcc(SB), NOSPLIT, $0-64
	ROWSACC(DEC50, NOMIN, 22)
	RET

// func q5_1RowsAcc(x, yp *byte, dy, sy, tab *float32, nb, rows int, acc *float32)
// is the DotRows body for Q5_1 rows.
TEXT ·q5_1RowsAcc(SB), NOSPLIT, $0-64
	ROWSACC(DEC51, MINFMA, 24)
	RET

// func q4_1RowsAcc(x, yp *byte, dy, sy, tab *float32, nb, rows int, acc *float32)
// is the DotRows body for Q4_1 rows.
TEXT ·q4_1RowsAcc(SB), NOSPLIT, $0-64
	ROWSACC(DEC41, MINFMA, 20)
	RET

// func q5_0RowAccN(x, yp *byte, dy, sy, tab *float32, nb, k int, acc *float32, wd *[32]int16)
// is the DotRowsN body for a Q5_0 row (sy unused); nb, k ≥ 1.
TEXT ·q5_0RowAccN(SB), NOSPLIT, $0-72
	ROWACCN(DEC50, NOMIN, 22)
	RET

// func q5_1RowAccN(x, yp *byte, dy, sy, tab *float32, nb, k int, acc *float32, wd *[32]int16)
// is the DotRowsN body for a Q5_1 row.
TEXT ·q5_1RowAccN(SB), NOSPLIT, $0-72
	ROWACCN(DEC51, MINFMA, 24)
	RET

// func q4_1RowAccN(x, yp *byte, dy, sy, tab *float32, nb, k int, acc *float32, wd *[32]int16)
// is the DotRowsN body for a Q4_1 row.
TEXT ·q4_1RowAccN(SB), NOSPLIT, $0-72
	ROWACCN(DEC41, MINFMA, 20)
	RET

//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"

// The integer parts of the wasm SIMD128 DotRowsN kernels (dotrowsn_wasm.go):
// one weight row against several activations, each prepared once per
// call as the DotRows kernels prepare theirs (splitQ8_K: even and odd
// int8 activations as int16 lanes, then the 16 sub-block sums), one after
// the other, nb·544 bytes each.
//
// A weight block is decoded once, 64 weights at a time into eight int16
// vectors that stay in registers, each already multiplied by its
// sub-block's scale (i16x8.mul), and then dotted with every activation
// (i32x4.dot_i16x8_s): the per-activation work is a load and a dot per
// eight weights. Multiplying the scale in before the dot rather than
// after it gives the same integer sums, as every step is exact: a scaled
// Q4_K quant is at most 15·63 = 945 and a scaled Q6_K quant at most
// 63·128 = 8064 in magnitude (int16), a dot lane adds two products with
// an int8 activation, and a block's sum is at most 256·945·128 (Q4_K) or
// 256·8064·128 (Q6_K) in magnitude (int32).
//
// A block's sums of the activations are accumulated across its groups of
// weights in acc (an int32x4 per activation), then reduced to the int32
// sums in out, block-major: out[acts*j+a] for block j and activation a.

// PA pushes the 8 prepared int16 activations at R11+off.
#define PA(off) Get R11; I32WrapI64; V128Load $(off)

// SPLAT16 pushes byte sh/8 of sreg in every int16 lane.
#define SPLAT16(sreg, sh) Get sreg; I64Const $(sh); I64ShrU; I64Const $0xff; I64And; I32WrapI64; I16x8Splat

// DOT8 pushes Σ over the eight int16 weight vectors V8..V15 dotted with
// the prepared activations at R11+o0 .. R11+o7.
#define DOT8(o0, o1, o2, o3, o4, o5, o6, o7) \
	Get V8; PA(o0); I32x4DotI16x8S; \
	Get V9; PA(o1); I32x4DotI16x8S; I32x4Add; \
	Get V10; PA(o2); I32x4DotI16x8S; I32x4Add; \
	Get V11; PA(o3); I32x4DotI16x8S; I32x4Add; \
	Get V12; PA(o4); I32x4DotI16x8S; I32x4Add; \
	Get V13; PA(o5); I32x4DotI16x8S; I32x4Add; \
	Get V14; PA(o6); I32x4DotI16x8S; I32x4Add; \
	Get V15; PA(o7); I32x4DotI16x8S; I32x4Add

// ACTS runs body over the activations: R11 the activation's prepared block
// (from R1, by R15), R3 its accumulator (from acc, by 16), R13 counting.
// FIRSTACC stores the pushed lanes as the accumulator, ADDACC adds them to
// it (R3 pushed before the body).
#define ACTS(body) \
	Get R1; Set R11; I64Load acc+16(FP); Set R3; I64Load acts+32(FP); Set R13; \
	Loop; \
		Get R3; I32WrapI64; body; \
		Get R11; Get R15; I64Add; Set R11; ADD(R3, 16); \
		COUNTDOWN(R13); \
	End
#define ADDACC Get R3; I32WrapI64; V128Load $0; I32x4Add; V128Store $0, $0
#define FIRSTACC V128Store $0, $0

// ---- Q4_K ----
// register use (q4KRowSumsN):
//	R0 weight block, R1 block j of the first prepared activation, R2
//	blocks left, R3 an activation's accumulator, R4..R10 scales and mins
//	as in q4_k_wasm.s (SCALESMINS), R11 an activation's prepared block,
//	R12 the offset of the Σ min·bsum sums in out (bytes), R13
//	activations left, R14 the next output, R15 the prepared activations'
//	stride; V0 the int16 nibble mask, V1 a scale, then a sum, V2, V3 the
//	32 bytes of a group's quants, V4 the mins, V8..V15 the group's 64
//	scaled weights.

// WEIGHTS4K sets V8..V15 to the 64 weights of quant bytes qoff..qoff+31
// times their sub-block's scale (bytes sh1/8 and sh2/8 of sreg), in the
// order of the prepared activations p, p+16, .., p+112 of their group.
#define WEIGHTS4K(qoff, sreg, sh1, sh2) \
	Get R0; I32WrapI64; V128Load $(qoff); Set V2; \
	Get R0; I32WrapI64; V128Load $(qoff+16); Set V3; \
	SPLAT16(sreg, sh1); Set V1; \
	Get V2; Get V0; V128And; Get V1; I16x8Mul; Set V8; \
	Get V2; I32Const $8; I16x8ShrU; Get V0; V128And; Get V1; I16x8Mul; Set V9; \
	Get V3; Get V0; V128And; Get V1; I16x8Mul; Set V10; \
	Get V3; I32Const $8; I16x8ShrU; Get V0; V128And; Get V1; I16x8Mul; Set V11; \
	SPLAT16(sreg, sh2); Set V1; \
	Get V2; I32Const $4; I16x8ShrU; Get V0; V128And; Get V1; I16x8Mul; Set V12; \
	Get V2; I32Const $12; I16x8ShrU; Get V1; I16x8Mul; Set V13; \
	Get V3; I32Const $4; I16x8ShrU; Get V0; V128And; Get V1; I16x8Mul; Set V14; \
	Get V3; I32Const $12; I16x8ShrU; Get V1; I16x8Mul; Set V15

#define DOTS4K(p) DOT8(p, p+16, p+32, p+48, p+64, p+80, p+96, p+112)

// func q4KRowSumsN(x, yp *byte, acc *int32, nb, acts int, out *int32)
// sets, for the row at x (nb ≥ 1 blocks), block j and activation a <
// acts (acts ≥ 1) prepared at yp, out[acts*j+a] to Σ scale·q·y and
// out[acts*nb+acts*j+a] to Σ min·bsum. acc holds 4·acts int32.
TEXT ·q4KRowSumsN(SB), NOSPLIT, $0-48
	I64Load x+0(FP); Set R0
	I64Load yp+8(FP); Set R1
	I64Load nb+24(FP); Tee R2
	I64Const $544; I64Mul; Set R15
	I64Load out+40(FP); Set R14
	Get R2; I64Load acts+32(FP); I64Mul; I64Const $2; I64Shl; Set R12
	V128Const $0x000f000f000f000f, $0x000f000f000f000f
	Set V0
	Loop
		SCALESMINS
		WEIGHTS4K(16, R7, 0, 8)
		ACTS(DOTS4K(0); FIRSTACC)
		WEIGHTS4K(48, R7, 16, 24)
		ACTS(DOTS4K(128); ADDACC)
		WEIGHTS4K(80, R8, 0, 8)
		ACTS(DOTS4K(256); ADDACC)
		WEIGHTS4K(112, R8, 16, 24)
		ACTS(DOTS4K(384); ADDACC)

		// the mins 0..7 as int16 lanes
		Get R9; I32WrapI64; I32x4Splat; Get R10; I32WrapI64; I32x4ReplaceLane $0, $1
		I16x8ExtendLowI8x16U; Set V4
		Get R1; Set R11; I64Load acc+16(FP); Set R3; I64Load acts+32(FP); Set R13
		Loop
			Get R14; I32WrapI64; Get R3; I32WrapI64; V128Load $0; Set V1; HSUM(V1); I32Store $0
			Get R14; Get R12; I64Add; I32WrapI64
			PA(512); I32x4ExtaddPairwiseI16x8S; Get V4; I32x4ExtendLowI16x8U; I32x4Mul
			PA(528); I32x4ExtaddPairwiseI16x8S; Get V4; I32x4ExtendHighI16x8U; I32x4Mul
			I32x4Add; Set V1; HSUM(V1); I32Store $0
			ADD(R14, 4)
			ADD(R3, 16)
			Get R11; Get R15; I64Add; Set R11
			COUNTDOWN(R13)
		End

		ADD(R0, 144)
		ADD(R1, 544)
		COUNTDOWN(R2)
	End
	RET

// ---- Q6_K ----
// register use (q6KRowSumsN): R0 weight block, R1, R3, R11, R13, R14, R15
// as in q4KRowSumsN, R2 blocks left; V0 0x0f bytes, V5 0x30 bytes, V6 the
// int16 low-byte mask, V1 a scale, then a sum, V2, V3, V4 16 bytes of ql,
// ql+32 and qh, V7 16 quants, V8..V15 a quarter's 64 scaled weights.

// SCALED16 sets wa and wb to the even and odd quants of V7 (0..63) as
// int16 lanes times the int8 scale at R0+scoff.
#define SCALED16(scoff, wa, wb) \
	Get R0; I32WrapI64; I32Load8S $(scoff); I16x8Splat; Set V1; \
	Get V7; Get V6; V128And; Get V1; I16x8Mul; Set wa; \
	Get V7; I32Const $8; I16x8ShrU; Get V1; I16x8Mul; Set wb

// WEIGHTS6K sets V8..V15 to a quarter's 64 weights (the quants as in
// q6_k_wasm.s, without the offset of 32) times their sub-block's scale, in
// the order of the prepared activations p, p+16, p+64, p+80, p+128,
// p+144, p+192, p+208.
#define WEIGHTS6K(lo, hi, qh, scoff) \
	Get R0; I32WrapI64; V128Load $(lo); Set V2; \
	Get R0; I32WrapI64; V128Load $(hi); Set V3; \
	Get R0; I32WrapI64; V128Load $(qh); Set V4; \
	Get V2; Get V0; V128And; Get V4; I32Const $4; I16x8Shl; Get V5; V128And; V128Or; Set V7; \
	SCALED16(scoff, V8, V9); \
	Get V3; Get V0; V128And; Get V4; I32Const $2; I16x8Shl; Get V5; V128And; V128Or; Set V7; \
	SCALED16(scoff+2, V10, V11); \
	Get V2; I32Const $4; I8x16ShrU; Get V4; Get V5; V128And; V128Or; Set V7; \
	SCALED16(scoff+4, V12, V13); \
	Get V3; I32Const $4; I8x16ShrU; Get V4; I32Const $2; I16x8ShrU; Get V5; V128And; V128Or; Set V7; \
	SCALED16(scoff+6, V14, V15)

#define DOTS6K(p) DOT8(p, p+16, p+64, p+80, p+128, p+144, p+192, p+208)

// func q6KRowSumsN(x, yp *byte, acc *int32, nb, acts int, out *int32)
// sets, for the row at x (nb ≥ 1 blocks), block j and activation a <
// acts (acts ≥ 1) prepared at yp, out[acts*j+a] to Σ scale·(q-32)·y.
// acc holds 4·acts int32.
TEXT ·q6KRowSumsN(SB), NOSPLIT, $0-48
	I64Load x+0(FP); Set R0
	I64Load yp+8(FP); Set R1
	I64Load nb+24(FP); Tee R2
	I64Const $544; I64Mul; Set R15
	I64Load out+40(FP); Set R14
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f
	Set V0
	V128Const $0x3030303030303030, $0x3030303030303030
	Set V5
	V128Const $0x00ff00ff00ff00ff, $0x00ff00ff00ff00ff
	Set V6
	Loop
		WEIGHTS6K(0, 32, 128, 192)
		ACTS(DOTS6K(0); FIRSTACC)
		WEIGHTS6K(16, 48, 144, 193)
		ACTS(DOTS6K(32); ADDACC)
		WEIGHTS6K(64, 96, 160, 200)
		ACTS(DOTS6K(256); ADDACC)
		WEIGHTS6K(80, 112, 176, 201)
		ACTS(DOTS6K(288); ADDACC)

		// the 16 scales as int16 lanes, for the offset: each sum less
		// 32·Σ scale·(sub-block sum)
		Get R0; I32WrapI64; V128Load $192; Set V7
		Get V7; I16x8ExtendLowI8x16S; Set V2
		Get V7; I16x8ExtendHighI8x16S; Set V3
		Get R1; Set R11; I64Load acc+16(FP); Set R3; I64Load acts+32(FP); Set R13
		Loop
			Get R14; I32WrapI64
			Get R3; I32WrapI64; V128Load $0
			Get V2; PA(512); I32x4DotI16x8S
			Get V3; PA(528); I32x4DotI16x8S; I32x4Add
			I32Const $5; I32x4Shl; I32x4Sub; Set V1
			HSUM(V1); I32Store $0
			ADD(R14, 4)
			ADD(R3, 16)
			Get R11; Get R15; I64Add; Set R11
			COUNTDOWN(R13)
		End

		ADD(R0, 210)
		ADD(R1, 544)
		COUNTDOWN(R2)
	End
	RET

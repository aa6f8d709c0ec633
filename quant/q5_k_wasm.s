//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"
#include "kkq_wasm.h"

// The wasm SIMD128 DotRows kernel of Q5_K (q5_k_wasm.go; the reference is
// dotQ5_KRef): rows of Q5_K blocks against one activation prepared by
// splitQ8_K (its int8 values split into even and odd int16 lanes, then the
// activation's own 16 bsums, see prepareQ8_KX86).
//
// A block's 16 qs bytes at 48+32g (g < 4) hold the low nibbles of weights
// 64g+l and the high nibbles of weights 64g+32+l (l < 16; the next 16
// bytes l = 16..31), their fifth bits in bits 2g and 2g+1 of qh byte l.
// Each 16 of them t (weights 16t..16t+15) are decoded to bytes (V5), split
// into even and odd int16 lanes and dotted with the activation's
// (i32x4.dot_i16x8_s, added): int32 lane m holds weights 4m..4m+3, lanes
// 0..3 of ggml's x86 order for even t, 4..7 for odd t. Those lanes are
// multiplied by the sub-block's scale (i32x4.mul) and added up (V10, V11),
// all exact in int32: a lane of 16 weights is at most 4·31·128, times 63,
// and 8 such make a block's lane. The mins' sums, Σ m·(bsum 2s + bsum
// 2s+1), come from i32x4.dot_i16x8_s of the mins (each twice) and the 16
// bsums.
//
// The float part is the reference's, all in the kernel (the weights'
// fp16 scales by a lookup in fp16ToFP32Table): d·yd and -yd·dmin in
// float32, one fused multiply-add per lane and block (simd_wasm.h's FMA8),
// and one per block for the min sums, a float64 sum rounded to float32
// unless it is a float32 midpoint, then emulated exactly (FMAHALF); at the
// end of a row hsumX86 of the lanes, plus the min sums.
//
// register use:
//	R0 weight block, R1 prepared activation block, R2 blocks left, R3 the
//	activation's scale of the block, R4..R10 SCALESMINS, R12 the output,
//	R14 fp16ToFP32Table, R15 the row; F1 the activation's scale, F17 the
//	min sums, F18 their next sum, F19 its product;
//	V0 int16 0x00ff, V6 0x0f and V7 0x10 bytes, V1 the scales (bytes),
//	V2, V3 32 qs bytes (then FMA8's lanes), V8, V9 qh (then V8 d), V4 a
//	scale (int32 lanes), V5 16 quants (then the mins), V10, V11 the
//	block's lanes, V14, V15 the accumulators, V9..V13 FMA8's scratch

// Q5LO(qv, hv, sh) pushes the low nibbles of qv with their fifth bits
// from hv moved to bit 4 by sh (a shift of the int16 lanes, or nothing).
#define Q5LO(qv, hv, sh) \
	Get qv; Get V6; V128And; Get hv; sh; Get V7; V128And; V128Or

// Q5HI(qv, hv, sh) is Q5LO for the high nibbles.
#define Q5HI(qv, hv, sh) \
	Get qv; I32Const $4; I16x8ShrU; Get V6; V128And; Get hv; sh; Get V7; V128And; V128Or

#define SHL4 I32Const $4; I16x8Shl
#define SHL3 I32Const $3; I16x8Shl
#define SHL2 I32Const $2; I16x8Shl
#define SHL1 I32Const $1; I16x8Shl
#define SHR1 I32Const $1; I16x8ShrU
#define SHR2 I32Const $2; I16x8ShrU
#define SHR3 I32Const $3; I16x8ShrU
#define NOSH

// Q5DOT(t, acc) adds the lanes of the unsigned quant bytes in V5 (weights
// 16t..) against the prepared activation at R1, times the scale in V4, to
// acc.
#define Q5DOT(t, acc) \
	Get V5; Get V0; V128And; Get R1; I32WrapI64; V128Load $(32*(t)); I32x4DotI16x8S; \
	Get V5; I32Const $8; I16x8ShrU; Get R1; I32WrapI64; V128Load $(32*(t)+16); I32x4DotI16x8S; \
	I32x4Add; Get V4; I32x4Mul; Get acc; I32x4Add; Set acc

// Q5G(g, shlo, shhi) adds the 64 weights of qs bytes 32g.. to V10, V11.
#define Q5G(g, shlo, shhi) \
	Get R0; I32WrapI64; V128Load $(48+32*(g)); Set V2; \
	Get R0; I32WrapI64; V128Load $(64+32*(g)); Set V3; \
	KSPLAT(2*(g)); \
	Q5LO(V2, V8, shlo); Set V5; Q5DOT(4*(g), V10); \
	Q5LO(V3, V9, shlo); Set V5; Q5DOT(4*(g)+1, V11); \
	KSPLAT(2*(g)+1); \
	Q5HI(V2, V8, shhi); Set V5; Q5DOT(4*(g)+2, V10); \
	Q5HI(V3, V9, shhi); Set V5; Q5DOT(4*(g)+3, V11)

// Q5MINSLO, Q5MINSHI push the mins splat in V5 (bytes 0..7: m0..m7) as
// the int16 lanes m0 m0 m1 m1 … m3 m3 and m4 m4 … m7 m7.
#define Q5MINSLO Get V5; V128Const $0x8001800180008000, $0x8003800380028002; I8x16Swizzle
#define Q5MINSHI Get V5; V128Const $0x8005800580048004, $0x8007800780068006; I8x16Swizzle

// func q5KDotRows(x *byte, nb, rows int, yp *byte, yd, tab, out *float32)
//
// sets out[r] to the dot of row r (nb ≥ 1 blocks at x + r·nb·176) with the
// activation prepared at yp (its blocks' scales at yd) for r < rows.
TEXT ·q5KDotRows(SB), NOSPLIT, $0-56
	I64Load x+0(FP); Set R0
	I64Load tab+40(FP); Set R14
	I64Load out+48(FP); Set R12
	I64Const $0; Set R15
	V128Const $0x00ff00ff00ff00ff, $0x00ff00ff00ff00ff; Set V0
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; Set V6
	V128Const $0x1010101010101010, $0x1010101010101010; Set V7
	Block
	Loop
		Get R15; I64Load rows+16(FP); I64GeU; BrIf $1
		I64Load yp+24(FP); Set R1
		I64Load yd+32(FP); Set R3
		I64Load nb+8(FP); Set R2
		V128Const $0, $0; Set V14
		V128Const $0, $0; Set V15
		F64Const $0.0; Set F17
		Loop
			SCALESMINS
			Get R8; I64Const $32; I64Shl; Get R7; I64Or; I64x2Splat; Set V1
			Get R0; I32WrapI64; V128Load $16; Set V8
			Get R0; I32WrapI64; V128Load $32; Set V9
			V128Const $0, $0; Set V10
			V128Const $0, $0; Set V11
			Q5G(0, SHL4, SHL3)
			Q5G(1, SHL2, SHL1)
			Q5G(2, NOSH, SHR1)
			Q5G(3, SHR2, SHR3)

			// Σ min·bsum: the mins, each twice, dotted with the bsums
			Get R10; I64Const $32; I64Shl; Get R9; I64Or; I64x2Splat; Set V5
			Q5MINSLO; Get R1; I32WrapI64; V128Load $512; I32x4DotI16x8S
			Q5MINSHI; Get R1; I32WrapI64; V128Load $528; I32x4DotI16x8S
			I32x4Add; Set V5

			// acc = fma(yd·d, lanes, acc) (FMA8: lanes in V2, V3)
			Get R3; I32WrapI64; F32Load $0; Set F1
			Get F1; KTAB(R0, 0); F32Mul; F64PromoteF32; F64x2Splat; Set V8
			Get V10; Set V2
			Get V11; Set V3
			FMA8

			// summs = fma(-yd·dmin, Σ min·bsum, summs): the sum in float64,
			// rounded to float32 unless it is a float32 rounding midpoint
			// (its 29 low bits 1<<28), then by FMAHALF. (Below float32's
			// normal range the float64 sum is exact: every term is a
			// multiple of 2^-149, a float32's or one's times an integer.)
			Get F1; F32Neg; KTAB(R0, 2); F32Mul; F64PromoteF32
			HSUM(V5); F64ConvertI32S; F64Mul; Set F19
			Get F19; Get F17; F64Add; Set F18
			Get F18; I64ReinterpretF64; I64Const $0x1fffffff; I64And; I64Const $0x10000000; I64Eq
			If
				Get F19; F64x2Splat; Set V9
				Get F17; F64x2Splat; Set V10
				FMAHALF; F32x4ExtractLane $0, $0; F64PromoteF32; Set F17
			Else
				Get F18; F32DemoteF64; F64PromoteF32; Set F17
			End

			ADD(R0, 176)
			ADD(R1, 544)
			ADD(R3, 4)
			COUNTDOWN(R2)
		End

		// hsumX86 of the lanes, plus the min sums
		Get V14; Get V15; F32x4Add; Set V4
		Get R12; I32WrapI64
		Get V4; F32x4ExtractLane $0, $0; Get V4; F32x4ExtractLane $0, $2; F32Add
		Get V4; F32x4ExtractLane $0, $1; Get V4; F32x4ExtractLane $0, $3; F32Add
		F32Add
		Get F17; F32DemoteF64; F32Add
		F32Store $0
		ADD(R12, 4)
		ADD(R15, 1)
		Br $0
	End
	End
	RET

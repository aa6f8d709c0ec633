//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"

// The wasm SIMD128 row kernels of Q2_K, Q3_K and Q5_K, the K-quants summed
// in ggml's x86 order, and of IQ4_XS (kx86_wasm.go; the references are
// dotQ2_KRef, dotQ3_KRef, dotQ5_KRef, dotIQ4_XSRef): one weight row against
// k activations prepared by splitQ8_K (their int8 values split into even
// and odd int16 lanes; the bsums after them are the activations' own, see
// prepareQ8_KX86).
//
// Each 16 weights t of a block (t < 16, weights 16t..16t+15) are decoded
// to their quants times their sub-block's scale as int16 lanes, the even
// weights' 8 then the odd ones' (the prepared activations' layout;
// |q·scale| ≤ 31·63 for Q5_K, 4·32 for Q3_K, 3·15 for Q2_K, 127·32 for
// IQ4_XS); i32x4.dot_i16x8_s of the two halves with the activation's,
// added, gives in int32 lane m the weights 4m..4m+3 of the 16: for even t
// lanes 0..3 of ggml's x86 order, for odd t lanes 4..7, exact in int32 (at
// most 8·4·1953·128 a lane). The batch kernels (q5KRowN, …) store a
// block's decoded weights in wd, with its mins, and dot them with every
// activation; the one-activation kernels (q5KRow1, …) dot them as they are
// decoded. The float part is the reference's: one fused multiply-add per
// lane and block, fma32 emulated by simd_wasm.h's FMA8 (d from the Go side,
// which also adds Q5_K's min sums, written out per block, with fma32).
//
// register use (the batch kernels):
//	R0 weight block, R1 the prepared activations' block j (of activation 0),
//	R2 blocks left, R3 wd, R11 d of block j (of activation 0), R15 Q5_K's
//	min sums of block j; per activation R12 its prepared block, R4 its d,
//	R6 its min sum, R13 its accumulators, R14 activations left, R5, R9 the
//	strides of the prepared activations and of d;
//	V0, V6, V7 constants, V4 a scale (int16 lanes), V5 16 quants, V2, V3
//	the qs bytes, then the lanes (then with V4, V8..V15 FMA8's: V8 d, V14,
//	V15 the accumulators), V8, V9 qh or hmask, V1 IQ4_XS's levels

// KARGS loads the arguments (as q5KRowN takes them) and sets V0 (int16
// 0x00ff), V6 (low mask) and V7 (high-bit mask): the constants.
#define KARGS(v6, v7) \
	I64Load x+0(FP); Set R0; \
	I64Load yp+16(FP); Set R1; \
	I64Load nb+8(FP); Set R2; \
	I64Load d+32(FP); Set R11; \
	I64Load ms+48(FP); Set R15; \
	I64Load wd+56(FP); Set R3; \
	V128Const $0x00ff00ff00ff00ff, $0x00ff00ff00ff00ff; Set V0; \
	V128Const v6, v6; Set V6; \
	V128Const v7, v7; Set V7

// ROW1(v6, v7) loads the arguments (as q5KRow1 takes them), the constants
// and the accumulators.
#define ROW1(v6, v7) \
	I64Load x+0(FP); Set R0; \
	I64Load nb+8(FP); Set R2; \
	I64Load yp+16(FP); Set R12; \
	I64Load d+24(FP); Set R11; \
	I64Load acc+32(FP); Set R13; \
	I64Load ms+40(FP); Set R15; \
	V128Const $0x00ff00ff00ff00ff, $0x00ff00ff00ff00ff; Set V0; \
	V128Const v6, v6; Set V6; \
	V128Const v7, v7; Set V7; \
	LOADACC8

// ZERO10 clears the lanes V10, V11; LANES23 moves them to FMA8's V2, V3.
#define ZERO10 V128Const $0, $0; Set V10; V128Const $0, $0; Set V11
#define LANES23 Get V10; Set V2; Get V11; Set V3

// SPLAT16(sreg, sh) sets V4 to byte sh/8 of sreg in every int16 lane.
#define SPLAT16(sreg, sh) \
	Get sreg; I64Const $(sh); I64ShrU; I64Const $0xff; I64And; I32WrapI64; I16x8Splat; Set V4

// The decoders below pass each 16 weights t (quant bytes in V5, their
// scale in V4, lanes to acc) to a macro that stores them in wd (STOREU,
// STORES: the batch kernels) or dots them with the activation at R12
// (DOTU, DOTS: the one-activation kernels).

// STOREU(t, acc) stores the unsigned quant bytes of V5 times V4, even then
// odd weights, as int16 lanes at wd+32t.
#define STOREU(t, acc) \
	Get R3; I32WrapI64; Get V5; Get V0; V128And; Get V4; I16x8Mul; V128Store $0, $(32*(t)); \
	Get R3; I32WrapI64; Get V5; I32Const $8; I16x8ShrU; Get V4; I16x8Mul; V128Store $0, $(32*(t)+16)

// STORES(t, acc) is STOREU for signed quant bytes.
#define STORES(t, acc) \
	Get R3; I32WrapI64; EVEN(V5); Get V4; I16x8Mul; V128Store $0, $(32*(t)); \
	Get R3; I32WrapI64; ODD(V5); Get V4; I16x8Mul; V128Store $0, $(32*(t)+16)

// DOTU(t, acc) adds the lanes of the unsigned quant bytes of V5 times V4
// against the prepared activation at R12 to acc.
#define DOTU(t, acc) \
	Get V5; Get V0; V128And; Get V4; I16x8Mul; Get R12; I32WrapI64; V128Load $(32*(t)); I32x4DotI16x8S; \
	Get V5; I32Const $8; I16x8ShrU; Get V4; I16x8Mul; Get R12; I32WrapI64; V128Load $(32*(t)+16); I32x4DotI16x8S; \
	I32x4Add; Get acc; I32x4Add; Set acc

// DOTS(t, acc) is DOTU for signed quant bytes.
#define DOTS(t, acc) \
	EVEN(V5); Get V4; I16x8Mul; Get R12; I32WrapI64; V128Load $(32*(t)); I32x4DotI16x8S; \
	ODD(V5); Get V4; I16x8Mul; Get R12; I32WrapI64; V128Load $(32*(t)+16); I32x4DotI16x8S; \
	I32x4Add; Get acc; I32x4Add; Set acc

// HALFDOT(t, acc) adds the lanes of weights 16t.. against the prepared
// activation at R12 to acc.
#define HALFDOT(t, acc) \
	Get R3; I32WrapI64; V128Load $(32*(t)); Get R12; I32WrapI64; V128Load $(32*(t)); I32x4DotI16x8S; \
	Get R3; I32WrapI64; V128Load $(32*(t)+16); Get R12; I32WrapI64; V128Load $(32*(t)+16); I32x4DotI16x8S; \
	I32x4Add; Get acc; I32x4Add; Set acc

// LANES sets V2 and V3 to the block's lanes 0..3 and 4..7 against the
// prepared activation at R12.
#define LANES \
	V128Const $0, $0; Set V2; \
	V128Const $0, $0; Set V3; \
	HALFDOT(0, V2); HALFDOT(1, V3); HALFDOT(2, V2); HALFDOT(3, V3); \
	HALFDOT(4, V2); HALFDOT(5, V3); HALFDOT(6, V2); HALFDOT(7, V3); \
	HALFDOT(8, V2); HALFDOT(9, V3); HALFDOT(10, V2); HALFDOT(11, V3); \
	HALFDOT(12, V2); HALFDOT(13, V3); HALFDOT(14, V2); HALFDOT(15, V3)

// FMAD(r, off) adds fma(d, lanes V2 and V3, ·) to the accumulators V14,
// V15, d the float32 at r+off.
#define FMAD(r, off) \
	Get r; I32WrapI64; F32Load $(off); F64PromoteF32; F64x2Splat; Set V8; \
	FMA8

// ACTS(dstride) starts the loop over the activations of block j: R12, R4,
// R6, R13 at activation 0, R14 the activations, R5 and R9 the strides
// (dstride bytes of d per block); NEXTACT moves to the next activation.
#define ACTS(dstride) \
	Get R1; Set R12; \
	Get R11; Set R4; \
	Get R15; Set R6; \
	I64Load acc+40(FP); Set R13; \
	I64Load k+24(FP); Set R14; \
	I64Load nb+8(FP); I64Const $544; I64Mul; Set R5; \
	I64Load nb+8(FP); I64Const $(dstride); I64Mul; Set R9
#define NEXTACT \
	Get R12; Get R5; I64Add; Set R12; \
	Get R4; Get R9; I64Add; Set R4; \
	Get R6; Get R9; I64Add; Set R6; \
	ADD(R13, 32); \
	COUNTDOWN(R14)

// LOADACC8 and STOREACC8 move the accumulators at R13 to V14, V15 and
// back.
#define LOADACC8 \
	Get R13; I32WrapI64; V128Load $0; Set V14; \
	Get R13; I32WrapI64; V128Load $16; Set V15
#define STOREACC8 \
	Get R13; I32WrapI64; Get V14; V128Store $0, $0; \
	Get R13; I32WrapI64; Get V15; V128Store $0, $16

// ---- Q5_K ----
// Q5Q(qv, hi, hv, op, n) sets V5 to the quants of the low (hi 0) or high
// (hi 4) nibbles of qv with their fifth bits from hv (bit b of each byte,
// moved to bit 4 by op $n: I16x8Shl $(4-b) or I16x8ShrU $(b-4), then
// masked by V7).
#define Q5Q(qv, hi, hv, op, n) \
	Get qv; I32Const $(hi); I16x8ShrU; Get V6; V128And; \
	Get hv; I32Const $(n); op; Get V7; V128And; V128Or; Set V5

// Q5GROUP(USE, g, sreg, sh1, sh2, op1, n1, op2, n2) decodes the 64
// weights of qs bytes 32g.. (scales in bytes sh1/8, sh2/8 of sreg, fifth
// bits 2g and 2g+1 of qh moved by op1 $n1, op2 $n2): weights 16t.. for
// t = 4g..4g+3, to USE (lanes to V10, V11).
#define Q5GROUP(USE, g, sreg, sh1, sh2, op1, n1, op2, n2) \
	Get R0; I32WrapI64; V128Load $(48+32*g); Set V2; \
	Get R0; I32WrapI64; V128Load $(64+32*g); Set V3; \
	SPLAT16(sreg, sh1); \
	Q5Q(V2, 0, V8, op1, n1); USE(4*g, V10); \
	Q5Q(V3, 0, V9, op1, n1); USE(4*g+1, V11); \
	SPLAT16(sreg, sh2); \
	Q5Q(V2, 4, V8, op2, n2); USE(4*g+2, V10); \
	Q5Q(V3, 4, V9, op2, n2); USE(4*g+3, V11)

// Q5BLOCK(USE) decodes the Q5_K block at R0 to USE; it leaves the mins
// splat in V5 (bytes 0..7 and 8..15: m0..m7).
#define Q5BLOCK(USE) \
	SCALESMINS; \
	Get R0; I32WrapI64; V128Load $16; Set V8; \
	Get R0; I32WrapI64; V128Load $32; Set V9; \
	Q5GROUP(USE, 0, R7, 0, 8, I16x8Shl, 4, I16x8Shl, 3); \
	Q5GROUP(USE, 1, R7, 16, 24, I16x8Shl, 2, I16x8Shl, 1); \
	Q5GROUP(USE, 2, R8, 0, 8, I16x8Shl, 0, I16x8ShrU, 1); \
	Q5GROUP(USE, 3, R8, 16, 24, I16x8ShrU, 2, I16x8ShrU, 3); \
	Get R10; I64Const $32; I64Shl; Get R9; I64Or; I64x2Splat; Set V5

// MINSLO, MINSHI push the mins splat V5 as int16 lanes m0 m0 m1 m1 … m3 m3
// and m4 m4 … m7 m7.
#define MINSLO Get V5; V128Const $0x8001800180008000, $0x8003800380028002; I8x16Swizzle
#define MINSHI Get V5; V128Const $0x8005800580048004, $0x8007800780068006; I8x16Swizzle

// func q5KRowN(x *byte, nb int, yp *byte, k int, d *float32, acc *[MaxDotN][8]float32, ms *int32, wd *[x86Decoded]byte)
//
// For each of the nb blocks j of the row at x and each activation i < k
// (prepared at yp + 544·(nb·i + j)): its lanes times d[nb·i + j] are added
// to acc[i] (FMA8), and its Σ min·(bsum 2s + bsum 2s+1) is written to
// ms[nb·i + j].
TEXT ·q5KRowN(SB), NOSPLIT, $0-64
	KARGS($0x0f0f0f0f0f0f0f0f, $0x1010101010101010)
	Loop
		Q5BLOCK(STOREU)
		Get R3; I32WrapI64; MINSLO; V128Store $0, $512
		Get R3; I32WrapI64; MINSHI; V128Store $0, $528

		ACTS(4)
		Loop
			LANES
			// Σ min·bsum: i32x4.dot_i16x8_s of the bsums and the mins pairs
			Get R12; I32WrapI64; V128Load $512; Get R3; I32WrapI64; V128Load $512; I32x4DotI16x8S
			Get R12; I32WrapI64; V128Load $528; Get R3; I32WrapI64; V128Load $528; I32x4DotI16x8S
			I32x4Add; Set V5
			Get R6; I32WrapI64; HSUM(V5); I32Store $0
			LOADACC8
			FMAD(R4, 0)
			STOREACC8
			NEXTACT
		End

		ADD(R0, 176)
		ADD(R1, 544)
		ADD(R11, 4)
		ADD(R15, 4)
		COUNTDOWN(R2)
	End
	RET

// ---- Q3_K ----
// Q3Q(qv, hv, s2, t) sets V5 to the quants -4..3 of the 2-bit field at
// bit s2 of the bytes of qv with the high bits at bit t of hv (V0: bytes 4).
#define Q3Q(qv, hv, s2, t) \
	Get qv; I32Const $(s2); I16x8ShrU; Get V6; V128And; \
	Get hv; I32Const $(t); I16x8ShrU; Get V7; V128And; I32Const $2; I16x8Shl; \
	V128Or; V128Const $0x0404040404040404, $0x0404040404040404; I8x16Sub; Set V5

// SCALES3 sets R7 and R8 to the 16 Q3_K scales (plus 32), a byte each,
// as q3KScalesVec computes them (R4, R5 scratch).
#define SCALES3 \
	Get R0; I32WrapI64; I64Load $96; Set R4; \
	Get R0; I32WrapI64; I64Load32U $104; Set R5; \
	Get R4; I64Const $0x0f0f0f0f0f0f0f0f; I64And; \
	Get R5; Get R5; I64Const $2; I64ShrU; I64Const $32; I64Shl; I64Or; \
	I64Const $0x0303030303030303; I64And; I64Const $4; I64Shl; \
	I64Or; Set R7; \
	Get R4; I64Const $4; I64ShrU; I64Const $0x0f0f0f0f0f0f0f0f; I64And; \
	Get R5; I64Const $4; I64ShrU; Get R5; I64Const $6; I64ShrU; I64Const $32; I64Shl; I64Or; \
	I64Const $0x0303030303030303; I64And; I64Const $4; I64Shl; \
	I64Or; Set R8

// SPLAT3(sreg, sh) sets V4 to the Q3_K scale in byte sh/8 of sreg, less
// 32, in every int16 lane.
#define SPLAT3(sreg, sh) \
	Get sreg; I64Const $(sh); I64ShrU; I64Const $0xff; I64And; I32WrapI64; I32Const $32; I32Sub; I16x8Splat; Set V4

// Q3FIELD(USE, s, h, sreg) decodes field s of half h: weights 16t.. for
// t = 8h+2s (qs bytes in V2, hmask in V8) and 8h+2s+1 (V3, V9).
#define Q3FIELD(USE, s, h, sreg) \
	Q3Q(V2, V8, 2*s, 4*h+s); SPLAT3(sreg, 16*s); USE(8*h+2*s, V10); \
	Q3Q(V3, V9, 2*s, 4*h+s); SPLAT3(sreg, 16*s+8); USE(8*h+2*s+1, V11)

// Q3BLOCK(USE) decodes the Q3_K block at R0 to USE.
#define Q3BLOCK(USE) \
	SCALES3; \
	Get R0; I32WrapI64; V128Load $0; Set V8; \
	Get R0; I32WrapI64; V128Load $16; Set V9; \
	Get R0; I32WrapI64; V128Load $32; Set V2; \
	Get R0; I32WrapI64; V128Load $48; Set V3; \
	Q3FIELD(USE, 0, 0, R7); Q3FIELD(USE, 1, 0, R7); Q3FIELD(USE, 2, 0, R7); Q3FIELD(USE, 3, 0, R7); \
	Get R0; I32WrapI64; V128Load $64; Set V2; \
	Get R0; I32WrapI64; V128Load $80; Set V3; \
	Q3FIELD(USE, 0, 1, R8); Q3FIELD(USE, 1, 1, R8); Q3FIELD(USE, 2, 1, R8); Q3FIELD(USE, 3, 1, R8)

// func q3KRowN(x *byte, nb int, yp *byte, k int, d *float32, acc *[MaxDotN][8]float32, ms *int32, wd *[x86Decoded]byte)
//
// q5KRowN for Q3_K (no min sums).
TEXT ·q3KRowN(SB), NOSPLIT, $0-64
	KARGS($0x0303030303030303, $0x0101010101010101)
	Loop
		Q3BLOCK(STORES)

		ACTS(4)
		Loop
			LANES
			LOADACC8
			FMAD(R4, 0)
			STOREACC8
			NEXTACT
		End

		ADD(R0, 110)
		ADD(R1, 544)
		ADD(R11, 4)
		COUNTDOWN(R2)
	End
	RET

// ---- Q2_K ----
// Q2FIELD(USE, s, h, sreg) decodes field s of half h: weights 16t.. for
// t = 8h+2s (qs bytes in V2) and 8h+2s+1 (V3), their scales the low
// nibbles of bytes 2s, 2s+1 of sreg.
#define Q2FIELD(USE, s, h, sreg) \
	Get V2; I32Const $(2*s); I16x8ShrU; Get V6; V128And; Set V5; \
	Get sreg; I64Const $(16*s); I64ShrU; I64Const $0x0f; I64And; I32WrapI64; I16x8Splat; Set V4; \
	USE(8*h+2*s, V10); \
	Get V3; I32Const $(2*s); I16x8ShrU; Get V6; V128And; Set V5; \
	Get sreg; I64Const $(16*s+8); I64ShrU; I64Const $0x0f; I64And; I32WrapI64; I16x8Splat; Set V4; \
	USE(8*h+2*s+1, V11)

// Q2BLOCK(USE) decodes the Q2_K block at R0 to USE; it leaves the 16 mins
// in the bytes of V5.
#define Q2BLOCK(USE) \
	Get R0; I32WrapI64; I64Load $0; Set R7; \
	Get R0; I32WrapI64; I64Load $8; Set R8; \
	Get R0; I32WrapI64; V128Load $16; Set V2; \
	Get R0; I32WrapI64; V128Load $32; Set V3; \
	Q2FIELD(USE, 0, 0, R7); Q2FIELD(USE, 1, 0, R7); Q2FIELD(USE, 2, 0, R7); Q2FIELD(USE, 3, 0, R7); \
	Get R0; I32WrapI64; V128Load $48; Set V2; \
	Get R0; I32WrapI64; V128Load $64; Set V3; \
	Q2FIELD(USE, 0, 1, R8); Q2FIELD(USE, 1, 1, R8); Q2FIELD(USE, 2, 1, R8); Q2FIELD(USE, 3, 1, R8); \
	Get R0; I32WrapI64; V128Load $0; I32Const $4; I16x8ShrU; Get V7; V128And; Set V5

// func q2KRowN(x *byte, nb int, yp *byte, k int, d *float32, acc *[MaxDotN][8]float32, ms *int32, wd *[x86Decoded]byte)
//
// q5KRowN for Q2_K: per block and activation, first the min lanes (the
// mins times the bsums, i32x4.dot_i16x8_s: lane m holds sub-blocks 2m and
// 2m+1) times d[2(nb·i + j)], then the lanes times d[2(nb·i + j) + 1].
TEXT ·q2KRowN(SB), NOSPLIT, $0-64
	KARGS($0x0303030303030303, $0x0f0f0f0f0f0f0f0f)
	Loop
		Q2BLOCK(STOREU)
		// the 16 mins as int16 lanes
		Get R3; I32WrapI64; Get V5; I16x8ExtendLowI8x16U; V128Store $0, $512
		Get R3; I32WrapI64; Get V5; I16x8ExtendHighI8x16U; V128Store $0, $528

		ACTS(8)
		Loop
			LOADACC8
			Get R3; I32WrapI64; V128Load $512; Get R12; I32WrapI64; V128Load $512; I32x4DotI16x8S; Set V2
			Get R3; I32WrapI64; V128Load $528; Get R12; I32WrapI64; V128Load $528; I32x4DotI16x8S; Set V3
			FMAD(R4, 0)
			LANES
			FMAD(R4, 4)
			STOREACC8
			NEXTACT
		End

		ADD(R0, 84)
		ADD(R1, 544)
		ADD(R11, 8)
		COUNTDOWN(R2)
	End
	RET

// ---- IQ4_XS ----
// IQ4SUB(j) decodes sub-block j: its levels (i8x16.swizzle of the nibbles
// in kvaluesIQ4NL, V1), the low nibbles' weights 32j..32j+15, the high
// ones' 32j+16.., times its scale-32 (from scales_l in R7, scales_h in
// R8).
#define IQ4SUB(USE, j) \
	Get R7; I64Const $(4*j); I64ShrU; I64Const $15; I64And; \
	Get R8; I64Const $(2*j); I64ShrU; I64Const $3; I64And; I64Const $4; I64Shl; I64Or; \
	I32WrapI64; I32Const $32; I32Sub; I16x8Splat; Set V4; \
	Get R0; I32WrapI64; V128Load $(8+16*j); Set V2; \
	Get V1; Get V2; Get V6; V128And; I8x16Swizzle; Set V5; USE(2*j, V10); \
	Get V1; Get V2; I32Const $4; I8x16ShrU; I8x16Swizzle; Set V5; USE(2*j+1, V11)

// IQ4BLOCK(USE) decodes the IQ4_XS block at R0 to USE.
#define IQ4BLOCK(USE) \
	Get R0; I32WrapI64; I64Load32U $4; Set R7; \
	Get R0; I32WrapI64; I64Load16U $2; Set R8; \
	IQ4SUB(USE, 0); IQ4SUB(USE, 1); IQ4SUB(USE, 2); IQ4SUB(USE, 3); \
	IQ4SUB(USE, 4); IQ4SUB(USE, 5); IQ4SUB(USE, 6); IQ4SUB(USE, 7)

// func iq4XSRowN(x *byte, nb int, yp *byte, k int, d *float32, acc *[MaxDotN][8]float32, ms *int32, wd *[x86Decoded]byte)
//
// q5KRowN for IQ4_XS (no min sums; |level·scale| ≤ 127·32).
TEXT ·iq4XSRowN(SB), NOSPLIT, $0-64
	KARGS($0x0f0f0f0f0f0f0f0f, $0)
	V128Const $0xf6eaddcfbfad9881, $0x7159453526190d01 // kvaluesIQ4NL
	Set V1
	Loop
		IQ4BLOCK(STORES)

		ACTS(4)
		Loop
			LANES
			LOADACC8
			FMAD(R4, 0)
			STOREACC8
			NEXTACT
		End

		ADD(R0, 136)
		ADD(R1, 544)
		ADD(R11, 4)
		COUNTDOWN(R2)
	End
	RET

// The one-activation kernels (DotRows, Dot): each block decoded straight
// into its dots with the activation prepared at yp (DOTU, DOTS), block
// after block, the accumulators in V14, V15 throughout.
//
// register use: R0 weight block, R12 prepared block, R2 blocks left, R11
// d, R15 the min sums (Q5_K), R13 the accumulators; V10, V11 the block's
// lanes, V0..V9 as in the batch kernels.

// func q5KRow1(x *byte, nb int, yp *byte, d *float32, acc *[8]float32, ms *int32)
//
// For each of the nb ≥ 1 blocks j of the row at x against the activation
// prepared at yp: its lanes times d[j] are added to acc (FMA8) and its
// Σ min·(bsum 2s + bsum 2s+1) is written to ms[j].
TEXT ·q5KRow1(SB), NOSPLIT, $0-48
	ROW1($0x0f0f0f0f0f0f0f0f, $0x1010101010101010)
	Loop
		ZERO10
		Q5BLOCK(DOTU)
		MINSLO; Get R12; I32WrapI64; V128Load $512; I32x4DotI16x8S
		MINSHI; Get R12; I32WrapI64; V128Load $528; I32x4DotI16x8S
		I32x4Add; Set V5
		Get R15; I32WrapI64; HSUM(V5); I32Store $0
		LANES23
		FMAD(R11, 0)
		ADD(R0, 176)
		ADD(R12, 544)
		ADD(R11, 4)
		ADD(R15, 4)
		COUNTDOWN(R2)
	End
	STOREACC8
	RET

// func q3KRow1(x *byte, nb int, yp *byte, d *float32, acc *[8]float32, ms *int32)
TEXT ·q3KRow1(SB), NOSPLIT, $0-48
	ROW1($0x0303030303030303, $0x0101010101010101)
	Loop
		ZERO10
		Q3BLOCK(DOTS)
		LANES23
		FMAD(R11, 0)
		ADD(R0, 110)
		ADD(R12, 544)
		ADD(R11, 4)
		COUNTDOWN(R2)
	End
	STOREACC8
	RET

// func q2KRow1(x *byte, nb int, yp *byte, d *float32, acc *[8]float32, ms *int32)
//
// d[2j] the min lanes' d, d[2j+1] the lanes'.
TEXT ·q2KRow1(SB), NOSPLIT, $0-48
	ROW1($0x0303030303030303, $0x0f0f0f0f0f0f0f0f)
	Loop
		ZERO10
		Q2BLOCK(DOTU)
		// the min lanes (the mins in V5), then the lanes (kept in V1, V5)
		Get V5; I16x8ExtendLowI8x16U; Get R12; I32WrapI64; V128Load $512; I32x4DotI16x8S; Set V2
		Get V5; I16x8ExtendHighI8x16U; Get R12; I32WrapI64; V128Load $528; I32x4DotI16x8S; Set V3
		Get V10; Set V1
		Get V11; Set V5
		FMAD(R11, 0)
		Get V1; Set V2
		Get V5; Set V3
		FMAD(R11, 4)
		ADD(R0, 84)
		ADD(R12, 544)
		ADD(R11, 8)
		COUNTDOWN(R2)
	End
	STOREACC8
	RET

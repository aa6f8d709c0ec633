//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"

// The row kernels of the wasm SIMD128 DotRows and DotRowsN of the
// codebook formats IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS and IQ3_S
// (iqgrid_wasm.go): one weight row against one or more activations
// prepared by splitQ8_K (even and odd int8 activations as int16 lanes).
//
// A block is taken in four passes, each half of four sub-blocks (the 16
// low or the 16 high weights of sub-blocks 0..3 or 4..7, 64 weights),
// decoded into eight int16 vectors V8..V15 that stay in registers: the
// codebook points loaded by index from the grid (a v128.load of the first
// point and i64.load or i32.load of the others, put in their lanes by
// i64x2.replace_lane or i32x4.replace_lane), negated where their sign
// bits are set ((g XOR m) - m, the mask m of 0xff bytes from iqSignMasks
// by the 7-bit sign index, or the explicit sign bits broadcast to bytes by
// i8x16.swizzle and tested against each byte's bit), split into their even
// and odd bytes as int16 lanes and multiplied by the sub-block's (or
// 16-weight half's) scale 2s+1 (i16x8.mul). Each activation then takes a
// load and an i32x4.dot_i16x8_s per eight weights: int32 lane i of the
// dots of the even and the odd halves of 16 weights is the sum of weights
// 4i..4i+3 times their activations, so a pass of low halves gives lanes
// 0..3 of iq3Lanes and one of high halves lanes 4..7. Every step is exact:
// a scaled weight is at most 62·31 = 1922 in magnitude (int16) and a
// block's lane at most 8·31·4·62·128 (int32), and the integer sums do not
// depend on the order they are added in.
//
// After the four passes, a block's lanes of every activation (iacc) are
// converted to float32, multiplied by d = fp16(d)·yd (f32.mul) and added
// to the activation's eight float32 running sums (iqAccumulate's rounded
// product and sum).
//
// register use:
//	R0 weight block, R1 block j of the first prepared activation, R2
//	blocks left, R3 an activation's int32 lanes (iacc), R4 the grid, R5
//	iqSignMasks, R6, R7 a sub-block's packed bits, R9 the block's fp16(d)
//	(dx), R10 the block's activation scales (yd, k per block), R11 an
//	activation's prepared block, R12 its running sums (facc), R13
//	activations left, R14 its scale of the block, R15 the prepared
//	activations' stride;
//	V0 the swizzle of sign bytes 0, 1 to bytes 0..7, 8..15, V4 each byte's
//	sign bit, V1 a scale, then d, V2 the sign bytes, V6 a sign mask, V7 16
//	signed weights, V8..V15 the pass's 64 scaled weights.

// IQPA pushes the 8 prepared int16 activations at R11+off.
#define IQPA(off) Get R11; I32WrapI64; V128Load $(off)

// IQQDOT pushes the int32 lanes of half h (0: weights 0..15, lanes 0..3;
// 1: 16..31, lanes 4..7) of sub-blocks s..s+3, decoded into V8..V15, dotted
// with the prepared activation at R11.
#define IQQDOT(h, s) \
	Get V8; IQPA(64*(s)+32*(h)); I32x4DotI16x8S; \
	Get V9; IQPA(64*(s)+32*(h)+16); I32x4DotI16x8S; I32x4Add; \
	Get V10; IQPA(64*(s)+64+32*(h)); I32x4DotI16x8S; I32x4Add; \
	Get V11; IQPA(64*(s)+64+32*(h)+16); I32x4DotI16x8S; I32x4Add; \
	Get V12; IQPA(64*(s)+128+32*(h)); I32x4DotI16x8S; I32x4Add; \
	Get V13; IQPA(64*(s)+128+32*(h)+16); I32x4DotI16x8S; I32x4Add; \
	Get V14; IQPA(64*(s)+192+32*(h)); I32x4DotI16x8S; I32x4Add; \
	Get V15; IQPA(64*(s)+192+32*(h)+16); I32x4DotI16x8S; I32x4Add

// IQFIRST stores the lanes of half h of sub-blocks 0..3 as the
// activation's (R3), IQADD adds those of sub-blocks 4..7 to them.
#define IQFIRST(h) Get R3; I32WrapI64; IQQDOT(h, 0); V128Store $0, $(16*(h))
#define IQADD(h) Get R3; I32WrapI64; IQQDOT(h, 4); Get R3; I32WrapI64; V128Load $(16*(h)); I32x4Add; V128Store $0, $(16*(h))

// IQACTS runs body over the activations: R11 the activation's prepared
// block (from R1, by R15), R3 its lanes (from iacc, by 32), R13 counting.
#define IQACTS(body) \
	Get R1; Set R11; I64Load iacc+48(FP); Set R3; I64Load acts+72(FP); Set R13; \
	Loop; \
		body; \
		Get R11; Get R15; I64Add; Set R11; ADD(R3, 32); \
		COUNTDOWN(R13); \
	End

// IQFLOAT adds the block's lanes of every activation, times d = dx·yd, to
// its running sums, and moves R9 and R10 to the next block.
#define IQFLOAT \
	I64Load iacc+48(FP); Set R3; I64Load facc+56(FP); Set R12; Get R10; Set R14; I64Load acts+72(FP); Set R13; \
	Loop; \
		Get R9; I32WrapI64; F32Load $0; Get R14; I32WrapI64; F32Load $0; F32Mul; F32x4Splat; Set V1; \
		Get R12; I32WrapI64; \
		Get R12; I32WrapI64; V128Load $0; Get R3; I32WrapI64; V128Load $0; F32x4ConvertI32x4S; Get V1; F32x4Mul; F32x4Add; \
		V128Store $0, $0; \
		Get R12; I32WrapI64; \
		Get R12; I32WrapI64; V128Load $16; Get R3; I32WrapI64; V128Load $16; F32x4ConvertI32x4S; Get V1; F32x4Mul; F32x4Add; \
		V128Store $0, $16; \
		ADD(R3, 32); ADD(R12, 32); ADD(R14, 4); \
		COUNTDOWN(R13); \
	End; \
	ADD(R9, 4); \
	I64Load acts+72(FP); I64Const $2; I64Shl; Get R10; I64Add; Set R10

// IQSTART loads the arguments and the constants.
#define IQSTART \
	I64Load x+0(FP); Set R0; \
	I64Load yp+8(FP); Set R1; \
	I64Load yd+16(FP); Set R10; \
	I64Load dx+24(FP); Set R9; \
	I64Load grid+32(FP); Set R4; \
	I64Load ks+40(FP); Set R5; \
	I64Load nb+64(FP); Tee R2; I64Const $544; I64Mul; Set R15; \
	V128Const $0x0000000000000000, $0x0101010101010101; Set V0; \
	V128Const $0x8040201008040201, $0x8040201008040201; Set V4

// IQBLOCK is the loop over the blocks of size bytes: QUARTER(h, s) decodes
// half h of sub-blocks s..s+3 into V8..V15.
#define IQBLOCK(QUARTER, size) \
	Loop; \
		QUARTER(0, 0); IQACTS(IQFIRST(0)); \
		QUARTER(1, 0); IQACTS(IQFIRST(1)); \
		QUARTER(0, 4); IQACTS(IQADD(0)); \
		QUARTER(1, 4); IQACTS(IQADD(1)); \
		IQFLOAT; \
		ADD(R0, size); ADD(R1, 544); \
		COUNTDOWN(R2); \
	End

// SIGNED sets V7 to the 16 bytes pushed with those negated whose bit is
// set in the sign bytes of V2 that pat (V0) swizzles to them.
#define SIGNED(pat) \
	Set V7; \
	Get V2; Get pat; I8x16Swizzle; Get V4; V128And; Get V4; I8x16Eq; Set V6; \
	Get V7; Get V6; V128Xor; Get V6; I8x16Sub; Set V7

// MASKED sets V7 to the 16 bytes pushed with those negated where the
// mask V6 is set.
#define MASKED Set V7; Get V7; Get V6; V128Xor; Get V6; I8x16Sub; Set V7

// EO sets de and do to the even and odd bytes of V7 as int16 lanes times
// the scale sc.
#define EO(sc, de, do) \
	Get V7; I32Const $8; I16x8Shl; I32Const $8; I16x8ShrS; Get sc; I16x8Mul; Set de; \
	Get V7; I32Const $8; I16x8ShrS; Get sc; I16x8Mul; Set do

// SCALE pushes 2·(the 4 bits of r at sh)+1 in every int16 lane.
#define SCALE(r, sh) Get r; I64Const $(sh); I64ShrU; I64Const $15; I64And; I64Const $1; I64Shl; I64Const $1; I64Or; I32WrapI64; I16x8Splat

// KM pushes the address of the 8-byte sign mask of the 7-bit sign index
// of r at sh (iqSignMasks at R5).
#define KM(r, sh) Get r; I64Const $(sh); I64ShrU; I64Const $127; I64And; I64Const $3; I64Shl; Get R5; I64Add; I32WrapI64
// KM16 sets V6 to the sign masks of the indices of r at s0 and s1.
#define KM16(r, s0, s1) KM(r, s0); V128Load $0; KM(r, s1); I64Load $0; I64x2ReplaceLane $0, $1; Set V6

// GA pushes the address of the 8-byte (G8A) or 4-byte (G4A) grid point of
// the index pushed (i64). Grid tables are padded, so a v128.load of their
// last point stays in them.
#define G8A I64Const $3; I64Shl; Get R4; I64Add; I32WrapI64
#define G4A I64Const $2; I64Shl; Get R4; I64Add; I32WrapI64
// B pushes the byte at R0+off (i64).
#define B(off) Get R0; I32WrapI64; I64Load8U $(off)

// ---- IQ2_XXS ----
// XXS2H decodes half h of sub-block ib into de, do: grid indices at bytes
// 2+8ib+2h, 3+8ib+2h, signs and scale in the word at 6+8ib.
#define XXS2H(ib, h, de, do) \
	Get R0; I32WrapI64; I64Load32U $(6+8*(ib)); Set R6; \
	SCALE(R6, 28); Set V1; \
	KM16(R6, 14*(h), 14*(h)+7); \
	B(2+8*(ib)+2*(h)); G8A; V128Load $0; B(3+8*(ib)+2*(h)); G8A; I64Load $0; I64x2ReplaceLane $0, $1; MASKED; \
	EO(V1, de, do)
#define XXS2Q(h, s) XXS2H(s, h, V8, V9); XXS2H(s+1, h, V10, V11); XXS2H(s+2, h, V12, V13); XXS2H(s+3, h, V14, V15)

// func iq2XXSRowN(x, yp *byte, yd, dx *float32, grid, ks *byte, iacc *int32, facc *float32, nb, acts int)
// adds, for the row at x (nb ≥ 1 blocks) and each activation a < acts
// (≥ 1) prepared at yp, block j's eight lanes times dx[j]·yd[acts·j+a] to
// facc[8a..8a+7]; iacc holds 8·acts int32. grid is the format's padded
// grid (iqGrids), ks iqSignMasks.
TEXT ·iq2XXSRowN(SB), NOSPLIT, $0-80
	IQSTART
	IQBLOCK(XXS2Q, 66)
	RET

// ---- IQ2_XS ----
// XS2I pushes the grid index of group l (the 9 low bits of R6's uint16 l).
#define XS2I(l) Get R6; I64Const $(16*(l)); I64ShrU; I64Const $511; I64And
#define XS2H(ib, h, de, do) \
	Get R0; I32WrapI64; I64Load $(2+8*(ib)); Set R6; \
	B(66+(ib)); I32WrapI64; I32Const $(4*(h)); I32ShrU; I32Const $15; I32And; I32Const $1; I32Shl; I32Const $1; I32Or; I16x8Splat; Set V1; \
	KM16(R6, 32*(h)+9, 32*(h)+25); \
	XS2I(2*(h)); G8A; V128Load $0; XS2I(2*(h)+1); G8A; I64Load $0; I64x2ReplaceLane $0, $1; MASKED; \
	EO(V1, de, do)
#define XS2Q(h, s) XS2H(s, h, V8, V9); XS2H(s+1, h, V10, V11); XS2H(s+2, h, V12, V13); XS2H(s+3, h, V14, V15)

// func iq2XSRowN(x, yp *byte, yd, dx *float32, grid, ks *byte, iacc *int32, facc *float32, nb, acts int)
// is iq2XXSRowN for IQ2_XS.
TEXT ·iq2XSRowN(SB), NOSPLIT, $0-80
	IQSTART
	IQBLOCK(XS2Q, 74)
	RET

// ---- IQ2_S ----
// S2I pushes the grid index of group l of sub-block ib (qs byte 2+4ib+l,
// bits 2l, 2l+1 of qh, R7).
#define S2I(ib, l) B(2+4*(ib)+(l)); Get R7; I64Const $(2*(l)); I64ShrU; I64Const $3; I64And; I64Const $8; I64Shl; I64Or
#define S2H(ib, h, de, do) \
	B(66+(ib)); Set R7; \
	B(74+(ib)); I32WrapI64; I32Const $(4*(h)); I32ShrU; I32Const $15; I32And; I32Const $1; I32Shl; I32Const $1; I32Or; I16x8Splat; Set V1; \
	Get R0; I32WrapI64; I32Load16U $(34+4*(ib)+2*(h)); I32x4Splat; Set V2; \
	S2I(ib, 2*(h)); G8A; V128Load $0; S2I(ib, 2*(h)+1); G8A; I64Load $0; I64x2ReplaceLane $0, $1; SIGNED(V0); \
	EO(V1, de, do)
#define S2Q(h, s) S2H(s, h, V8, V9); S2H(s+1, h, V10, V11); S2H(s+2, h, V12, V13); S2H(s+3, h, V14, V15)

// func iq2SRowN(x, yp *byte, yd, dx *float32, grid, ks *byte, iacc *int32, facc *float32, nb, acts int)
// is iq2XXSRowN for IQ2_S (ks unused).
TEXT ·iq2SRowN(SB), NOSPLIT, $0-80
	IQSTART
	IQBLOCK(S2Q, 82)
	RET

// ---- IQ3_XXS ----
// XXS3V pushes the four 4-weight grid points at qs bytes o..o+3.
#define XXS3V(o) \
	B(o); G4A; V128Load $0; B(o+1); G4A; I32Load $0; I32x4ReplaceLane $0, $1; \
	B(o+2); G4A; I32Load $0; I32x4ReplaceLane $0, $2; B(o+3); G4A; I32Load $0; I32x4ReplaceLane $0, $3
#define XXS3H(ib, h, de, do) \
	Get R0; I32WrapI64; I64Load32U $(66+4*(ib)); Set R6; \
	SCALE(R6, 28); Set V1; \
	KM16(R6, 14*(h), 14*(h)+7); \
	XXS3V(2+8*(ib)+4*(h)); MASKED; \
	EO(V1, de, do)
#define XXS3Q(h, s) XXS3H(s, h, V8, V9); XXS3H(s+1, h, V10, V11); XXS3H(s+2, h, V12, V13); XXS3H(s+3, h, V14, V15)

// func iq3XXSRowN(x, yp *byte, yd, dx *float32, grid, ks *byte, iacc *int32, facc *float32, nb, acts int)
// is iq2XXSRowN for IQ3_XXS.
TEXT ·iq3XXSRowN(SB), NOSPLIT, $0-80
	IQSTART
	IQBLOCK(XXS3Q, 98)
	RET

// ---- IQ3_S ----
// S3I pushes the grid index of group k of sub-block ib: qs byte 2+8ib+k,
// bit 8 from qh (R7, shifted left by 8).
#define S3I(ib, k) B(2+8*(ib)+(k)); Get R7; I64Const $(k); I64ShrU; I64Const $256; I64And; I64Or
#define S3V(ib, k) \
	S3I(ib, k); G4A; V128Load $0; S3I(ib, (k)+1); G4A; I32Load $0; I32x4ReplaceLane $0, $1; \
	S3I(ib, (k)+2); G4A; I32Load $0; I32x4ReplaceLane $0, $2; S3I(ib, (k)+3); G4A; I32Load $0; I32x4ReplaceLane $0, $3
#define S3H(ib, h, de, do) \
	B(66+(ib)); I64Const $8; I64Shl; Set R7; \
	B(106+(ib)/2); I32WrapI64; I32Const $(4*((ib)%2)); I32ShrU; I32Const $15; I32And; I32Const $1; I32Shl; I32Const $1; I32Or; I16x8Splat; Set V1; \
	Get R0; I32WrapI64; I32Load16U $(74+4*(ib)+2*(h)); I32x4Splat; Set V2; \
	S3V(ib, 4*(h)); SIGNED(V0); \
	EO(V1, de, do)
#define S3Q(h, s) S3H(s, h, V8, V9); S3H(s+1, h, V10, V11); S3H(s+2, h, V12, V13); S3H(s+3, h, V14, V15)

// func iq3SRowN(x, yp *byte, yd, dx *float32, grid, ks *byte, iacc *int32, facc *float32, nb, acts int)
// is iq2XXSRowN for IQ3_S (ks unused).
TEXT ·iq3SRowN(SB), NOSPLIT, $0-80
	IQSTART
	IQBLOCK(S3Q, 110)
	RET

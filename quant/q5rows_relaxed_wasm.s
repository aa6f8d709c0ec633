//go:build goexperiment.simd && relaxedsimd

#include "textflag.h"
#include "simd_wasm.h"
#include "relaxed_wasm.h"

// The decoding's constants, in V9..V13 (CONSTS).
#define NIB Get V9
#define QHIDX0 Get V10
#define QHIDX1 Get V11
#define QHBITS Get V12
#define QH10 Get V13
#define CONSTS \
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; Set V9; \
	V128Const $0x0000000000000000, $0x0101010101010101; Set V10; \
	V128Const $0x0202020202020202, $0x0303030303030303; Set V11; \
	V128Const $0x8040201008040201, $0x8040201008040201; Set V12; \
	V128Const $0x1010101010101010, $0x1010101010101010; Set V13

#include "q5rows_wasm.h"

// The relaxed-SIMD DotRows and DotRowsN kernels of Q5_0, Q5_1 and Q4_1
// (q5rows_relaxed_wasm.go, driven by dotRowsQ5 and dotRowsNQ5 in
// q5rows_wasm.go), in ggml's x86 order as the SIMD128 kernels
// (q5rows_wasm.s): per block, int32 lane i of the two halves holds the
// products of weights 4i..4i+3 and 16+4i..16+4i+3, each lane added to its
// own float32 accumulator by a fused multiply-add with the block's d·dy.
//
// The lanes are one i32x4.relaxed_dot_i8x16_i7x16_add_s (RDOTADD) a half:
// the int8 activations as they are against the unsigned quants (0..15 or
// 0..31, in the i7 operand's range, so the dot is exact and the same on
// every engine), added to Q5_0's offsets -16·Σ y over the lane's four
// activations (prepared with the activation), which make the products
// (q-16)·y; zero for Q5_1 and Q4_1, whose min terms are summed apart.
// The fused multiply-adds are f32x4.relaxed_madd (MADDR): it is fused, so
// exactly fma32, where the engine fuses it (the relaxedsimd build is only
// chosen there), and the float32 conversion of a lane (|·| ≤ 4·31·128) is
// exact. The min terms m·s are added as in q5rows_wasm.s (MINF).
//
// The activation is prepared once per call (q5PrepRelaxed): per block 80
// bytes (blocks 16-byte aligned), its 32 int8 quants, Q5_0's eight int32
// offsets, then dy and s as float32. DotRowsN decodes the row once into
// wd (80 bytes a block: the quants of weights 0..15 and 16..31 as bytes,
// then dx and m as float32 at 64 and 68), then sums it against each
// activation.
//
// register use: R0 weight block, R1 decoded block (wd), R11 prepared
// activation block, R2 blocks left, R13 rows (activations) left, R3 the
// output, R12 the fp16 table; V1, V6 decoding scratch, V5, V7 the quants
// of weights 0..15 and 16..31, V2, V3 the lanes as float32, V8 d·dy (an
// f32x4 splat), V0, V4 the accumulators of lanes 0..3 and 4..7, F1 the min
// sum, V9..V13 the decoding's constants.

// MADDR is f32x4.relaxed_madd(a, b, c) on the stack (c on top): a·b + c,
// fused where the engine fuses it.
#define MADDR RELAXED(F32x4RelaxedMadd)

// PY and PW push the 16 bytes at R11+off and R1+off.
#define PY(off) Get R11; I32WrapI64; V128Load $(off)
#define PW(off) Get R1; I32WrapI64; V128Load $(off)

// OFFS pushes Q5_0's four offsets at R11+off; NOOFFS zero.
#define OFFS(off) PY(off)
#define NOOFFS(off) V128Const $0, $0

// FMA8R adds the lanes (pushed by lo and hi: lanes 0..3, 4..7) times d
// (pushed by d) to the accumulators by fused multiply-adds.
#define FMA8R(lo, hi, d) \
	lo; F32x4ConvertI32x4S; Set V2; \
	hi; F32x4ConvertI32x4S; Set V3; \
	d; F32x4Splat; Set V8; \
	Get V8; Get V2; Get V0; MADDR; Set V0; \
	Get V8; Get V3; Get V4; MADDR; Set V4

// ZACC zeroes the accumulators; STOREACC stores them at R3 as float32
// (lanes 0..7, then the min sum at +32).
#define ZACC \
	V128Const $0, $0; Set V0; V128Const $0, $0; Set V4; \
	I32Const $0; F32ReinterpretI32; Set F1
#define STOREACC \
	Get R3; I32WrapI64; Get V0; V128Store $0, $0; \
	Get R3; I32WrapI64; Get V4; V128Store $0, $16; \
	Get R3; I32WrapI64; Get F1; F32Store $32

// ROWSR(DEC, OFF, MIN, xsize) is the body of a DotRows kernel: for each of
// the rows (consecutive at x, blocks of xsize bytes) its nb blocks against
// the prepared activation at yp, into the row's 12 float32 at out.
#define ROWSR(DEC, OFF, MIN, xsize) \
	I64Load x+0(FP); Set R0; \
	I64Load out+40(FP); Set R3; \
	I64Load tab+16(FP); Set R12; \
	I64Load rows+32(FP); Set R13; \
	CONSTS; \
	Loop; \
		I64Load yp+8(FP); Set R11; \
		I64Load nb+24(FP); Set R2; \
		ZACC; \
		Loop; \
			DEC; \
			FMA8R(PY(0); Get V5; OFF(32); RDOTADD, PY(16); Get V7; OFF(48); RDOTADD, TABAT(R0, 0); DYAT; F32Mul); \
			MIN; \
			ADD(R0, xsize); \
			ADD(R11, 80); \
			COUNTDOWN(R2); \
		End; \
		STOREACC; \
		ADD(R3, 48); \
		COUNTDOWN(R13); \
	End

// ROWNR(DEC, DM, OFF, MIN, xsize) is the body of a DotRowsN kernel: the
// row at x decoded into wd, then its nb blocks against each of the k
// activations prepared one after the other at yp, into activation i's 12
// float32 at out+48i.
#define ROWNR(DEC, DM, OFF, MIN, xsize) \
	I64Load x+0(FP); Set R0; \
	I64Load wd+48(FP); Set R1; \
	I64Load tab+16(FP); Set R12; \
	I64Load nb+24(FP); Set R2; \
	CONSTS; \
	Loop; \
		DEC; \
		Get R1; I32WrapI64; Get V5; V128Store $0, $0; \
		Get R1; I32WrapI64; Get V7; V128Store $0, $16; \
		Get R1; I32WrapI64; TABAT(R0, 0); F32Store $64; \
		DM; \
		ADD(R0, xsize); \
		ADD(R1, 80); \
		COUNTDOWN(R2); \
	End; \
	I64Load yp+8(FP); Set R11; \
	I64Load out+40(FP); Set R3; \
	I64Load k+32(FP); Set R13; \
	Loop; \
		I64Load wd+48(FP); Set R1; \
		I64Load nb+24(FP); Set R2; \
		ZACC; \
		Loop; \
			FMA8R(PY(0); PW(0); OFF(32); RDOTADD, PY(16); PW(16); OFF(48); RDOTADD, Get R1; I32WrapI64; F32Load $64; DYAT; F32Mul); \
			MIN; \
			ADD(R1, 80); \
			ADD(R11, 80); \
			COUNTDOWN(R2); \
		End; \
		STOREACC; \
		ADD(R3, 48); \
		COUNTDOWN(R13); \
	End

// func q5PrepRelaxed(dst, src *byte, tab *float32, nb, ysize int)
// prepares the nb Q8_0 (ysize 34) or Q8_1 (36) activation blocks at src
// into 80 bytes each at dst: the 32 int8 quants (the last 32 bytes of a
// block), the eight int32 -16·Σ y over each four of them (Q5_0's offsets),
// then the float32 of the block's d and of the fp16 at 2 (Q8_1's s).
TEXT ·q5PrepRelaxed(SB), NOSPLIT, $0-40
	I64Load dst+0(FP); Set R11
	I64Load src+8(FP); Set R0
	I64Load tab+16(FP); Set R12
	I64Load nb+24(FP); Set R2
	I64Load ysize+32(FP); Set R3
	Block
	Get R2
	I64Eqz
	BrIf $0
	Loop
		Get R0; Get R3; I64Add; I64Const $32; I64Sub; Set R1
		Get R1; I32WrapI64; V128Load $0; Set V5
		Get R1; I32WrapI64; V128Load $16; Set V7
		Get R11; I32WrapI64; Get V5; V128Store $0, $0
		Get R11; I32WrapI64; Get V7; V128Store $0, $16
		Get R11; I32WrapI64; Get V5; I16x8ExtaddPairwiseI8x16S; I32x4ExtaddPairwiseI16x8S; I32Const $4; I32x4Shl; I32x4Neg; V128Store $0, $32
		Get R11; I32WrapI64; Get V7; I16x8ExtaddPairwiseI8x16S; I32x4ExtaddPairwiseI16x8S; I32Const $4; I32x4Shl; I32x4Neg; V128Store $0, $48
		Get R11; I32WrapI64; TABAT(R0, 0); F32Store $64
		Get R11; I32WrapI64; TABAT(R0, 2); F32Store $68
		Get R0; Get R3; I64Add; Set R0
		ADD(R11, 80)
		COUNTDOWN(R2)
	End
	End
	RET

// func q5_0RowsRelaxed(x, yp *byte, tab *float32, nb, rows int, out *float32)
// is the DotRows body for Q5_0 rows; nb, rows ≥ 1.
TEXT ·q5_0RowsRelaxed(SB), NOSPLIT, $0-48
	ROWSR(DEC5U(2, 6), OFFS, NOMIN, 22)
	RET

// func q5_1RowsRelaxed(x, yp *byte, tab *float32, nb, rows int, out *float32)
// is the DotRows body for Q5_1 rows.
TEXT ·q5_1RowsRelaxed(SB), NOSPLIT, $0-48
	ROWSR(DEC51, NOOFFS, MIND, 24)
	RET

// func q4_1RowsRelaxed(x, yp *byte, tab *float32, nb, rows int, out *float32)
// is the DotRows body for Q4_1 rows.
TEXT ·q4_1RowsRelaxed(SB), NOSPLIT, $0-48
	ROWSR(DEC41, NOOFFS, MIND, 20)
	RET

// func q5_0RowNRelaxed(x, yp *byte, tab *float32, nb, k int, out *float32, wd *byte)
// is the DotRowsN body for a Q5_0 row; nb, k ≥ 1.
TEXT ·q5_0RowNRelaxed(SB), NOSPLIT, $0-56
	ROWNR(DEC5U(2, 6), NODECM, OFFS, NOMIN, 22)
	RET

// func q5_1RowNRelaxed(x, yp *byte, tab *float32, nb, k int, out *float32, wd *byte)
// is the DotRowsN body for a Q5_1 row.
TEXT ·q5_1RowNRelaxed(SB), NOSPLIT, $0-56
	ROWNR(DEC51, DECM, NOOFFS, MINW, 24)
	RET

// func q4_1RowNRelaxed(x, yp *byte, tab *float32, nb, k int, out *float32, wd *byte)
// is the DotRowsN body for a Q4_1 row.
TEXT ·q4_1RowNRelaxed(SB), NOSPLIT, $0-56
	ROWNR(DEC41, DECM, NOOFFS, MINW, 20)
	RET

//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"
#include "q5rows_wasm.h"

// The wasm SIMD128 DotRows and DotRowsN kernels of Q5_0, Q5_1 and Q4_1
// (q5rows_wasm.go), summed in ggml's x86 order as q5_wasm.s sums them: per
// block, int32 lane i of the two halves holds the products of weights
// 4i..4i+3 and 16+4i..16+4i+3 (the quants split into even and odd int16
// lanes, i32x4.dot_i16x8_s against the activations split likewise), each
// lane added to its own float32 accumulator by a fused multiply-add with
// the block's d·dy; Q5_1's and Q4_1's min terms m·s go to their own sum,
// by a fused multiply-add each (MINF).
//
// The accumulators are kept as float64 lanes holding float32 values (four
// f64x2, lanes 0-1, 2-3, 4-5, 6-7), so a block's fused multiply-adds are,
// per pair of lanes, the exact product d·lane (f64x2), the float64 sum
// with the accumulators, and that sum rounded to float32 and back
// (f32x4.demote_f64x2_zero, f64x2.promote_low_f32x4): the fused
// multiply-add wherever the float64 sum is exact. A test per row (DotRows)
// or per row and activation (DotRowsN) on the blocks' scales, ROWRATIO,
// shows that every sum of the row is exact; there the blocks take this
// fast step (FMA8N) with no check. Elsewhere they take the checked step
// (FMA8C): a sum rounded to float64 can round to float32 differently from
// the exact p+a only where it is inexact and lies on a float32 midpoint
// (its 29 low bits 1<<28; the products and the accumulators are multiples
// of 2^-48, so a sum is 0 or at least 2^-48 in magnitude, never below
// float32's normals); where one of the block's eight sums does, all eight
// are redone exactly (simd_wasm.h's FMAHALF, as fma32).
//
// The activation is prepared once per call (q5Prep): per block 72 bytes,
// the even then the odd int16 of activations 0..15, then of 16..31, then
// dy and s as float32. DotRowsN decodes the row once into wd in the same
// shape (the weights' int16 quants, dx and m as float32), then sums it
// against each activation.
//
// register use: R0 weight block, R1 decoded block (wd), R11 prepared
// activation block, R2 blocks left, R13 rows (activations) left, R3 the
// output, R12 the fp16 table; V1, V6 decoding scratch, V5, V7 the int8
// quants of weights 0..15 and 16..31, V2, V3 the int32 lanes 0..3 and 4..7,
// V8 d·dy (an f64x2 splat), V9..V12 the float64 sums of the checked step,
// V13 its check, V5, V6 its scratch (V9..V13 FMAHALF's in the exact step),
// V0, V4, V14, V15 the accumulators of lanes 0-1, 2-3, 4-5, 6-7, F1 the min
// sum (float32); R4, R5 a row's scale stats (DXSTATS), R6 scratch, R7 the
// row's first block (DotRows) or the activations' ratios (DotRowsN), F17
// a ratio.

// PY pushes the 8 prepared int16 activations at R11+off.
#define PY(off) Get R11; I32WrapI64; V128Load $(off)
// PW pushes the 8 decoded int16 weights at R1+off.
#define PW(off) Get R1; I32WrapI64; V128Load $(off)

// LANESD sets V2, V3 to the lanes of the quants in V5, V7 against the
// prepared activation block; LANESW those of the decoded block at R1.
#define LANESD \
	EVEN(V5); PY(0); I32x4DotI16x8S; ODD(V5); PY(16); I32x4DotI16x8S; I32x4Add; Set V2; \
	EVEN(V7); PY(32); I32x4DotI16x8S; ODD(V7); PY(48); I32x4DotI16x8S; I32x4Add; Set V3
#define LANESW \
	PW(0); PY(0); I32x4DotI16x8S; PW(16); PY(16); I32x4DotI16x8S; I32x4Add; Set V2; \
	PW(32); PY(32); I32x4DotI16x8S; PW(48); PY(48); I32x4DotI16x8S; I32x4Add; Set V3

// DXDYW sets V8 to the f64x2 splat of float32(dx·dy), dx the decoded
// block's, dy the prepared activation block's (DYAT).
#define DXDYW Get R1; I32WrapI64; F32Load $64; DYAT; F32Mul; F64PromoteF32; F64x2Splat; Set V8

// LO and HI push lanes 0, 1 and 2, 3 of v in its low half.
#define LO(v) Get v
#define HI(v) Get v; HIHALF

// SUMN sets acc to the float32 of acc + d·lanes (half of the lanes): the
// fast step, exact where the float64 sum is (see ROWRATIO).
#define SUMN(half, lanes, acc) \
	half(lanes); F64x2ConvertLowI32x4S; Get V8; F64x2Mul; Get acc; F64x2Add; \
	F32x4DemoteF64x2Zero; F64x2PromoteLowF32x4; Set acc
// FMA8N adds the block's eight lanes times d to the accumulators (SUMN).
#define FMA8N SUMN(LO, V2, V0); SUMN(HI, V2, V4); SUMN(LO, V3, V14); SUMN(HI, V3, V15)

// SUMC sets s to the float64 sums acc + d·lanes (half of the lanes, the
// products in V5) and or-s into V13 where one is inexact (the sum less
// either term is not the other: by Fast2Sum the difference from the
// larger term is exact) and a float32 midpoint (V6 scratch).
#define SUMC(half, lanes, acc, s) \
	half(lanes); F64x2ConvertLowI32x4S; Get V8; F64x2Mul; Set V5; \
	Get V5; Get acc; F64x2Add; Set s; \
	Get s; Get acc; F64x2Sub; Get V5; F64x2Ne; \
	Get s; Get V5; F64x2Sub; Get acc; F64x2Ne; V128Or; \
	Get s; V128Const $0x1fffffff, $0x1fffffff; V128And; V128Const $0x10000000, $0x10000000; I64x2Eq; V128And; \
	Get V13; V128Or; Set V13
// EXACTF sets acc to the exact fused multiply-adds fma(d, lanes, acc) of
// half of the lanes (FMAHALF), as float32 values in float64.
#define EXACTF(half, lanes, acc) \
	half(lanes); F64x2ConvertLowI32x4S; Get V8; F64x2Mul; Set V9; Get acc; Set V10; \
	FMAHALF; F64x2PromoteLowF32x4; Set acc
// ROUNDF sets acc to the sums s rounded to float32.
#define ROUNDF(s, acc) Get s; F32x4DemoteF64x2Zero; F64x2PromoteLowF32x4; Set acc

// FMA8C adds the block's eight lanes times d to the accumulators, each by
// a fused multiply-add: the float64 sums rounded to float32, unless one is
// an inexact midpoint, then all eight exactly (EXACTF).
#define FMA8C \
	V128Const $0, $0; Set V13; \
	SUMC(LO, V2, V0, V9); SUMC(HI, V2, V4, V10); SUMC(LO, V3, V14, V11); SUMC(HI, V3, V15, V12); \
	Get V13; V128AnyTrue; \
	If; \
		EXACTF(LO, V2, V0); EXACTF(HI, V2, V4); EXACTF(LO, V3, V14); EXACTF(HI, V3, V15); \
	Else; \
		ROUNDF(V9, V0); ROUNDF(V10, V4); ROUNDF(V11, V14); ROUNDF(V12, V15); \
	End

// ZACC zeroes the accumulators; STOREACC stores them at R3 as float32
// (lanes 0..7, then the min sum at +32).
#define ZACC \
	V128Const $0, $0; Set V0; V128Const $0, $0; Set V4; \
	V128Const $0, $0; Set V14; V128Const $0, $0; Set V15; \
	I32Const $0; F32ReinterpretI32; Set F1
#define STOREACC STOREACCS(V0, V4, V14, V15, F1, 0)
#define STOREACCS(a0, a1, a2, a3, f, off) \
	Get R3; I32WrapI64; Get a0; F32x4DemoteF64x2Zero; Get a1; F32x4DemoteF64x2Zero; TOHIGH; V128Or; V128Store $0, $(off); \
	Get R3; I32WrapI64; Get a2; F32x4DemoteF64x2Zero; Get a3; F32x4DemoteF64x2Zero; TOHIGH; V128Or; V128Store $0, $(off+16); \
	Get R3; I32WrapI64; Get f; F32Store $(off+32)

// DXSTATS tracks the fp16 scales (bits in R6) of a row: R5 the largest
// |bits| (the largest |dx|), R4 the smallest |bits|-1 (unsigned: a zero
// scale's is 2^64-1), so R4+1 is the smallest nonzero |dx|'s bits.
#define DXSTATS \
	Get R6; I64Const $0x7fff; I64And; Set R6; \
	Get R6; Get R5; Get R6; Get R5; I64GtU; Select; Set R5; \
	Get R6; I64Const $1; I64Sub; Set R6; \
	Get R6; Get R4; Get R6; Get R4; I64LtU; Select; Set R4
#define STATS0 I64Const $0; Set R5; I64Const $-1; Set R4

// TABR32 pushes the float32 of the fp16 bits in r, TABR it as float64.
#define TABR32(r) Get R12; Get r; I64Const $2; I64Shl; I64Add; I32WrapI64; F32Load $0
#define TABR(r) TABR32(r); F64PromoteF32

// ROWRATIO pushes whether the fast step (FMA8N) is exact for a row with
// these scale stats (R4, R5) against an activation of ratio ry (an f64
// local): every d·dy and so every product and accumulator is a multiple of
// 2^(e-21), e the exponent of m = min|dx|·min|dy| (nonzero ones; fp16
// scales have 11 significant bits), and every float64 sum is below
// (1+2^-15)·2^14·max|dx|·Σ|dy| in magnitude (a lane is at most 4·31·128),
// so the sums are exact where that is below 2^53·2^(e-21) > 2^31·m, which
// holds where max|dx|·ry ≤ min|dx|·2^17·(1-2^-8), ry = Σ|dy|/min|dy|
// (rounding in this test is far below that margin; an infinite or NaN
// scale fails it).
#define ROWRATIO(ry) \
	TABR(R5); Get ry; F64Mul; \
	Get R4; I64Const $1; I64Add; Set R6; TABR(R6); F64Const $130560.0; F64Mul; \
	F64Le

// BLOCKSD(DEC, FMA, MIN, STATS, xsize) sums the row at R0 against the
// prepared activation at R11 (nb blocks) into the accumulators.
#define BLOCKSD(DEC, FMA, MIN, STATS, xsize) \
	I64Load yp+8(FP); Set R11; \
	I64Load nb+24(FP); Set R2; \
	ZACC; \
	Loop; \
		DEC; LANESD; \
		Get R0; I32WrapI64; I64Load16U $0; Set R6; \
		TABR32(R6); DYAT; F32Mul; F64PromoteF32; F64x2Splat; Set V8; \
		FMA; MIN; STATS; \
		ADD(R0, xsize); \
		ADD(R11, 72); \
		COUNTDOWN(R2); \
	End
#define NOSTATS

// ROWSF(DEC, MIN, xsize) is the body of a DotRows kernel: for each of the
// rows (consecutive at x, blocks of xsize bytes) its nb blocks against the
// prepared activation at yp (of ratio ry, see ROWRATIO) by the fast step,
// and again by the checked one (FMA8C) where ROWRATIO fails, into the
// row's 12 float32 at out.
#define ROWSF(DEC, MIN, xsize) \
	I64Load x+0(FP); Set R0; \
	I64Load out+40(FP); Set R3; \
	I64Load tab+16(FP); Set R12; \
	I64Load rows+32(FP); Set R13; \
	F64Load ry+48(FP); Set F17; \
	Loop; \
		Get R0; Set R7; \
		STATS0; \
		BLOCKSD(DEC, FMA8N, MIN, DXSTATS, xsize); \
		ROWRATIO(F17); I32Eqz; \
		If; \
			Get R7; Set R0; \
			BLOCKSD(DEC, FMA8C, MIN, NOSTATS, xsize); \
		End; \
		STOREACC; \
		ADD(R3, 48); \
		COUNTDOWN(R13); \
	End

// BLOCKSW(FMA, MIN) sums the decoded row (wd) against the prepared
// activation at R11 (nb blocks, R11 left past them) into the accumulators.
#define BLOCKSW(FMA, MIN) \
	I64Load wd+48(FP); Set R1; \
	I64Load nb+24(FP); Set R2; \
	ZACC; \
	Loop; \
		LANESW; DXDYW; FMA; MIN; \
		ADD(R1, 72); \
		ADD(R11, 72); \
		COUNTDOWN(R2); \
	End

// ROWNF(DEC, DM, MIN, xsize) is the body of a DotRowsN kernel: the row
// at x decoded into wd (72 bytes a block: the int16 quants, dx and m as
// float32; R4, R5 its scale stats), then its nb blocks against each of the
// k activations prepared one after the other at yp (ry[i] their ratios,
// SINGLEW), into activation i's 12 float32 at out+48i.
#define ROWNF(DEC, DM, MIN, xsize) \
	I64Load x+0(FP); Set R0; \
	I64Load wd+48(FP); Set R1; \
	I64Load tab+16(FP); Set R12; \
	I64Load nb+24(FP); Set R2; \
	STATS0; \
	Loop; \
		DEC; \
		Get R1; I32WrapI64; EVEN(V5); V128Store $0, $0; \
		Get R1; I32WrapI64; ODD(V5); V128Store $0, $16; \
		Get R1; I32WrapI64; EVEN(V7); V128Store $0, $32; \
		Get R1; I32WrapI64; ODD(V7); V128Store $0, $48; \
		Get R0; I32WrapI64; I64Load16U $0; Set R6; \
		Get R1; I32WrapI64; TABR32(R6); F32Store $64; \
		DXSTATS; \
		DM; \
		ADD(R0, xsize); \
		ADD(R1, 72); \
		COUNTDOWN(R2); \
	End; \
	I64Load yp+8(FP); Set R11; \
	I64Load out+40(FP); Set R3; \
	I64Load ry+56(FP); Set R7; \
	I64Load k+32(FP); Set R13; \
	Block; \
	Get R13; I64Eqz; BrIf $0; \
	Loop; \
		SINGLEW(MIN); \
		COUNTDOWN(R13); \
	End; \
	End

// SINGLEW(MIN) sums the decoded row against the activation at R11 (of
// ratio at R7) into the sums at R3 and moves past them: the fast step
// where ROWRATIO holds, else the checked one.
#define SINGLEW(MIN) \
	Get R7; I32WrapI64; F64Load $0; Set F17; \
	ROWRATIO(F17); \
	If; \
		BLOCKSW(FMA8N, MIN); \
	Else; \
		BLOCKSW(FMA8C, MIN); \
	End; \
	STOREACC; \
	ADD(R3, 48); \
	ADD(R7, 8)

// func q5Prep(dst, src *byte, tab *float32, nb, ysize int)
// prepares the nb Q8_0 (ysize 34) or Q8_1 (36) activation blocks at src
// into 72 bytes each at dst: the 32 int8 quants (the last 32 bytes of a
// block) split into the even then the odd int16 of 0..15, then of 16..31,
// then the float32 of the block's d and of the fp16 at 2 (Q8_1's s).
TEXT ·q5Prep(SB), NOSPLIT, $0-40
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
		Get R11; I32WrapI64; EVEN(V5); V128Store $0, $0
		Get R11; I32WrapI64; ODD(V5); V128Store $0, $16
		Get R11; I32WrapI64; EVEN(V7); V128Store $0, $32
		Get R11; I32WrapI64; ODD(V7); V128Store $0, $48
		Get R11; I32WrapI64; TABAT(R0, 0); F32Store $64
		Get R11; I32WrapI64; TABAT(R0, 2); F32Store $68
		Get R0; Get R3; I64Add; Set R0
		ADD(R11, 72)
		COUNTDOWN(R2)
	End
	End
	RET

// func q5_0RowsF(x, yp *byte, tab *float32, nb, rows int, out *float32, ry float64)
// is the DotRows body for Q5_0 rows; nb, rows ≥ 1.
TEXT ·q5_0RowsF(SB), NOSPLIT, $0-56
	ROWSF(DEC50, NOMIN, 22)
	RET

// func q5_1RowsF(x, yp *byte, tab *float32, nb, rows int, out *float32, ry float64)
// is the DotRows body for Q5_1 rows.
TEXT ·q5_1RowsF(SB), NOSPLIT, $0-56
	ROWSF(DEC51, MIND, 24)
	RET

// func q4_1RowsF(x, yp *byte, tab *float32, nb, rows int, out *float32, ry float64)
// is the DotRows body for Q4_1 rows.
TEXT ·q4_1RowsF(SB), NOSPLIT, $0-56
	ROWSF(DEC41, MIND, 20)
	RET

// func q5_0RowNF(x, yp *byte, tab *float32, nb, k int, out *float32, wd *byte, ry *float64)
// is the DotRowsN body for a Q5_0 row; nb, k ≥ 1.
TEXT ·q5_0RowNF(SB), NOSPLIT, $0-64
	ROWNF(DEC50, NODECM, NOMIN, 22)
	RET

// func q5_1RowNF(x, yp *byte, tab *float32, nb, k int, out *float32, wd *byte, ry *float64)
// is the DotRowsN body for a Q5_1 row.
TEXT ·q5_1RowNF(SB), NOSPLIT, $0-64
	ROWNF(DEC51, DECM, MINW, 24)
	RET

// func q4_1RowNF(x, yp *byte, tab *float32, nb, k int, out *float32, wd *byte, ry *float64)
// is the DotRowsN body for a Q4_1 row.
TEXT ·q4_1RowNF(SB), NOSPLIT, $0-64
	ROWNF(DEC41, DECM, MINW, 20)
	RET

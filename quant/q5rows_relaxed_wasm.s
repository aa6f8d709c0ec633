//go:build goexperiment.simd && relaxedsimd

#include "textflag.h"
#include "simd_wasm.h"
#include "relaxed_wasm.h"
#include "quads_wasm.h"

// The decoding's constants, in V9..V13 (CONSTS).
#define NIB Get V9
#define QHIDX0 Get V10
#define QHIDX1 Get V11
#define QHBITS Get V12
#define QH10 Get V13
#define QHSWIZZLE RELAXED(I8x16RelaxedSwizzle)
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
// (The relaxed dot's int16 pairs widened by i32x4.dot_i16x8_s with ones
// instead measured slower in Chromium on x86, AMD EPYC Zen 5: 11.1 against
// 8.8 GB/s for Q5_0's DotRows.)
// The fused multiply-adds are f32x4.relaxed_madd (RMADD): it is fused, so
// exactly fma32, where the engine fuses it (the relaxedsimd build is only
// chosen there), and the float32 conversion of a lane (|·| ≤ 4·31·128) is
// exact. The min terms m·s are added as in q5rows_wasm.s (MINF).
//
// DotRows prepares the activation once per call (q5PrepRelaxed): per
// block 80 bytes (blocks 16-byte aligned), its 32 int8 quants, Q5_0's
// eight int32 offsets, then dy and s as float32; it sums two rows at a
// time, decoding each row's blocks as they come (two rows measured 5-10%
// faster than one for Q4_1, as fast for Q5_0 and Q5_1: AMD EPYC Zen 5,
// Chromium). DotRowsN (ROWNQ, below) takes the activations four at a time.
//
// register use (DotRows): R0, R4 the two rows' weight blocks, R5 a row's
// bytes, R11 prepared activation block, R2 blocks left, R13 pairs of rows
// left, R3 the output, R12 the fp16 table; V1, V6 decoding scratch, V5, V7
// the quants of weights 0..15 and 16..31, V2, V3 the activation's, F3 its
// dy, V8 d·dy (an f32x4 splat), V0, V4 and V14, V15 the two rows'
// accumulators of lanes 0..3 and 4..7, F1 and F2 their min sums, V9..V13
// the decoding's constants.

// PY and PW push the 16 bytes at R11+off and R1+off.
#define PY(off) Get R11; I32WrapI64; V128Load $(off)
#define PW(off) Get R1; I32WrapI64; V128Load $(off)

// OFFS pushes Q5_0's four offsets at R11+off; NOOFFS zero.
#define OFFS(off) PY(off)
#define NOOFFS(off) V128Const $0, $0

// RBLK adds the block at R0 (DEC decodes it) against the activation block
// (its quants in V2, V3, dy in F3, the rest at R11) to the accumulators
// V0, V4 and F1 (MIN): the lanes converted to float32 and added by fused
// multiply-adds with d·dy (V8).
#define RBLK(DEC, OFF, MIN) \
	DEC; \
	TABAT(R0, 0); Get F3; F32Mul; F32x4Splat; Set V8; \
	Get V2; Get V5; OFF(32); RDOTADD; F32x4ConvertI32x4S; Get V8; Get V0; RMADD; Set V0; \
	Get V3; Get V7; OFF(48); RDOTADD; F32x4ConvertI32x4S; Get V8; Get V4; RMADD; Set V4; \
	MIN

// YBLK loads the activation block's quants into V2, V3 and dy into F3.
#define YBLK PY(0); Set V2; PY(16); Set V3; DYAT; Set F3

// SWAPS exchanges the two rows of a pair: their blocks (R0, R4) and
// accumulators (V0, V4, F1 and V14, V15, F2).
#define SWAPS \
	Get R0; Get R4; Set R0; Set R4; \
	Get V0; Get V14; Set V0; Set V14; \
	Get V4; Get V15; Set V4; Set V15; \
	Get F1; Get F2; Set F1; Set F2

// ZACC zeroes the accumulators; STOREACC stores them at R3 as float32
// (lanes 0..7, then the min sum at +32).
#define ZACC \
	V128Const $0, $0; Set V0; V128Const $0, $0; Set V4; \
	I32Const $0; F32ReinterpretI32; Set F1
#define STOREACC \
	Get R3; I32WrapI64; Get V0; V128Store $0, $0; \
	Get R3; I32WrapI64; Get V4; V128Store $0, $16; \
	Get R3; I32WrapI64; Get F1; F32Store $32

// ROWSR(DEC, OFF, MIN, xsize) is the body of a DotRows kernel: the rows
// (consecutive at x, blocks of xsize bytes) two at a time, each block of
// the activation at yp loaded once for both (RBLK for one, SWAPS, RBLK
// for the other, SWAPS: exchanging locals costs the compiled code
// nothing), then the last row of an odd count alone; each row's 12
// float32 at out.
#define ROWSR(DEC, OFF, MIN, xsize) \
	I64Load x+0(FP); Set R0; \
	I64Load out+40(FP); Set R3; \
	I64Load tab+16(FP); Set R12; \
	I64Load nb+24(FP); I64Const $(xsize); I64Mul; Set R5; \
	I64Load rows+32(FP); I64Const $1; I64ShrU; Set R13; \
	CONSTS; \
	Block; \
	Get R13; I64Eqz; BrIf $0; \
	Loop; \
		Get R0; Get R5; I64Add; Set R4; \
		I64Load yp+8(FP); Set R11; \
		I64Load nb+24(FP); Set R2; \
		ZACC; SWAPS; ZACC; SWAPS; \
		Loop; \
			YBLK; \
			RBLK(DEC, OFF, MIN); SWAPS; RBLK(DEC, OFF, MIN); SWAPS; \
			ADD(R0, xsize); \
			ADD(R4, xsize); \
			ADD(R11, 80); \
			COUNTDOWN(R2); \
		End; \
		STOREACC; ADD(R3, 48); SWAPS; STOREACC; ADD(R3, 48); \
		COUNTDOWN(R13); \
	End; \
	End; \
	I64Load rows+32(FP); I64Const $1; I64And; I64Eqz; I32Eqz; \
	If; \
		I64Load yp+8(FP); Set R11; \
		I64Load nb+24(FP); Set R2; \
		ZACC; \
		Loop; \
			YBLK; \
			RBLK(DEC, OFF, MIN); \
			ADD(R0, xsize); \
			ADD(R11, 80); \
			COUNTDOWN(R2); \
		End; \
		STOREACC; \
	End

// The DotRowsN kernels put four activations (a quad) in the four int32
// lanes of each vector, as relaxedn_wasm.s does, so that a block's lane k
// of the four is one vector: a prepared quad block (q5PrepQuadRelaxed)
// holds, for k = 0..7, the activations' bytes 4k..4k+3 in their lanes
// (128 bytes), their dy (float32) at QDY, and then Q8_1's s at QS (160
// bytes a block) or Q8_0's offsets, -16·Σ of each four bytes, at QOFF
// (288 bytes). The row is decoded once into wd: per block the quants
// 4k..4k+3 splat over the lanes (8 vectors), dx and m (float32) at 128 and
// 132. Per block and quad, lane k is RDOTADD of the quad's bytes with the
// splat quants (plus the offsets), converted to float32 and added to its
// accumulator by f32x4.relaxed_madd with dx·dy (a vector: the four
// activations' d); the min terms m·s (exact) added by f32x4.add. A quad
// takes two passes over its blocks, lanes 0..3 then 4..7 (QPASS): four
// accumulators leave V8 fewer registers to spill, and measured as fast as
// eight in one pass.
//
// register use (DotRowsN): R0 weight block, R1 decoded block, R11 quad
// block, R14 the quad's first block, R2 blocks left, R13 quads left, R3 the
// output, R12 the fp16 table; in the decoding V1, V5..V7 and V9..V13 as in
// DotRows and V0, V2..V4 the splat swizzles; in the sums V0..V3 the
// accumulators, V8 the min sums, V9 d.

#define QB50 288
#define QB51 160
#define QDY 128
#define QS 144
#define QOFF 160
#define WDB 144

// WSPL stores int32 lane i of v splat over a vector (mask: the swizzle
// that does it) at R1+off.
#define WSPL(v, mask, off) Get R1; I32WrapI64; Get v; Get mask; RELAXED(I8x16RelaxedSwizzle); V128Store $0, $(off)

// LANEQ adds lane k of the block times d (V9) to the quad's accumulator
// acc.
#define LANEQ(k, acc, OFF) \
	PY(16*(k)); PW(16*(k)); OFF(QOFF+16*(k)); RDOTADD; F32x4ConvertI32x4S; \
	Get V9; Get acc; RMADD; Set acc

// MINQ adds m·s of the quad to V8; NOMINQ (Q5_0) does nothing.
#define MINQ Get R1; I32WrapI64; F32Load $132; F32x4Splat; PY(QS); F32x4Mul; Get V8; F32x4Add; Set V8
#define NOMINQ

// DECMQ stores the float32 of the block's m at R1+132.
#define DECMQ Get R1; I32WrapI64; TABAT(R0, 2); F32Store $132

// QPASS sums lanes k0..k0+3 of the quad at R11 (its nb blocks, R11 left
// past them) into V0..V3, stored at R3+16k0, and (MIN) the min sums into
// V8.
#define QPASS(k0, OFF, MIN, qb) \
	I64Load wd+48(FP); Set R1; \
	I64Load nb+24(FP); Set R2; \
	V128Const $0, $0; Set V0; V128Const $0, $0; Set V1; V128Const $0, $0; Set V2; V128Const $0, $0; Set V3; \
	Loop; \
		Get R1; I32WrapI64; F32Load $128; F32x4Splat; PY(QDY); F32x4Mul; Set V9; \
		LANEQ(k0, V0, OFF); LANEQ(k0+1, V1, OFF); LANEQ(k0+2, V2, OFF); LANEQ(k0+3, V3, OFF); \
		MIN; \
		ADD(R1, WDB); \
		ADD(R11, qb); \
		COUNTDOWN(R2); \
	End; \
	Get R3; I32WrapI64; Get V0; V128Store $0, $(16*(k0)); \
	Get R3; I32WrapI64; Get V1; V128Store $0, $(16*(k0)+16); \
	Get R3; I32WrapI64; Get V2; V128Store $0, $(16*(k0)+32); \
	Get R3; I32WrapI64; Get V3; V128Store $0, $(16*(k0)+48)

// ROWNQ(DEC, DM, OFF, MIN, xsize, qb) is the body of a DotRowsN kernel:
// the row at x decoded into wd, then its nb blocks against each of the
// quads prepared one after the other at yp (qb bytes a block), quad q's
// sums stored at out+144q: the lane-k vectors (k = 0..7), then the min sums.
#define ROWNQ(DEC, DM, OFF, MIN, xsize, qb) \
	I64Load x+0(FP); Set R0; \
	I64Load wd+48(FP); Set R1; \
	I64Load tab+16(FP); Set R12; \
	I64Load nb+24(FP); Set R2; \
	CONSTS; \
	V128Const $0x0302010003020100, $0x0302010003020100; Set V0; \
	V128Const $0x0706050407060504, $0x0706050407060504; Set V2; \
	V128Const $0x0b0a09080b0a0908, $0x0b0a09080b0a0908; Set V3; \
	V128Const $0x0f0e0d0c0f0e0d0c, $0x0f0e0d0c0f0e0d0c; Set V4; \
	Loop; \
		DEC; \
		WSPL(V5, V0, 0); WSPL(V5, V2, 16); WSPL(V5, V3, 32); WSPL(V5, V4, 48); \
		WSPL(V7, V0, 64); WSPL(V7, V2, 80); WSPL(V7, V3, 96); WSPL(V7, V4, 112); \
		Get R1; I32WrapI64; TABAT(R0, 0); F32Store $128; \
		DM; \
		ADD(R0, xsize); \
		ADD(R1, WDB); \
		COUNTDOWN(R2); \
	End; \
	I64Load yp+8(FP); Set R11; \
	I64Load out+40(FP); Set R3; \
	I64Load quads+32(FP); Set R13; \
	Loop; \
		Get R11; Set R14; \
		V128Const $0, $0; Set V8; \
		QPASS(0, OFF, MIN, qb); \
		Get R14; Set R11; \
		QPASS(4, OFF, NOMINQ, qb); \
		Get R3; I32WrapI64; Get V8; V128Store $0, $128; \
		ADD(R3, 144); \
		COUNTDOWN(R13); \
	End

// PG stores the gathered bytes 4k..4k+3 of the quad's blocks (at R4..R7,
// the quants at yoff) at R0+16k, and (OFFST) Q8_0's offsets at QOFF+16k.
#define PG(yoff, k, OFFST) GATHER(yoff+4*(k)); Get R0; I32WrapI64; Get V1; V128Store $0, $(16*(k)); OFFST(k)
#define OFFST(k) Get R0; I32WrapI64; Get V1; I16x8ExtaddPairwiseI8x16S; I32x4ExtaddPairwiseI16x8S; I32Const $4; I32x4Shl; I32x4Neg; V128Store $0, $(QOFF+16*(k))
#define NOOFFST(k)

// QUAD4 stores the float32 of the fp16 at off of the quad's four blocks
// at R0+dst.
#define QUAD4(off, dst) \
	Get R0; I32WrapI64; \
	TABAT(R4, off); F32x4Splat; TABAT(R5, off); F32x4ReplaceLane $0, $1; \
	TABAT(R6, off); F32x4ReplaceLane $0, $2; TABAT(R7, off); F32x4ReplaceLane $0, $3; \
	V128Store $0, $(dst)
#define SST QUAD4(2, QS)
#define NOSST

// PREPQ prepares the nb blocks (ysize bytes, the quants at yoff) of the
// quad into quad blocks of qb bytes.
#define PREPQ(ysize, yoff, qb, OFFST, SST) \
	Loop; \
		PG(yoff, 0, OFFST); PG(yoff, 1, OFFST); PG(yoff, 2, OFFST); PG(yoff, 3, OFFST); \
		PG(yoff, 4, OFFST); PG(yoff, 5, OFFST); PG(yoff, 6, OFFST); PG(yoff, 7, OFFST); \
		QUAD4(0, QDY); \
		SST; \
		ADD(R0, qb); \
		ADD(R4, ysize); ADD(R5, ysize); ADD(R6, ysize); ADD(R7, ysize); \
		COUNTDOWN(R2); \
	End

// func q5PrepQuadRelaxed(dst *byte, ys *[4]*byte, tab *float32, nb, ysize int)
// prepares the nb Q8_0 (ysize 34) or Q8_1 (36) blocks of the four
// activations at ys[0..3] into nb quad blocks (288 or 160 bytes) at dst;
// nb ≥ 1.
TEXT ·q5PrepQuadRelaxed(SB), NOSPLIT, $0-40
	I64Load dst+0(FP); Set R0
	I64Load ys+8(FP); Set R1
	Get R1; I32WrapI64; I64Load $0; Set R4
	Get R1; I32WrapI64; I64Load $8; Set R5
	Get R1; I32WrapI64; I64Load $16; Set R6
	Get R1; I32WrapI64; I64Load $24; Set R7
	I64Load tab+16(FP); Set R12
	I64Load nb+24(FP); Set R2
	I64Load ysize+32(FP)
	I64Const $34
	I64Eq
	If
		PREPQ(34, 2, QB50, OFFST, NOSST)
	Else
		PREPQ(36, 4, QB51, NOOFFST, SST)
	End
	RET

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

// func q5_0RowNRelaxed(x, yp *byte, tab *float32, nb, quads int, out *float32, wd *byte)
// is the DotRowsN body for a Q5_0 row against quads (1..4) quads
// prepared by q5PrepQuadRelaxed; nb ≥ 1.
TEXT ·q5_0RowNRelaxed(SB), NOSPLIT, $0-56
	ROWNQ(DEC5U(2, 6), NODECM, OFFS, NOMINQ, 22, QB50)
	RET

// func q5_1RowNRelaxed(x, yp *byte, tab *float32, nb, quads int, out *float32, wd *byte)
// is the DotRowsN body for a Q5_1 row.
TEXT ·q5_1RowNRelaxed(SB), NOSPLIT, $0-56
	ROWNQ(DEC51, DECMQ, NOOFFS, MINQ, 24, QB51)
	RET

// func q4_1RowNRelaxed(x, yp *byte, tab *float32, nb, quads int, out *float32, wd *byte)
// is the DotRowsN body for a Q4_1 row.
TEXT ·q4_1RowNRelaxed(SB), NOSPLIT, $0-56
	ROWNQ(DEC41, DECMQ, NOOFFS, MINQ, 20, QB51)
	RET

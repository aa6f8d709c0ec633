//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"
#include "lanes8_wasm.h"

// The wasm SIMD128 DotRows and DotRowsN kernels of TQ2_0
// (dotRowsTQ2_0SIMD128, dotRowsNTQ2_0SIMD128 in tq2_0_wasm.go) and of
// TQ1_0 (the same in tq1_0_wasm.go, its trits as described below), the
// activations prepared by splitQ8_K (dotrows_wasm.s: for every 16 int8
// activations, their even and then their odd bytes as int16 lanes).
// (Every macro comes before the first TEXT: go vet reads the arguments a
// macro names as those of the function above it.)
//
// A vector of 16 quant bytes is read as eight int16 lanes: lane i holds
// bytes 2i and 2i+1, so a shift and the mask 3 give the 2-bit trits t of
// weights 2i (even) and 2i+1 (odd) of one run of 32 weights, in the
// order of the prepared activations, and i32x4.dot_i16x8_s of the even
// trits with the even activations plus that of the odd ones gives, in
// int32 lane L, Σ t·y over positions 4L..4L+3 of the 16 weights: lanes
// 0-3 of the reference (dotTQ2_0Ref) from the first 16 quant bytes of a
// half-block, lanes 4-7 from the last 16. Added over the eight runs (at
// most 32·3·128 a lane in magnitude), minus the pair sums of the activation's
// block sums, they are the reference's exact int32 lanes. The float part
// is the reference's, in two float32x4 running sums per row:
// float32(lane)·(yd·d) rounded, then added, block by block in order; at
// the end laneSum8's order.

// TR pushes the trits of the int16 lanes of q shifted right by sh (sh <
// 14; V0 the int16 mask 3); TR0 those unshifted, TR14 those of the top
// two bits.
#define TR(q, sh) Get q; I32Const $(sh); I16x8ShrU; Get V0; V128And
#define TR0(q) Get q; Get V0; V128And
#define TR14(q) Get q; I32Const $14; I16x8ShrU

// HALF adds to acc the dots of the trits pushed by te (even weights) and
// to (odd weights) with the prepared activations at R1+p.
#define HALF(acc, te, to, p) \
	te; PY(p); I32x4DotI16x8S; \
	to; PY(p+16); I32x4DotI16x8S; I32x4Add; \
	Get acc; I32x4Add; Set acc

// RUNS adds to V1 (lanes 0-3) and V2 (lanes 4-7) the four runs of
// half-block h, its quants in qa (bytes 0-15) and qb (16-31), prepared
// activations from p.
#define RUNS(qa, qb, p) \
	HALF(V1, TR0(qa), TR(qa, 8), p); HALF(V2, TR0(qb), TR(qb, 8), p+32); \
	HALF(V1, TR(qa, 2), TR(qa, 10), p+64); HALF(V2, TR(qb, 2), TR(qb, 10), p+96); \
	HALF(V1, TR(qa, 4), TR(qa, 12), p+128); HALF(V2, TR(qb, 4), TR(qb, 12), p+160); \
	HALF(V1, TR(qa, 6), TR14(qa), p+192); HALF(V2, TR(qb, 6), TR14(qb), p+224)

// LOADQ sets V3..V6 to the 64 quant bytes of the block at R0.
#define LOADQ \
	Get R0; I32WrapI64; V128Load $0; Set V3; \
	Get R0; I32WrapI64; V128Load $16; Set V4; \
	Get R0; I32WrapI64; V128Load $32; Set V5; \
	Get R0; I32WrapI64; V128Load $48; Set V6

// SCALEADD adds float32(lanes)·V9, rounded, to the running sums acc: the
// pushed int32 lanes less the pair sums of the int16 block sums pushed by
// bs.
#define SCALEADD(bs, acc) \
	bs; I32x4ExtaddPairwiseI16x8S; I32x4Sub; \
	F32x4ConvertI32x4S; Get V9; F32x4Mul; Get acc; F32x4Add; Set acc

// ---- DotRowsN (tq2RowsN) ----
// A weight block is decoded 64 weights at a time (two runs of a
// half-block) into eight int16 trit vectors that stay in registers, then
// dotted with every prepared activation; each activation's int32 lanes
// 0-3, 4-7 of the block are accumulated in acc, then its float part is
// done in its float32 running sums (also in acc, after the int32 lanes).
//
// register use (tq2RowsN):
//	R0 the weight block (rows are consecutive), R1 block j of the first
//	prepared activation, R2 blocks left in the row, R3 an activation's
//	accumulators, R4 the fp16 table, R5 the activations' scales of block
//	j, R6 rows left, R11 an activation's prepared block, R13 activations
//	left, R14 the output, R15 the prepared activations' stride; V0 the
//	int16 mask 3, V1 the block's d, V2, V3 a half-block's quants, V4..V7
//	scratch, V8..V15 the trits of 64 weights.

// BLOCKN adds every activation's float part of the block: its lanes less
// the pair sums of its block sums (prepared at 512), float32, times
// yd·d (yd at R5, then the next activation's), rounded, added to its
// running sums at R3+32, R3+48.
#define BLOCKN \
	Get R3; I32WrapI64; V128Load $0; PA(512); I32x4ExtaddPairwiseI16x8S; I32x4Sub; F32x4ConvertI32x4S; \
	Get R5; I32WrapI64; F32Load $0; F32x4Splat; Get V1; F32x4Mul; Set V6; \
	Get V6; F32x4Mul; Get R3; I32WrapI64; V128Load $32; F32x4Add; Set V4; \
	Get R3; I32WrapI64; Get V4; V128Store $0, $32; \
	Get R3; I32WrapI64; V128Load $16; PA(528); I32x4ExtaddPairwiseI16x8S; I32x4Sub; F32x4ConvertI32x4S; \
	Get V6; F32x4Mul; Get R3; I32WrapI64; V128Load $48; F32x4Add; Set V4; \
	Get R3; I32WrapI64; Get V4; V128Store $0, $48; \
	ADD(R5, 4)

// ROWENDN stores laneSum8 of every activation's running sums at R14 (one
// float32 each, then the next row's) and zeroes them.
#define ROWENDN \
	Get R3; I32WrapI64; V128Load $32; Set V6; Get R3; I32WrapI64; V128Load $48; Set V7; \
	Get R14; I32WrapI64; LANESUM8(V6, V7); F32Store $0; ADD(R14, 4); \
	Get R3; I32WrapI64; V128Const $0, $0; V128Store $0, $32; \
	Get R3; I32WrapI64; V128Const $0, $0; V128Store $0, $48

// ---- TQ1_0 (tq1Rows, tq1RowsN) ----
// The bytes of a vector of quants are split into int16 lanes, the even
// ones (the mask 0xff) and the odd ones (a shift by 8): e. Trit n of a
// byte q is (uint8(q·3ⁿ)·3) >> 8 (tq1_0.go), so from e = uint8(q·3ⁿ),
// m = 3e (at most 765) gives the trit, m >> 8, and the next e, m & 0xff.
// Weight order is as in TQ2_0: trit n of qs[0..15] and qs[16..31] are
// weights 32n..32n+31, lanes 0-3 and 4-7 of the reference; trit n of
// qs[32..47] weights 160+16n..+15, lanes 0-3 for even n, 4-7 for odd; the
// 16 trits of qh weights 240..255, lanes 4-7: lane i of the word qh
// splat to every int32 lane holds qh[2(i%2)] | qh[2(i%2)+1] << 8, and
// multiplied by 3^(i/2) (V11 or V6) it gives the even and odd e of trit
// i/2 of bytes 2(i%2) and 2(i%2)+1: the weights 240+2i and 240+2i+1.

// TRIT pushes the trits of the e in v and sets v to the next e (k3 the
// int16 3s, V0 the int16 mask 0xff); TRITL only pushes them.
#define TRIT(v, k3) Get v; Get k3; I16x8Mul; Set v; Get v; I32Const $8; I16x8ShrU; Get v; Get V0; V128And; Set v
#define TRITL(v, k3) Get v; Get k3; I16x8Mul; I32Const $8; I16x8ShrU

// SPLITQ sets e, o to the even and odd e of the 16 quant bytes at R0+off.
#define SPLITQ(off, e, o) \
	Get R0; I32WrapI64; V128Load $(off); Set e; \
	Get e; I32Const $8; I16x8ShrU; Set o; \
	Get e; Get V0; V128And; Set e

// QH sets e, o to the even and odd e of qh's trits (bytes 48..51 of the
// block at R0; pw the int16 powers of 3, 1 1 3 3 9 9 27 27).
#define QH(e, o, pw) \
	Get R0; I32WrapI64; I32Load $48; I32x4Splat; Set e; \
	Get e; I32Const $8; I16x8ShrU; Get pw; I16x8Mul; Get V0; V128And; Set o; \
	Get e; Get pw; I16x8Mul; Get V0; V128And; Set e

// register use (tq1Rows): as tq2Rows, V0 the int16 mask 0xff, V3..V6 the
// e of two quant vectors, V11 the powers of 3 of QH, V15 the int16 3s.

// register use (tq2Rows):
//	R0 the weight block (rows are consecutive), R1 the prepared
//	activation block, R2 the activation block (its block sums), R3 its
//	float32 scale in yd, R4 the fp16 table, R5 blocks left in the row,
//	R13 rows left, R14 the output; V0 the int16 mask 3, V1, V2 the
//	block's int32 lanes 0-3, 4-7, V3..V6 its quants, V7, V8 the row's
//	running sums 0-3, 4-7, V9 the block's d, V10 scratch.

// TQROWS(consts, block, doff, size) is the body of tq2Rows and tq1Rows:
// consts sets the format's constants, block adds a weight block's int32
// lanes to V1 and V2 (zeroed for it), doff is the byte offset of the
// block's fp16 d and size the block's bytes.
#define TQROWS(consts, block, doff, size) \
	I64Load x+0(FP); Set R0; \
	I64Load tab+32(FP); Set R4; \
	I64Load rows+48(FP); Set R13; \
	I64Load out+56(FP); Set R14; \
	consts; \
	Loop; \
		I64Load yp+8(FP); Set R1; \
		I64Load y+16(FP); Set R2; \
		I64Load yd+24(FP); Set R3; \
		I64Load nb+40(FP); Set R5; \
		V128Const $0, $0; Set V7; \
		V128Const $0, $0; Set V8; \
		Loop; \
			V128Const $0, $0; Set V1; \
			V128Const $0, $0; Set V2; \
			block; \
			Get R3; I32WrapI64; F32Load $0; DXTAB(doff); F32Mul; F32x4Splat; Set V9; \
			Get V1; SCALEADD(Get R2; I32WrapI64; V128Load $260, V7); \
			Get V2; SCALEADD(Get R2; I32WrapI64; V128Load $276, V8); \
			ADD(R0, size); \
			ADD(R1, 544); \
			ADD(R2, 292); \
			ADD(R3, 4); \
			COUNTDOWN(R5); \
		End; \
		Get R14; I32WrapI64; LANESUM8(V7, V8); F32Store $0; \
		ADD(R14, 4); \
		COUNTDOWN(R13); \
	End

// TQ2CONSTS and TQ2BLOCK are tq2Rows's; TQ1CONSTS and TQ1BLOCK tq1Rows's.
#define TQ2CONSTS V128Const $0x0003000300030003, $0x0003000300030003; Set V0
#define TQ2BLOCK LOADQ; RUNS(V3, V4, 0); RUNS(V5, V6, 256)
#define TQ1CONSTS \
	V128Const $0x00ff00ff00ff00ff, $0x00ff00ff00ff00ff; Set V0; \
	V128Const $0x0003000300010001, $0x001b001b00090009; Set V11; \
	V128Const $0x0003000300030003, $0x0003000300030003; Set V15
#define TQ1BLOCK \
	SPLITQ(0, V3, V4); \
	SPLITQ(16, V5, V6); \
	HALF(V1, TRIT(V3, V15), TRIT(V4, V15), 0); HALF(V2, TRIT(V5, V15), TRIT(V6, V15), 32); \
	HALF(V1, TRIT(V3, V15), TRIT(V4, V15), 64); HALF(V2, TRIT(V5, V15), TRIT(V6, V15), 96); \
	HALF(V1, TRIT(V3, V15), TRIT(V4, V15), 128); HALF(V2, TRIT(V5, V15), TRIT(V6, V15), 160); \
	HALF(V1, TRIT(V3, V15), TRIT(V4, V15), 192); HALF(V2, TRIT(V5, V15), TRIT(V6, V15), 224); \
	HALF(V1, TRITL(V3, V15), TRITL(V4, V15), 256); HALF(V2, TRITL(V5, V15), TRITL(V6, V15), 288); \
	SPLITQ(32, V3, V4); \
	HALF(V1, TRIT(V3, V15), TRIT(V4, V15), 320); HALF(V2, TRIT(V3, V15), TRIT(V4, V15), 352); \
	HALF(V1, TRIT(V3, V15), TRIT(V4, V15), 384); HALF(V2, TRIT(V3, V15), TRIT(V4, V15), 416); \
	HALF(V1, TRITL(V3, V15), TRITL(V4, V15), 448); \
	QH(V3, V4, V11); \
	HALF(V2, TRITL(V3, V15), TRITL(V4, V15), 480)

// TQ2PREN, TQ2BLOCKN, TQ1PREN and TQ1BLOCKN are tq2RowsN's and tq1RowsN's
// constants and blocks (ROWSN8, lanes8_wasm.h).
#define TQ2BLOCKN \
	Get R0; I32WrapI64; V128Load $0; Set V2; \
	Get R0; I32WrapI64; V128Load $16; Set V3; \
	TRITS2(TR0(V2), TR(V2, 8), TR0(V3), TR(V3, 8), TR(V2, 2), TR(V2, 10), TR(V3, 2), TR(V3, 10)); \
	ACTSN(64, FIRSTN(0)); \
	TRITS2(TR(V2, 4), TR(V2, 12), TR(V3, 4), TR(V3, 12), TR(V2, 6), TR14(V2), TR(V3, 6), TR14(V3)); \
	ACTSN(64, ADDN(128)); \
	Get R0; I32WrapI64; V128Load $32; Set V2; \
	Get R0; I32WrapI64; V128Load $48; Set V3; \
	TRITS2(TR0(V2), TR(V2, 8), TR0(V3), TR(V3, 8), TR(V2, 2), TR(V2, 10), TR(V3, 2), TR(V3, 10)); \
	ACTSN(64, ADDN(256)); \
	TRITS2(TR(V2, 4), TR(V2, 12), TR(V3, 4), TR(V3, 12), TR(V2, 6), TR14(V2), TR(V3, 6), TR14(V3)); \
	ACTSN(64, ADDN(384)); \
	DXTAB(64); F32x4Splat; Set V1; \
	ACTSN(64, BLOCKN)
#define TQ2PREN \
	V128Const $0x0003000300030003, $0x0003000300030003; Set V0
#define TQ1BLOCKN \
	V128Const $0x0003000300030003, $0x0003000300030003; Set V1; \
	SPLITQ(0, V2, V3); \
	SPLITQ(16, V6, V7); \
	TRITS2(TRIT(V2, V1), TRIT(V3, V1), TRIT(V6, V1), TRIT(V7, V1), TRIT(V2, V1), TRIT(V3, V1), TRIT(V6, V1), TRIT(V7, V1)); \
	ACTSN(64, FIRSTN(0)); \
	TRITS2(TRIT(V2, V1), TRIT(V3, V1), TRIT(V6, V1), TRIT(V7, V1), TRIT(V2, V1), TRIT(V3, V1), TRIT(V6, V1), TRIT(V7, V1)); \
	ACTSN(64, ADDN(128)); \
	TRITL(V2, V1); Set V8; TRITL(V3, V1); Set V9; TRITL(V6, V1); Set V10; TRITL(V7, V1); Set V11; \
	SPLITQ(32, V2, V3); \
	TRIT(V2, V1); Set V12; TRIT(V3, V1); Set V13; TRIT(V2, V1); Set V14; TRIT(V3, V1); Set V15; \
	ACTSN(64, ADDN(256)); \
	V128Const $0x0003000300010001, $0x001b001b00090009; Set V4; \
	QH(V6, V7, V4); \
	TRITS2(TRIT(V2, V1), TRIT(V3, V1), TRIT(V2, V1), TRIT(V3, V1), TRITL(V2, V1), TRITL(V3, V1), TRITL(V6, V1), TRITL(V7, V1)); \
	ACTSN(64, ADDN(384)); \
	DXTAB(52); F32x4Splat; Set V1; \
	ACTSN(64, BLOCKN)
#define TQ1PREN \
	V128Const $0x00ff00ff00ff00ff, $0x00ff00ff00ff00ff; Set V0

// func tq2Rows(x, yp, y *byte, yd, tab *float32, nb, rows int, out *float32)
// sets out[r] to dotTQ2_0Ref of row r of x (rows ≥ 1 rows of nb ≥ 1
// blocks, consecutive) and the activation y, prepared at yp, its block
// scales in yd; tab is fp16ToFP32Table.
TEXT ·tq2Rows(SB), NOSPLIT, $0-64
	TQROWS(TQ2CONSTS, TQ2BLOCK, 64, 66)
	RET

// func tq2RowsN(x, yp *byte, yd *float32, tab *float32, acc *int32, nb, rows, acts int, out *float32)
// sets out[acts*r+a] to dotTQ2_0Ref of row r of x (rows ≥ 1 rows of nb ≥
// 1 blocks, consecutive) and activation a < acts (acts ≥ 1), prepared at
// yp one after the other (nb·544 bytes each), its block scales at
// yd[acts*j+a]; tab is fp16ToFP32Table; acc holds 16·acts int32, the
// last 8 of each zero.
TEXT ·tq2RowsN(SB), NOSPLIT, $0-72
	ROWSN8(TQ2PREN, TQ2BLOCKN, 66, 64, ROWENDN)
	RET

// func tq1Rows(x, yp, y *byte, yd, tab *float32, nb, rows int, out *float32)
// is tq2Rows for TQ1_0 (dotTQ1_0Ref).
TEXT ·tq1Rows(SB), NOSPLIT, $0-64
	TQROWS(TQ1CONSTS, TQ1BLOCK, 52, 54)
	RET

// func tq1RowsN(x, yp *byte, yd *float32, tab *float32, acc *int32, nb, rows, acts int, out *float32)
// is tq2RowsN for TQ1_0 (dotTQ1_0Ref); V0 the int16 mask 0xff, V1 the
// int16 3s until the block's d, V2, V3, V6, V7 the e of quant vectors.
TEXT ·tq1RowsN(SB), NOSPLIT, $0-72
	ROWSN8(TQ1PREN, TQ1BLOCKN, 54, 64, ROWENDN)
	RET

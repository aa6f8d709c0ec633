//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"

// The wasm SIMD128 DotRows and DotRowsN kernels of TQ2_0
// (dotRowsTQ2_0SIMD128, dotRowsNTQ2_0SIMD128 in tq2_0_wasm.go), the
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
// most 8·32·3·128 in magnitude), minus the pair sums of the activation's
// block sums, they are the reference's exact int32 lanes. The float part
// is the reference's, in two float32x4 running sums per row:
// float32(lane)·(yd·d) rounded, then added, block by block in order; at
// the end laneSum8's order.

// PY pushes the 8 prepared int16 activations at R1+off.
#define PY(off) Get R1; I32WrapI64; V128Load $(off)

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

// DXTAB pushes the float32 of the block's fp16 d (byte 64 of the block at
// R0), through the table at R4.
#define DXTAB Get R4; Get R0; I32WrapI64; I64Load16U $64; I64Const $2; I64Shl; I64Add; I32WrapI64; F32Load $0

// SCALEADD adds float32(lanes)·V9, rounded, to the running sums acc: the
// pushed int32 lanes less the pair sums of the int16 block sums pushed by
// bs.
#define SCALEADD(bs, acc) \
	bs; I32x4ExtaddPairwiseI16x8S; I32x4Sub; \
	F32x4ConvertI32x4S; Get V9; F32x4Mul; Get acc; F32x4Add; Set acc

// LANESUM8 pushes laneSum8 of the running sums lo, hi (V10 scratch).
#define LANESUM8(lo, hi) \
	Get lo; Get hi; F32x4Add; Set V10; \
	Get V10; F32x4ExtractLane $0, $0; Get V10; F32x4ExtractLane $0, $2; F32Add; \
	Get V10; F32x4ExtractLane $0, $1; Get V10; F32x4ExtractLane $0, $3; F32Add; \
	F32Add

// register use (tq2Rows):
//	R0 the weight block (rows are consecutive), R1 the prepared
//	activation block, R2 the activation block (its block sums), R3 its
//	float32 scale in yd, R4 the fp16 table, R5 blocks left in the row,
//	R13 rows left, R14 the output; V0 the int16 mask 3, V1, V2 the
//	block's int32 lanes 0-3, 4-7, V3..V6 its quants, V7, V8 the row's
//	running sums 0-3, 4-7, V9 the block's d, V10 scratch.

// func tq2Rows(x, yp, y *byte, yd, tab *float32, nb, rows int, out *float32)
// sets out[r] to dotTQ2_0Ref of row r of x (rows ≥ 1 rows of nb ≥ 1
// blocks, consecutive) and the activation y, prepared at yp, its block
// scales in yd; tab is fp16ToFP32Table.
TEXT ·tq2Rows(SB), NOSPLIT, $0-64
	I64Load x+0(FP); Set R0
	I64Load tab+32(FP); Set R4
	I64Load rows+48(FP); Set R13
	I64Load out+56(FP); Set R14
	V128Const $0x0003000300030003, $0x0003000300030003
	Set V0
	Loop
		I64Load yp+8(FP); Set R1
		I64Load y+16(FP); Set R2
		I64Load yd+24(FP); Set R3
		I64Load nb+40(FP); Set R5
		V128Const $0, $0; Set V7
		V128Const $0, $0; Set V8
		Loop
			LOADQ
			V128Const $0, $0; Set V1
			V128Const $0, $0; Set V2
			RUNS(V3, V4, 0)
			RUNS(V5, V6, 256)
			Get R3; I32WrapI64; F32Load $0; DXTAB; F32Mul; F32x4Splat; Set V9
			Get V1; SCALEADD(Get R2; I32WrapI64; V128Load $260, V7)
			Get V2; SCALEADD(Get R2; I32WrapI64; V128Load $276, V8)
			ADD(R0, 66)
			ADD(R1, 544)
			ADD(R2, 292)
			ADD(R3, 4)
			COUNTDOWN(R5)
		End
		Get R14; I32WrapI64; LANESUM8(V7, V8); F32Store $0
		ADD(R14, 4)
		COUNTDOWN(R13)
	End
	RET

//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"
#include "rows4_wasm.h"

// The wasm SIMD128 DotRows kernels of Q8_0 and Q4_0 (dotRowsQ8_0Acts in
// dotrows_wasm.go), the activation split by splitQ8_0 (dotrows_wasm.s).
// (Every macro comes before the first TEXT: go vet reads the arguments a
// macro names as those of the function above it.)
//
// Their blocks are 32 weights, so a block's integer sum is reduced across
// lanes for every row and block, and its float part is per block too. The
// row kernels take four rows a pass, block by block: each row's int32
// lanes of the block (as in q8_0_wasm.s), the four vectors reduced
// together into one vector of the four rows' sums (REDUCE4), then the
// block's term of each row computed in that row's lane with the
// reference's IEEE operations, float32(Σ)·float32(dx·dy), and added to the
// lane's running sum: the four rows' results are the four lanes, each one
// bit-identical to the row's Dot.
//
// register use (q8_0Rows4, q4_0Rows4): R0, R4, R5, R6 the four rows'
// weight blocks (R15 = rowBytes apart), R11 the prepared activation block,
// R1 its float32 scale, R3 its sum (Q4_0), R2 blocks left, R12 groups of
// four rows left, R13 the fp16 table, R14 the output; V1 the four rows'
// running sums, V5..V8 their int32 block lanes, V2, V3 weights, V0 Q4_0's
// nibble mask, V9 the low int32 of each int64 lane, V10 the low int64
// lane, V11 the swizzle that swaps the int64 lanes.

// PY pushes the 8 prepared int16 activations at R11+off (splitQ8_0).
#define PY(off) Get R11; I32WrapI64; V128Load $(off)

// LO16 / HI16 push the int32 lanes of Σ q·y over the low / high nibbles
// of vector rv against the prepared activations at R11+p (V0 the int16
// nibble mask).
#define LO16(rv, p) \
	Get rv; Get V0; V128And; PY(p); I32x4DotI16x8S; \
	Get rv; I32Const $8; I16x8ShrU; Get V0; V128And; PY(p+16); I32x4DotI16x8S; \
	I32x4Add
#define HI16(rv, p) \
	Get rv; I32Const $4; I16x8ShrU; Get V0; V128And; PY(p); I32x4DotI16x8S; \
	Get rv; I32Const $12; I16x8ShrU; PY(p+16); I32x4DotI16x8S; \
	I32x4Add

// ROWQ8 sets dst to the int32 lanes of Σ x·y of the Q8_0 block at r.
#define ROWQ8(r, dst) \
	Get r; I32WrapI64; V128Load $2; Set V2; \
	Get r; I32WrapI64; V128Load $18; Set V3; \
	EVEN(V2); PY(0); I32x4DotI16x8S; \
	ODD(V2); PY(16); I32x4DotI16x8S; I32x4Add; \
	EVEN(V3); PY(32); I32x4DotI16x8S; I32x4Add; \
	ODD(V3); PY(48); I32x4DotI16x8S; I32x4Add; \
	Set dst

// ROWQ4 sets dst to the int32 lanes of Σ q·y of the Q4_0 block at r (its
// quants 0..15; the offset of 8 is taken off with the activation's sum).
// (Products of nibbles and int8 are at most 1920 in magnitude.)
#define ROWQ4(r, dst) \
	Get r; I32WrapI64; V128Load $2; Set V2; \
	LO16(V2, 0); HI16(V2, 32); I32x4Add; Set dst


// ---- the float part of Q4_K's and Q6_K's DotRows ----
// (scaleRowsQ4_K, scaleRowsQ6_K in dotrows_wasm.go: the integer sums come
// from the row kernels, block-major.) Four rows a pass, one a float32
// lane, each lane the terms of scaleQ4_KSums or scaleQ6_KSums in block
// order from zero.
//
// register use (q4KScaleRows, q6KScaleRows): R0, R4, R5, R6 the four rows'
// weight blocks (R15 = rowBytes apart), R1 the activation block, R3 the
// sums of the rows' block (R12 the min sums), R8 their stride (4·rows),
// R2 blocks left, R7 groups of four rows left, R9 the group's sums, R10
// its min sums, R13 the fp16 table, R14 the output, R11 the weight block
// size; V1 the running sums, V2 the activation's scale.

// DXAT pushes the float32 of the fp16 at byte off of the block at r
// (through the table at R13).
#define DXAT(r, off) Get R13; Get r; I32WrapI64; I64Load16U $(off); I64Const $2; I64Shl; I64Add; I32WrapI64; F32Load $0

// DX4 pushes the four rows' fp16 at byte off of their blocks, as float32
// lanes, times the activation's scale (V2).
#define DX4(off) \
	DXAT(R0, off); F32x4Splat; DXAT(R4, off); F32x4ReplaceLane $0, $1; \
	DXAT(R5, off); F32x4ReplaceLane $0, $2; DXAT(R6, off); F32x4ReplaceLane $0, $3; \
	Get V2; F32x4Mul

// SUMS4 pushes the four rows' int32 sums at r as float32 lanes.
#define SUMS4(r) Get r; I32WrapI64; V128Load $0; F32x4ConvertI32x4S

// TERMQ4K pushes d·Σ scale·q·y - dmin·Σ min·bsum of the block, lane by
// lane (d at byte 0 of a Q4_K block, dmin at byte 2).
#define TERMQ4K DX4(0); SUMS4(R3); F32x4Mul; DX4(2); SUMS4(R12); F32x4Mul; F32x4Sub

// TERMQ6K pushes d·Σ scale·q·y of the block (d at byte 208 of a Q6_K
// block).
#define TERMQ6K DX4(208); SUMS4(R3); F32x4Mul

// SCALEROWS is the body of q4KScaleRows and q6KScaleRows.
#define SCALEROWS(xsize, term) \
	I64Load w+24(FP); Set R0; \
	I64Load rowBytes+64(FP); Set R15; \
	I64Load k+48(FP); Tee R7; I64Const $2; I64Shl; Set R8; \
	Get R7; I64Const $2; I64ShrU; Set R7; \
	I64Load tab+40(FP); Set R13; \
	I64Load out+0(FP); Set R14; \
	I64Load is+8(FP); Set R9; \
	I64Load ms+16(FP); Set R10; \
	Block; \
	Get R7; I64Eqz; BrIf $0; \
	Loop; \
		Get R0; Get R15; I64Add; Set R4; \
		Get R4; Get R15; I64Add; Set R5; \
		Get R5; Get R15; I64Add; Set R6; \
		I64Load act+32(FP); Set R1; \
		Get R9; Set R3; \
		Get R10; Set R12; \
		I64Load nb+56(FP); Set R2; \
		V128Const $0, $0; Set V1; \
		Loop; \
			Get R1; I32WrapI64; F32Load $0; F32x4Splat; Set V2; \
			term; Get V1; F32x4Add; Set V1; \
			ADD(R0, xsize); ADD(R4, xsize); ADD(R5, xsize); ADD(R6, xsize); \
			ADD(R1, 292); \
			Get R3; Get R8; I64Add; Set R3; \
			Get R12; Get R8; I64Add; Set R12; \
			COUNTDOWN(R2); \
		End; \
		Get R14; I32WrapI64; Get V1; V128Store $0, $0; \
		ADD(R14, 16); \
		ADD(R9, 16); \
		ADD(R10, 16); \
		Get R6; Set R0; \
		COUNTDOWN(R7); \
	End; \
	End

// func q8_0Rows4(x, yp *byte, yd *float32, ysum *int32, tab *float32, nb, rowBytes, groups int, out *float32)
// sets out[4g+i] to the dot of Q8_0 row 4g+i (rows of nb ≥ 1 blocks,
// rowBytes apart, at x) with the activation split by splitQ8_0 at yp (yd
// its blocks' scales as float32), exactly as dotQ8_0Ref, for the groups
// g < groups; tab is fp16ToFP32Table, ysum is not read.
TEXT ·q8_0Rows4(SB), NOSPLIT, $0-72
	ROWS4(34, 64, ROWQ8, NOBIAS)
	RET

// func q4_0Rows4(x, yp *byte, yd *float32, ysum *int32, tab *float32, nb, rowBytes, groups int, out *float32)
// is q8_0Rows4 for Q4_0 rows (dotQ4_0Ref); ysum[j] is the sum of the
// activation's block j (splitQ8_0).
TEXT ·q4_0Rows4(SB), NOSPLIT, $0-72
	ROWS4(18, 64, ROWQ4, BIAS8)
	RET

// func q4KScaleRows(out *float32, is, ms *int32, w, act *byte, tab *float32, k, nb, rowBytes int)
// sets out[i] for the k rows (a multiple of four) of nb ≥ 1 Q4_K blocks
// at w (rowBytes apart) to Σ_j d·is[k·j+i] - dmin·ms[k·j+i], the terms of
// scaleQ4_KSums against the Q8_K activation at act (tab is
// fp16ToFP32Table).
TEXT ·q4KScaleRows(SB), NOSPLIT, $0-72
	SCALEROWS(144, TERMQ4K)
	RET

// func q6KScaleRows(out *float32, is, ms *int32, w, act *byte, tab *float32, k, nb, rowBytes int)
// is q4KScaleRows for Q6_K rows (the terms of scaleQ6_KSums; ms is not
// read).
TEXT ·q6KScaleRows(SB), NOSPLIT, $0-72
	SCALEROWS(210, TERMQ6K)
	RET

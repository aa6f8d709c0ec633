//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"
#include "lanes8_wasm.h"

// The wasm SIMD128 DotRows and DotRowsN kernels of IQ1_S
// (dotRowsIQ1_SSIMD128, dotRowsNIQ1_SSIMD128 in iq1_wasm.go), the
// activations prepared by splitQ8_K (dotrows_wasm.s). (Every macro comes
// before the first TEXT: go vet reads the arguments a macro names as
// those of the function above it.)
//
// The grid points of two groups of 8 weights (two int64 loads from
// iq1sGrid, by their 11-bit indices) make a vector of 16 int8 weights in
// {-1, 0, 1}; their even and odd bytes as int16 lanes (EVEN, ODD) dotted
// with the prepared activations (i32x4.dot_i16x8_s) give, in int32 lane
// L, Σ g·y over positions 4L..4L+3 of the 16 weights: lanes 0-3 of the
// reference (dotIQ1_SRef's iq3Lanes) from groups 0, 1 of a sub-block,
// lanes 4-7 from groups 2, 3. Times the sub-block's 2s+1 (at most 15) and
// added over the sub-blocks, they are the reference's exact int32 lanes
// (at most 8·15·8·128 in magnitude). The delta sum Σ (2s+1)·(±1)·(the
// sub-block's two block sums) is exact too. The float part is the
// reference's: float32(lane)·d rounded, then added, per block in order,
// in two float32x4 running sums; float32(d·float32(delta sum)) added to a
// ninth; the Go side adds laneSum8 of the eight and iq1sDelta times the
// ninth.

// SUBQH sets R7 to sub-block ib's qh word and R8 to its 2s+1.
#define SUBQH(ib) \
	Get R0; I32WrapI64; I64Load16U $(34+2*ib); Tee R7; \
	I64Const $11; I64ShrU; I64Const $0xe; I64And; I64Const $1; I64Or; Set R8

// CDELTA pushes the sub-block's delta factor (2s+1)·(±1), int64: R8
// negated where bit 15 of R7 is set (R10 scratch).
#define CDELTA Get R8; I64Const $0; Get R7; I64Const $15; I64ShrU; I64Sub; Tee R10; I64Xor; Get R10; I64Sub

// GADDR pushes the address of the grid point of group l of sub-block ib
// (R9 the grid): qs[4ib+l]·8 + bits 3l..3l+2 of qh (shifted left by
// shl = 11-3l, masked) ·2048.
#define GADDR(ib, l, shl) \
	Get R0; I32WrapI64; I64Load8U $(2+4*ib+l); I64Const $3; I64Shl; \
	Get R7; I64Const $(shl); I64Shl; I64Const $0x3800; I64And; I64Or; \
	Get R9; I64Add; I32WrapI64

// GRID16 pushes the 16 int8 weights of groups l, l+1 of sub-block ib.
#define GRID16(ib, l, shl0, shl1) \
	GADDR(ib, l, shl0); I64Load $0; I64x2Splat; \
	GADDR(ib, l+1, shl1); I64Load $0; I64x2ReplaceLane $0, $1

// ---- DotRows (iq1sRows) ----
// register use: R0 the weight block (rows are consecutive), R1 the
// prepared activation block, R2 the activation block (its block sums),
// R3 its float32 scale in yd, R4 the fp16 table, R5 blocks left in the
// row, R7 a sub-block's qh, R8 its 2s+1, R9 the grid, R10 scratch, R12
// the block's delta sum, R13 rows left, R14 the output; V1, V2 the
// block's int32 lanes 0-3, 4-7, V3 a sub-block's 2s+1, V4, V5 its
// weights, V7, V8 the row's running sums 0-3, 4-7, V9 the block's d,
// V10 scratch, V12 the delta running sum (lane 0).

// SUBB adds sub-block ib's lanes to V1, V2 and its delta term to R12.
#define SUBB(ib) \
	SUBQH(ib); \
	GRID16(ib, 0, 11, 8); Set V4; \
	GRID16(ib, 2, 5, 2); Set V5; \
	EVEN(V4); PY(64*ib); I32x4DotI16x8S; ODD(V4); PY(64*ib+16); I32x4DotI16x8S; I32x4Add; \
	Get R8; I32WrapI64; I32x4Splat; Tee V3; I32x4Mul; Get V1; I32x4Add; Set V1; \
	EVEN(V5); PY(64*ib+32); I32x4DotI16x8S; ODD(V5); PY(64*ib+48); I32x4DotI16x8S; I32x4Add; \
	Get V3; I32x4Mul; Get V2; I32x4Add; Set V2; \
	Get R2; I32WrapI64; I64Load16S $(260+4*ib); Get R2; I32WrapI64; I64Load16S $(262+4*ib); I64Add; \
	CDELTA; I64Mul; Get R12; I64Add; Set R12

// FLOAT1 adds float32(lanes)·V9, rounded, to the running sums acc.
#define FLOAT1(lanes, acc) Get lanes; F32x4ConvertI32x4S; Get V9; F32x4Mul; Get acc; F32x4Add; Set acc

// ---- DotRowsN (iq1sRowsN) ----
// As tq2RowsN (tq_wasm.s), the weights of two sub-blocks at a time in
// V8..V15 already multiplied by their 2s+1 (i16x8.mul: at most 15 in
// magnitude), an activation's accumulators 80 bytes: its int32 lanes
// 0-3, 4-7, its float32 running sums 0-3, 4-7, its delta running sum.
// register use: as tq2RowsN, R7..R10 as in iq1sRows, V0 a sub-block's
// 2s+1 in int16 lanes, V2, V3 the delta factors of sub-blocks 0-3, 4-7.

// SBN sets ae, ao, be, bo to the even and odd weights of groups 0, 1 and
// of groups 2, 3 of sub-block ib times its 2s+1, and lane k of cv to its
// delta factor.
#define SBN(ib, ae, ao, be, bo, cv, k) \
	SUBQH(ib); Get R8; I32WrapI64; I16x8Splat; Set V0; \
	GRID16(ib, 0, 11, 8); Set V4; \
	EVEN(V4); Get V0; I16x8Mul; Set ae; ODD(V4); Get V0; I16x8Mul; Set ao; \
	GRID16(ib, 2, 5, 2); Set V4; \
	EVEN(V4); Get V0; I16x8Mul; Set be; ODD(V4); Get V0; I16x8Mul; Set bo; \
	Get cv; CDELTA; I32WrapI64; I32x4ReplaceLane $0, $(k); Set cv

// BLOCK1N adds every activation's float part of the block (yd·d from
// R5 and V1).
#define BLOCK1N \
	Get R5; I32WrapI64; F32Load $0; F32x4Splat; Get V1; F32x4Mul; Set V6; \
	Get R3; I32WrapI64; \
	Get R3; I32WrapI64; V128Load $0; F32x4ConvertI32x4S; Get V6; F32x4Mul; \
	Get R3; I32WrapI64; V128Load $32; F32x4Add; V128Store $0, $32; \
	Get R3; I32WrapI64; \
	Get R3; I32WrapI64; V128Load $16; F32x4ConvertI32x4S; Get V6; F32x4Mul; \
	Get R3; I32WrapI64; V128Load $48; F32x4Add; V128Store $0, $48; \
	PA(512); I32x4ExtaddPairwiseI16x8S; Get V2; I32x4Mul; \
	PA(528); I32x4ExtaddPairwiseI16x8S; Get V3; I32x4Mul; I32x4Add; Set V7; \
	Get R3; I32WrapI64; \
	HSUM(V7); F32ConvertI32S; Get V6; F32x4ExtractLane $0, $0; F32Mul; \
	Get R3; I32WrapI64; F32Load $64; F32Add; F32Store $64; \
	ADD(R5, 4)

// ROWEND1N stores every activation's laneSum8 and delta running sum at
// R14 (two float32 each) and zeroes them.
#define ROWEND1N \
	Get R3; I32WrapI64; V128Load $32; Set V6; Get R3; I32WrapI64; V128Load $48; Set V7; \
	Get R14; I32WrapI64; LANESUM8(V6, V7); F32Store $0; \
	Get R14; I32WrapI64; Get R3; I32WrapI64; F32Load $64; F32Store $4; ADD(R14, 8); \
	Get R3; I32WrapI64; V128Const $0, $0; V128Store $0, $32; \
	Get R3; I32WrapI64; V128Const $0, $0; V128Store $0, $48; \
	Get R3; I32WrapI64; V128Const $0, $0; V128Store $0, $64

// ---- IQ1_M (iq1mRows, iq1mRowsN) ----
// The grid part as IQ1_S's, with a 2s+1 per 16 weights; the delta part
// (dotIQ1_MRef's second eight lanes) as a second set of weights, the
// delta signs ±1 of the groups: for groups l, l+1 (l even) of a
// sub-block, their qh byte b holds the signs in bits 3 and 7; b | 0x44
// splat to int16 lanes, times 16 in lanes 0-3 (1 in lanes 4-7), shifted
// left by 8 and arithmetically right by 14, is -1 where the bit is set
// and 1 where not (bit 6 of the product is set), lanes 0-3 for group l,
// 4-7 for group l+1: the same sign for the even and the odd weights, so
// one dot with the even plus odd activations gives Σ sign·y in the lanes
// of the reference (exact: |y_even + y_odd| ≤ 256).

// SIGN16 pushes the int16 signs of the groups of the qh byte in r (pw the
// int16 factors 16 16 16 16 1 1 1 1).
#define SIGN16(r, pw) \
	Get r; I64Const $0x44; I64Or; I32WrapI64; I16x8Splat; Get pw; I16x8Mul; \
	I32Const $8; I16x8Shl; I32Const $14; I16x8ShrS

// MGADDR pushes the address of the grid point of group l of sub-block ib
// (R9 the grid; R10 the group's qh byte, shl = 11 for the low nibble, 7
// for the high one).
#define MGADDR(ib, l, shl) \
	Get R0; I32WrapI64; I64Load8U $(4*ib+l); I64Const $3; I64Shl; \
	Get R10; I64Const $(shl); I64Shl; I64Const $0x3800; I64And; I64Or; \
	Get R9; I64Add; I32WrapI64

// MGRID16 pushes the 16 int8 weights of groups 2h, 2h+1 of sub-block ib,
// loading their qh byte into R10.
#define MGRID16(ib, h) \
	Get R0; I32WrapI64; I64Load8U $(32+2*ib+h); Set R10; \
	MGADDR(ib, 2*h, 11); I64Load $0; I64x2Splat; \
	MGADDR(ib, 2*h+1, 7); I64Load $0; I64x2ReplaceLane $0, $1

// MLS sets R8 to the 2s+1 of half h of sub-block ib.
#define MLS(ib, h) \
	Get R0; I32WrapI64; I64Load16U $(48+2*(ib/2)); I64Const $(6*(ib%2)+3*h); I64ShrU; \
	I64Const $7; I64And; I64Const $1; I64Shl; I64Const $1; I64Or; Set R8

// DXM pushes the float32 of the block's fp16 d, from the top nibbles of
// the four scale words (through the table at R4).
#define DXM \
	Get R4; \
	Get R0; I32WrapI64; I64Load $48; Set R10; \
	Get R10; I64Const $12; I64ShrU; I64Const $0xf; I64And; \
	Get R10; I64Const $24; I64ShrU; I64Const $0xf0; I64And; I64Or; \
	Get R10; I64Const $36; I64ShrU; I64Const $0xf00; I64And; I64Or; \
	Get R10; I64Const $48; I64ShrU; I64Const $0xf000; I64And; I64Or; \
	I64Const $2; I64Shl; I64Add; I32WrapI64; F32Load $0

// register use (iq1mRows): as iq1sRows, V1, V2 the block's grid lanes
// 0-3, 4-7, V3, V4 its delta lanes, V5, V6 the grid running sums, V7,
// V8 the delta running sums, V11 weights, V12, V13 even and odd
// activations, V15 SIGN16's factors, V0 a 2s+1.

// HALFM adds half h of sub-block ib (activations prepared at p) to the
// lanes l1 (grid) and l2 (delta).
#define HALFM(ib, h, p, l1, l2) \
	MLS(ib, h); MGRID16(ib, h); Set V11; \
	PY(p); Set V12; PY(p+16); Set V13; \
	EVEN(V11); Get V12; I32x4DotI16x8S; ODD(V11); Get V13; I32x4DotI16x8S; I32x4Add; \
	Get R8; I32WrapI64; I32x4Splat; Tee V0; I32x4Mul; Get l1; I32x4Add; Set l1; \
	SIGN16(R10, V15); Get V12; Get V13; I16x8Add; I32x4DotI16x8S; \
	Get V0; I32x4Mul; Get l2; I32x4Add; Set l2

#define SUBM(ib) HALFM(ib, 0, 64*ib, V1, V3); HALFM(ib, 1, 64*ib+32, V2, V4)

// register use (iq1mRowsN): as iq1sRowsN, an activation's accumulators
// 128 bytes (its grid lanes 0-3, 4-7, delta lanes 0-3, 4-7, grid running
// sums, delta running sums); V4..V7 the delta weights of two sub-blocks
// (times their 2s+1), V8..V15 their grid weights; V0 a 2s+1 in int16
// lanes, V1 SIGN16's factors, V3 scratch while decoding; V0, V1 an
// activation's grid and delta sums, V2 scratch, while dotting.

// HALFMN sets ge, go to the even and odd grid weights of half h of
// sub-block ib times its 2s+1, and sg to its signs times it.
#define HALFMN(ib, h, ge, go, sg) \
	MLS(ib, h); Get R8; I32WrapI64; I16x8Splat; Set V0; \
	MGRID16(ib, h); Set V3; \
	EVEN(V3); Get V0; I16x8Mul; Set ge; ODD(V3); Get V0; I16x8Mul; Set go; \
	SIGN16(R10, V1); Get V0; I16x8Mul; Set sg

// DECM decodes sub-blocks 2c, 2c+1 (ib0, ib1).
#define DECM(ib0, ib1) \
	V128Const $0x0010001000100010, $0x0001000100010001; Set V1; \
	HALFMN(ib0, 0, V8, V9, V4); HALFMN(ib0, 1, V10, V11, V5); \
	HALFMN(ib1, 0, V12, V13, V6); HALFMN(ib1, 1, V14, V15, V7)

// DOT2M pushes the grid dots of ga, gb with the activations at p, p+16
// added to what is pushed, and adds the sign dots of s to V1.
#define DOT2M(ga, gb, s, p) \
	PA(p); Tee V2; Get ga; I32x4DotI16x8S; I32x4Add; Get V2; Get s; I32x4DotI16x8S; Get V1; I32x4Add; Set V1; \
	PA(p+16); Tee V2; Get gb; I32x4DotI16x8S; I32x4Add; Get V2; Get s; I32x4DotI16x8S; Get V1; I32x4Add; Set V1

// LANESM pushes one activation's grid lanes (a: 0-3, b: 4-7 with the
// weights a0, a1 / b0, b1 and signs sa, sb at p, p+64) and sets V1 to its
// delta lanes.
#define LANESM(g0, g1, g2, g3, s0, s1, p) \
	V128Const $0, $0; Set V1; V128Const $0, $0; \
	DOT2M(g0, g1, s0, p); DOT2M(g2, g3, s1, p+64)

// ACCM stores (first) or adds (not first) one activation's four lane
// vectors of a chunk at R3.
#define FIRSTM(p) \
	Get R3; I32WrapI64; LANESM(V8, V9, V12, V13, V4, V6, p); V128Store $0, $0; \
	Get R3; I32WrapI64; Get V1; V128Store $0, $32; \
	Get R3; I32WrapI64; LANESM(V10, V11, V14, V15, V5, V7, p+32); V128Store $0, $16; \
	Get R3; I32WrapI64; Get V1; V128Store $0, $48
#define ADDM(p) \
	Get R3; I32WrapI64; LANESM(V8, V9, V12, V13, V4, V6, p); Get R3; I32WrapI64; V128Load $0; I32x4Add; V128Store $0, $0; \
	Get R3; I32WrapI64; Get V1; Get R3; I32WrapI64; V128Load $32; I32x4Add; V128Store $0, $32; \
	Get R3; I32WrapI64; LANESM(V10, V11, V14, V15, V5, V7, p+32); Get R3; I32WrapI64; V128Load $16; I32x4Add; V128Store $0, $16; \
	Get R3; I32WrapI64; Get V1; Get R3; I32WrapI64; V128Load $48; I32x4Add; V128Store $0, $48

// FLOATM adds float32(the int32 lanes at off)·V6, rounded, to the
// running sums at off+64.
#define FLOATM(off) \
	Get R3; I32WrapI64; \
	Get R3; I32WrapI64; V128Load $(off); F32x4ConvertI32x4S; Get V6; F32x4Mul; \
	Get R3; I32WrapI64; V128Load $(off+64); F32x4Add; V128Store $0, $(off+64)

// BLOCKMN adds every activation's float part of the block (yd·d from
// R5 and V3).
#define BLOCKMN \
	Get R5; I32WrapI64; F32Load $0; F32x4Splat; Get V3; F32x4Mul; Set V6; \
	FLOATM(0); FLOATM(16); FLOATM(32); FLOATM(48); \
	ADD(R5, 4)

// ROWENDMN stores every activation's two laneSum8 at R14 and zeroes its
// running sums.
#define ROWENDMN \
	Get R3; I32WrapI64; V128Load $64; Set V6; Get R3; I32WrapI64; V128Load $80; Set V7; \
	Get R14; I32WrapI64; LANESUM8(V6, V7); F32Store $0; \
	Get R3; I32WrapI64; V128Load $96; Set V6; Get R3; I32WrapI64; V128Load $112; Set V7; \
	Get R14; I32WrapI64; LANESUM8(V6, V7); F32Store $4; ADD(R14, 8); \
	Get R3; I32WrapI64; V128Const $0, $0; V128Store $0, $64; \
	Get R3; I32WrapI64; V128Const $0, $0; V128Store $0, $80; \
	Get R3; I32WrapI64; V128Const $0, $0; V128Store $0, $96; \
	Get R3; I32WrapI64; V128Const $0, $0; V128Store $0, $112

// IQ1SBLOCKN and IQ1MBLOCKN are iq1sRowsN's and iq1mRowsN's blocks
// (ROWSN8, lanes8_wasm.h); IQ1PRE loads the grid.
#define IQ1PRE I64Load grid+72(FP); Set R9
#define IQ1SBLOCKN \
	SBN(0, V8, V9, V10, V11, V2, 0); SBN(1, V12, V13, V14, V15, V2, 1); \
	ACTSN(80, FIRSTN(0)); \
	SBN(2, V8, V9, V10, V11, V2, 2); SBN(3, V12, V13, V14, V15, V2, 3); \
	ACTSN(80, ADDN(128)); \
	SBN(4, V8, V9, V10, V11, V3, 0); SBN(5, V12, V13, V14, V15, V3, 1); \
	ACTSN(80, ADDN(256)); \
	SBN(6, V8, V9, V10, V11, V3, 2); SBN(7, V12, V13, V14, V15, V3, 3); \
	ACTSN(80, ADDN(384)); \
	DXTAB(0); F32x4Splat; Set V1; \
	ACTSN(80, BLOCK1N)
#define IQ1MBLOCKN \
	DECM(0, 1); \
	ACTSN(128, FIRSTM(0)); \
	DECM(2, 3); \
	ACTSN(128, ADDM(128)); \
	DECM(4, 5); \
	ACTSN(128, ADDM(256)); \
	DECM(6, 7); \
	ACTSN(128, ADDM(384)); \
	DXM; F32x4Splat; Set V3; \
	ACTSN(128, BLOCKMN)

// func iq1sRows(x, yp, y *byte, yd, tab *float32, grid *[8]int8, nb, rows int, out *float32)
// sets out[2r] to laneSum8 of the eight running sums of dotIQ1_SRef for
// row r of x (rows ≥ 1 rows of nb ≥ 1 blocks, consecutive) and the
// activation y, prepared at yp, its block scales in yd, and out[2r+1]
// to its delta running sum; tab is fp16ToFP32Table, grid iq1sGrid.
TEXT ·iq1sRows(SB), NOSPLIT, $0-72
	I64Load x+0(FP); Set R0
	I64Load tab+32(FP); Set R4
	I64Load grid+40(FP); Set R9
	I64Load rows+56(FP); Set R13
	I64Load out+64(FP); Set R14
	Loop
		I64Load yp+8(FP); Set R1
		I64Load y+16(FP); Set R2
		I64Load yd+24(FP); Set R3
		I64Load nb+48(FP); Set R5
		V128Const $0, $0; Set V7
		V128Const $0, $0; Set V8
		V128Const $0, $0; Set V12
		Loop
			V128Const $0, $0; Set V1
			V128Const $0, $0; Set V2
			I64Const $0; Set R12
			SUBB(0); SUBB(1); SUBB(2); SUBB(3); SUBB(4); SUBB(5); SUBB(6); SUBB(7)
			Get R3; I32WrapI64; F32Load $0; DXTAB(0); F32Mul; F32x4Splat; Set V9
			FLOAT1(V1, V7)
			FLOAT1(V2, V8)
			Get V12; F32x4ExtractLane $0, $0
			Get V9; F32x4ExtractLane $0, $0; Get R12; I32WrapI64; F32ConvertI32S; F32Mul
			F32Add; F32x4Splat; Set V12
			ADD(R0, 50)
			ADD(R1, 544)
			ADD(R2, 292)
			ADD(R3, 4)
			COUNTDOWN(R5)
		End
		Get R14; I32WrapI64; LANESUM8(V7, V8); F32Store $0
		Get R14; I32WrapI64; Get V12; F32x4ExtractLane $0, $0; F32Store $4
		ADD(R14, 8)
		COUNTDOWN(R13)
	End
	RET

// func iq1sRowsN(x, yp *byte, yd *float32, tab *float32, acc *int32, nb, rows, acts int, out *float32, grid *[8]int8)
// sets out[2(acts·r+a)] and out[2(acts·r+a)+1] to what iq1sRows sets for
// row r and activation a < acts (acts ≥ 1), prepared at yp one after the
// other (nb·544 bytes each), its block scales at yd[acts*j+a]; acc holds
// 20·acts int32, the last 12 of each zero.
TEXT ·iq1sRowsN(SB), NOSPLIT, $0-80
	ROWSN8(IQ1PRE, IQ1SBLOCKN, 50, 80, ROWEND1N)
	RET

// func iq1mRows(x, yp *byte, yd, tab *float32, grid *[8]int8, nb, rows int, out *float32)
// sets out[2r] and out[2r+1] to laneSum8 of the grid and of the delta
// running sums of dotIQ1_MRef for row r of x (rows ≥ 1 rows of nb ≥ 1
// blocks, consecutive) and the activation prepared at yp, its block
// scales in yd; tab is fp16ToFP32Table, grid iq1sGrid.
TEXT ·iq1mRows(SB), NOSPLIT, $0-64
	I64Load x+0(FP); Set R0
	I64Load tab+24(FP); Set R4
	I64Load grid+32(FP); Set R9
	I64Load rows+48(FP); Set R13
	I64Load out+56(FP); Set R14
	V128Const $0x0010001000100010, $0x0001000100010001
	Set V15
	Loop
		I64Load yp+8(FP); Set R1
		I64Load yd+16(FP); Set R3
		I64Load nb+40(FP); Set R5
		V128Const $0, $0; Set V5
		V128Const $0, $0; Set V6
		V128Const $0, $0; Set V7
		V128Const $0, $0; Set V8
		Loop
			V128Const $0, $0; Set V1
			V128Const $0, $0; Set V2
			V128Const $0, $0; Set V3
			V128Const $0, $0; Set V4
			SUBM(0); SUBM(1); SUBM(2); SUBM(3); SUBM(4); SUBM(5); SUBM(6); SUBM(7)
			Get R3; I32WrapI64; F32Load $0; DXM; F32Mul; F32x4Splat; Set V9
			FLOAT1(V1, V5)
			FLOAT1(V2, V6)
			FLOAT1(V3, V7)
			FLOAT1(V4, V8)
			ADD(R0, 56)
			ADD(R1, 544)
			ADD(R3, 4)
			COUNTDOWN(R5)
		End
		Get R14; I32WrapI64; LANESUM8(V5, V6); F32Store $0
		Get R14; I32WrapI64; LANESUM8(V7, V8); F32Store $4
		ADD(R14, 8)
		COUNTDOWN(R13)
	End
	RET

// func iq1mRowsN(x, yp *byte, yd *float32, tab *float32, acc *int32, nb, rows, acts int, out *float32, grid *[8]int8)
// sets out[2(acts·r+a)] and out[2(acts·r+a)+1] to what iq1mRows sets for
// row r and activation a < acts (acts ≥ 1), prepared at yp one after the
// other (nb·544 bytes each), its block scales at yd[acts*j+a]; acc holds
// 32·acts int32, the last 16 of each zero.
TEXT ·iq1mRowsN(SB), NOSPLIT, $0-80
	ROWSN8(IQ1PRE, IQ1MBLOCKN, 56, 128, ROWENDMN)
	RET

//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"
#include "lanes8_wasm.h"

// The wasm SIMD128 DotRows and DotRowsN kernels of E8_IQ3
// (dotRowsE8IQ3SIMD128, dotRowsNE8IQ3SIMD128 in e8iq3_wasm.go), the
// activations prepared by splitQ8_K (dotrows_wasm.s). (Every macro comes
// before the first TEXT: go vet reads the arguments a macro names as
// those of the function above it.)
//
// Half a sub-block (16 weights) at a time: the four grid points of its
// groups of 4 (int32 loads from iq3xxsGrid, magnitudes at most 62) make a
// vector of 16 bytes, negated where their sign bits are set (the two
// ksignsIQ2XS bytes of its pairs of groups, each bit k broadcast to byte
// k by a swizzle and compared), then split into even and odd int16 lanes
// (EVEN, ODD) and dotted with the prepared activations. The integer sum
// of a block, Σ_ib (2·code+1)·Σ sign·g·y, is exact in int32 lanes in any
// order (at most 256·62·128·31 in magnitude); its float term is
// dotE8IQ3's, fp16(d)·yd·float32(sum), added to the row's sum in block
// order; the Go side multiplies the sum by 0.125 as dotE8IQ3 does.

// E8AUX sets R7 to sub-block ib's aux word and R8 to its 2·code+1.
#define E8AUX(ib) \
	Get R0; I32WrapI64; I64Load32U $(64+4*ib); Tee R7; \
	I64Const $28; I64ShrU; I64Const $1; I64Shl; I64Const $1; I64Or; Set R8

// E8G pushes the grid point (int32) of group k of the block at R0 (R9 the
// grid).
#define E8G(k) Get R9; Get R0; I32WrapI64; I64Load8U $(k); I64Const $2; I64Shl; I64Add; I32WrapI64; I32Load $0

// E8KS pushes the ksignsIQ2XS byte of bits sh..sh+6 of R7 (R10 the table).
#define E8KS(sh) Get R10; Get R7; I64Const $(sh); I64ShrU; I64Const $127; I64And; I64Add; I32WrapI64; I64Load8U $0

// E8W pushes the 16 signed weights of half h of sub-block ib (swz, bits
// the swizzle pattern 0×8 1×8 and the bit masks 1..128 twice; R12, t
// scratch).
#define E8W(ib, h, swz, bits, t) \
	E8KS(14*h); E8KS(14*h+7); I64Const $8; I64Shl; I64Or; Set R12; \
	Get R12; I32WrapI64; I16x8Splat; Get swz; I8x16Swizzle; Get bits; V128And; Get bits; I8x16Eq; Set t; \
	E8G(8*ib+4*h); I32x4Splat; E8G(8*ib+4*h+1); I32x4ReplaceLane $0, $1; \
	E8G(8*ib+4*h+2); I32x4ReplaceLane $0, $2; E8G(8*ib+4*h+3); I32x4ReplaceLane $0, $3; \
	Get t; V128Xor; Get t; I8x16Sub

// ---- DotRows (e8Rows) ----
// register use: R0 the weight block (rows are consecutive), R1 the
// prepared activation block, R3 its float32 scale in yd, R4 the fp16
// table, R5 blocks left in the row, R7 a sub-block's aux, R8 its
// 2·code+1, R9 the grid, R10 the sign table, R12 scratch, R13 rows left,
// R14 the output; V1 the block's int32 sums, V3 weights, V4 sign masks,
// V5 a sub-block's sums, V7 the row's sum (lane 0), V13, V14 E8W's
// constants.

// E8SUB adds sub-block ib times its 2·code+1 to V1.
#define E8SUB(ib) \
	E8AUX(ib); \
	E8W(ib, 0, V13, V14, V4); Set V3; \
	EVEN(V3); PY(64*ib); I32x4DotI16x8S; ODD(V3); PY(64*ib+16); I32x4DotI16x8S; I32x4Add; Set V5; \
	E8W(ib, 1, V13, V14, V4); Set V3; \
	EVEN(V3); PY(64*ib+32); I32x4DotI16x8S; ODD(V3); PY(64*ib+48); I32x4DotI16x8S; I32x4Add; Get V5; I32x4Add; \
	Get R8; I32WrapI64; I32x4Splat; I32x4Mul; Get V1; I32x4Add; Set V1

// E8CONSTS sets swz, bits to E8W's constants.
#define E8CONSTS(swz, bits) \
	V128Const $0, $0x0101010101010101; Set swz; \
	V128Const $0x8040201008040201, $0x8040201008040201; Set bits

// ---- DotRowsN (e8RowsN) ----
// As tq2RowsN (tq_wasm.s), the weights of two sub-blocks at a time in
// V8..V15 already multiplied by their 2·code+1 (i16x8.mul: at most
// 62·31); an activation's accumulators 64 bytes: two int32 lane vectors,
// then its float32 sum (lane 0 of the third). register use: as
// tq2RowsN, R7, R8, R9, R10, R12 as in e8Rows, V0 a 2·code+1 in int16
// lanes, V1, V2 E8W's constants, V3, V6 scratch.

// E8HALFN sets ve, vo to the even and odd weights of half h of sub-block
// ib times its 2·code+1 (V0).
#define E8HALFN(ib, h, ve, vo) \
	E8W(ib, h, V1, V2, V6); Set V3; \
	EVEN(V3); Get V0; I16x8Mul; Set ve; ODD(V3); Get V0; I16x8Mul; Set vo

// E8DEC decodes sub-blocks ib0, ib1 into V8..V15.
#define E8DEC(ib0, ib1) \
	E8AUX(ib0); Get R8; I32WrapI64; I16x8Splat; Set V0; \
	E8HALFN(ib0, 0, V8, V9); E8HALFN(ib0, 1, V10, V11); \
	E8AUX(ib1); Get R8; I32WrapI64; I16x8Splat; Set V0; \
	E8HALFN(ib1, 0, V12, V13); E8HALFN(ib1, 1, V14, V15)

// E8BLOCKN adds every activation's term of the block, (d·yd)·float32(Σ),
// to its sum (d at lane 0 of V1, yd at R5).
#define E8BLOCKN \
	Get R3; I32WrapI64; \
	Get R3; I32WrapI64; V128Load $0; Get R3; I32WrapI64; V128Load $16; I32x4Add; Set V6; \
	Get V1; F32x4ExtractLane $0, $0; Get R5; I32WrapI64; F32Load $0; F32Mul; \
	HSUM(V6); F32ConvertI32S; F32Mul; \
	Get R3; I32WrapI64; F32Load $32; F32Add; F32Store $32; \
	ADD(R5, 4)

// E8ROWENDN stores every activation's sum at R14 and zeroes it.
#define E8ROWENDN \
	Get R14; I32WrapI64; Get R3; I32WrapI64; F32Load $32; F32Store $0; ADD(R14, 4); \
	Get R3; I32WrapI64; I32Const $0; I32Store $32

// E8PREN and E8BLOCKN8 are e8RowsN's grid and signs and its block
// (ROWSN8, lanes8_wasm.h).
#define E8BLOCKN8 \
	E8CONSTS(V1, V2); \
	E8DEC(0, 1); \
	ACTSN(64, FIRSTN(0)); \
	E8DEC(2, 3); \
	ACTSN(64, ADDN(128)); \
	E8DEC(4, 5); \
	ACTSN(64, ADDN(256)); \
	E8DEC(6, 7); \
	ACTSN(64, ADDN(384)); \
	DXTAB(96); F32x4Splat; Set V1; \
	ACTSN(64, E8BLOCKN)
#define E8PREN I64Load grid+72(FP); Set R9; I64Load signs+80(FP); Set R10

// func e8Rows(x, yp *byte, yd, tab *float32, grid *[4]uint8, signs *uint8, nb, rows int, out *float32)
// sets out[r] to the float32 sum of dotE8IQ3 (before its factor 0.125)
// for row r of x (rows ≥ 1 rows of nb ≥ 1 blocks, consecutive) and the
// activation prepared at yp, its block scales in yd; tab is
// fp16ToFP32Table, grid iq3xxsGrid, signs ksignsIQ2XS.
TEXT ·e8Rows(SB), NOSPLIT, $0-72
	I64Load x+0(FP); Set R0
	I64Load tab+24(FP); Set R4
	I64Load grid+32(FP); Set R9
	I64Load signs+40(FP); Set R10
	I64Load rows+56(FP); Set R13
	I64Load out+64(FP); Set R14
	E8CONSTS(V13, V14)
	Loop
		I64Load yp+8(FP); Set R1
		I64Load yd+16(FP); Set R3
		I64Load nb+48(FP); Set R5
		V128Const $0, $0; Set V7
		Loop
			V128Const $0, $0; Set V1
			E8SUB(0); E8SUB(1); E8SUB(2); E8SUB(3); E8SUB(4); E8SUB(5); E8SUB(6); E8SUB(7)
			Get V7; F32x4ExtractLane $0, $0
			DXTAB(96); Get R3; I32WrapI64; F32Load $0; F32Mul
			HSUM(V1); F32ConvertI32S; F32Mul
			F32Add; F32x4Splat; Set V7
			ADD(R0, 98)
			ADD(R1, 544)
			ADD(R3, 4)
			COUNTDOWN(R5)
		End
		Get R14; I32WrapI64; Get V7; F32x4ExtractLane $0, $0; F32Store $0
		ADD(R14, 4)
		COUNTDOWN(R13)
	End
	RET

// func e8RowsN(x, yp *byte, yd *float32, tab *float32, acc *int32, nb, rows, acts int, out *float32, grid *[4]uint8, signs *uint8)
// sets out[acts·r+a] to what e8Rows sets for row r and activation a <
// acts (acts ≥ 1), prepared at yp one after the other (nb·544 bytes
// each), its block scales at yd[acts*j+a]; acc holds 16·acts int32, the
// last 8 of each zero.
TEXT ·e8RowsN(SB), NOSPLIT, $0-88
	ROWSN8(E8PREN, E8BLOCKN8, 98, 64, E8ROWENDN)
	RET

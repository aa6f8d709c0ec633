//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"
#include "quads_wasm.h"

#define Q8QB 288
#define Q8DY 256
#define Q8SUM 272
#define Q8MASK V128Const $0x000f000f000f000f, $0x000f000f000f000f; Set V15

// The wasm SIMD128 DotRowsN kernels of Q8_0 and Q4_0 (dotrowsn_wasm.go),
// with the activations in the lanes of vectors. (Every macro comes before
// the first TEXT: go vet reads the arguments a macro names as those of
// the function above it.)

// ---- Q8_0 and Q4_0 ----
// Their blocks are 32 weights: a block's sums are too short to reduce
// across lanes per activation as above. Here the lanes of a vector are
// four activations instead (a quad): the prepared activations hold, for
// each pair of activations within a block, the int16 pair of each of the
// quad's four activations in its four int32 lanes (prepQ8_0Quad), and the
// row kernels splat each int16 pair of weights over the four lanes
// (i8x16.swizzle), so that i32x4.dot_i16x8_s adds two products of each
// activation into its own lane: no sum is ever reduced across lanes, and
// a block's four sums are one vector, scaled by the block's float part in
// float32 lanes with the reference's operations. A weight pair serves up
// to four quads (16 activations) at once.
//
// A prepared quad block is 288 bytes: for m = 0..7 (the four bytes
// 4m..4m+3 of each activation's 32), the vector of their even bytes
// (4m, 4m+2) as int16, then of their odd ones (4m+1, 4m+3); then the four
// activations' scales as float32, then their sums as int32.

// PAIRS stores the even and odd int16 pairs of the gathered bytes 4m..4m+3
// at R0+32m and R0+32m+16, and adds them to the int16 sums in V3.
#define PAIRS(m) \
	GATHER(2+4*m); \
	EVEN(V1); Set V2; ODD(V1); Set V4; \
	Get R0; I32WrapI64; Get V2; V128Store $0, $(32*m); \
	Get R0; I32WrapI64; Get V4; V128Store $0, $(32*m+16); \
	Get V3; Get V2; I16x8Add; Get V4; I16x8Add; Set V3


// register use (q8_0RowsN, q4_0RowsN): R0 weight block, R1 its quad 0
// block, R7, R8, R9 quads 1..3 (R15 apart), R2 blocks left, R5 quads,
// R6 rows left, R13 the fp16 table, R14 the output; V0..V3 the quads'
// float32 sums, V4..V7 their int32 block sums, V8 a splat weight pair
// (then the weight scale), V9 decoded weights, V10..V13 the splat masks,
// V14 the weight bytes, V15 Q4_0's nibble mask.

// INTQ8 adds the Q8_0 block at R0's weights against the quads to V4..V7.
#define INTQ8(macs) \
	Get R0; I32WrapI64; V128Load $2; Set V14; \
	EVEN(V14); Set V9; LANES4(macs, 0); \
	ODD(V14); Set V9; LANES4(macs, 16); \
	Get R0; I32WrapI64; V128Load $18; Set V14; \
	EVEN(V14); Set V9; LANES4(macs, 128); \
	ODD(V14); Set V9; LANES4(macs, 144)

// INTQ4 is INTQ8 for the Q4_0 block at R0, its quants 0..15 (the offset
// of 8 is taken off with the activations' sums).
#define INTQ4(macs) \
	Get R0; I32WrapI64; V128Load $2; Set V14; \
	Get V14; Get V15; V128And; Set V9; LANES4(macs, 0); \
	Get V14; I32Const $8; I16x8ShrU; Get V15; V128And; Set V9; LANES4(macs, 16); \
	Get V14; I32Const $4; I16x8ShrU; Get V15; V128And; Set V9; LANES4(macs, 128); \
	Get V14; I32Const $12; I16x8ShrU; Set V9; LANES4(macs, 144)

// func prepQ8_0Quad(dst *byte, ys *[4]*byte, tab *float32, nb int)
// prepares the nb blocks of the four Q8_0 activations at ys[0..3] into
// nb quad blocks of 288 bytes at dst; tab is fp16ToFP32Table.
TEXT ·prepQ8_0Quad(SB), NOSPLIT, $0-32
	I64Load dst+0(FP); Set R0
	I64Load ys+8(FP); Set R1
	Get R1; I32WrapI64; I64Load $0; Set R4
	Get R1; I32WrapI64; I64Load $8; Set R5
	Get R1; I32WrapI64; I64Load $16; Set R6
	Get R1; I32WrapI64; I64Load $24; Set R7
	I64Load tab+16(FP); Set R13
	I64Load nb+24(FP); Set R2
	Block
	Get R2
	I64Eqz
	BrIf $0
	Loop
		V128Const $0, $0; Set V3
		PAIRS(0); PAIRS(1); PAIRS(2); PAIRS(3); PAIRS(4); PAIRS(5); PAIRS(6); PAIRS(7)
		// each int16 lane of V3 adds 16 int8: no overflow
		Get R0; I32WrapI64
		TAB(R4); F32x4Splat; TAB(R5); F32x4ReplaceLane $0, $1; TAB(R6); F32x4ReplaceLane $0, $2; TAB(R7); F32x4ReplaceLane $0, $3
		V128Store $0, $256
		Get R0; I32WrapI64; Get V3; I32x4ExtaddPairwiseI16x8S; V128Store $0, $272
		ADD(R0, 288)
		ADD(R4, 34); ADD(R5, 34); ADD(R6, 34); ADD(R7, 34)
		COUNTDOWN(R2)
	End
	End
	RET

// func q8_0RowsN(x, yq *byte, tab *float32, nb, rows, quads int, out *float32)
// sets out[16r+4q+l] to the dot of Q8_0 row r (rows ≥ 1 rows of nb ≥ 1
// blocks at x) with activation l of quad q < quads (1..4, prepared by
// prepQ8_0Quad at yq, nb quad blocks apart), exactly as dotQ8_0Ref.
TEXT ·q8_0RowsN(SB), NOSPLIT, $0-56
	ROWSN(34, INTQ8, FLT8, MACS1, MACS2, MACS3, MACS4)
	RET

// func q4_0RowsN(x, yq *byte, tab *float32, nb, rows, quads int, out *float32)
// is q8_0RowsN for Q4_0 rows (dotQ4_0Ref).
TEXT ·q4_0RowsN(SB), NOSPLIT, $0-56
	ROWSN(18, INTQ4, FLT4, MACS1, MACS2, MACS3, MACS4)
	RET

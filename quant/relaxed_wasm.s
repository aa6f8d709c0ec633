//go:build goexperiment.simd && relaxedsimd

#include "textflag.h"
#include "simd_wasm.h"
#include "relaxed_wasm.h"

// The integer parts of the relaxed-SIMD kernels (relaxed_wasm.go): the
// SIMD128 kernels' sums (q4_k_wasm.s, q6_k_wasm.s, dotrows_wasm.s, which
// give the bounds that keep them exact in int32) computed with
// i16x8.relaxed_dot_i8x16_i7x16_s (RDOT16: two int8·i7 products a lane,
// one pmaddubsw on x86), the int16 lanes then widened and scaled at once by
// i32x4.dot_i16x8_s with the sub-block's scale (or added first while the
// sum provably fits in int16: at most 2·15·128 a lane for two nibble
// dots). The int8 activations, as they are, are always its first operand;
// the second is kept in 0..127 (see RDOT16): the unsigned nibbles of Q4_K
// (0..15) and the unsigned quants of Q6_K (0..63), whose offset of 32 is
// taken off with the activations' sums. (Q4_0's Dot the same way measured
// no faster than its SIMD128 kernel in the browser; its DotRows, four rows
// a pass, is in rows4_relaxed_wasm.s. Q8_0, whose weights and
// activations are both full int8, needs two dots, of y's low 7 bits and of
// its sign bit, which measured slower: its Dot is not here. Its DotRows,
// in rows4_relaxed_wasm.s, takes one dot instead, of the weights times the
// activation's signs against its magnitudes.)
//
// register use: R0 weight block, R1 activation block, R2 blocks left,
// R3 output; in the RowSums kernels R13 rows left, R14 the row's first
// output, R15 4·rows (an output row's stride), as in dotrows_wasm.s.

// PY pushes the 16 activation bytes at R1+off.
#define PY(off) Get R1; I32WrapI64; V128Load $(off)

// LO and HI push the low and high nibbles of vector rv as bytes (V0 holds
// 0x0f bytes).
#define LO(rv) Get rv; Get V0; V128And
#define HI(rv) Get rv; I32Const $4; I16x8ShrU; Get V0; V128And

// ROWS starts a RowSums kernel; NEXTROW moves R14 to the next row's first
// output and loops while rows are left (as in dotrows_wasm.s).
#define ROWS(outarg, rowsarg) \
	I64Load x+0(FP); Set R0; \
	I64Load outarg; Set R14; \
	I64Load rowsarg; Tee R13; I64Const $2; I64Shl; Set R15
#define NEXTROW ADD(R14, 4); COUNTDOWN(R13)

// ---- Q4_K ----
// R4..R10 the scales and mins (SCALESMINS), V1 the block's Σ scale·q·y,
// V2, V3 a group's 32 quant bytes, V5 its Σ min·bsum.

// SCALE widens the pushed int16 lanes in pairs, times the scale in byte
// sh/8 of sreg (i32x4.dot_i16x8_s with it splat), and adds them to V1.
#define SCALE(sreg, sh) \
	Get sreg; I64Const $(sh); I64ShrU; I64Const $0xff; I64And; I32WrapI64; I16x8Splat; \
	I32x4DotI16x8S; Get V1; I32x4Add; Set V1

// GROUP adds the 64 weights of quant bytes qoff..qoff+31 (the low
// nibbles a sub-block with the scale in byte sh1/8 of sreg, the high ones
// the next with sh2/8) against the activations at R1+yoff..yoff+63 to V1.
#define GROUP(qoff, yoff, sreg, sh1, sh2) \
	Get R0; I32WrapI64; V128Load $(qoff); Set V2; \
	Get R0; I32WrapI64; V128Load $(qoff+16); Set V3; \
	PY(yoff); LO(V2); RDOT16; PY(yoff+16); LO(V3); RDOT16; I16x8Add; SCALE(sreg, sh1); \
	PY(yoff+32); HI(V2); RDOT16; PY(yoff+48); HI(V3); RDOT16; I16x8Add; SCALE(sreg, sh2)

// Q4KBLOCK sets V1 to the lanes of the Q4_K block at R0's Σ scale·q·y and
// V5 to those of its Σ min·bsum, against the Q8_K block at R1.
#define Q4KBLOCK \
	SCALESMINS; \
	V128Const $0, $0; Set V1; \
	GROUP(16, 4, R7, 0, 8); \
	GROUP(48, 68, R7, 16, 24); \
	GROUP(80, 132, R8, 0, 8); \
	GROUP(112, 196, R8, 16, 24); \
	Get R9; I32WrapI64; I32x4Splat; Get R10; I32WrapI64; I32x4ReplaceLane $0, $1; \
	I16x8ExtendLowI8x16U; Set V5; \
	PY(260); I32x4ExtaddPairwiseI16x8S; Get V5; I32x4ExtendLowI16x8U; I32x4Mul; \
	PY(276); I32x4ExtaddPairwiseI16x8S; Get V5; I32x4ExtendHighI16x8U; I32x4Mul; \
	I32x4Add; Set V5

// func q4KIntSumsRelaxed(x, y *byte, nb int, out *[2 * q4KChunk]int32)
TEXT ·q4KIntSumsRelaxed(SB), NOSPLIT, $0-32
	I64Load x+0(FP); Set R0
	I64Load y+8(FP); Set R1
	I64Load nb+16(FP); Set R2
	I64Load out+24(FP); Set R3
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f
	Set V0
	Block
	Get R2
	I64Eqz
	BrIf $0
	Loop
		Q4KBLOCK
		Get R3; I32WrapI64; HSUM(V1); I32Store $0
		Get R3; I32WrapI64; HSUM(V5); I32Store $128
		ADD(R0, 144)
		ADD(R1, 292)
		ADD(R3, 4)
		COUNTDOWN(R2)
	End
	End
	RET

// func q4KRowSumsRelaxed(x, y *byte, nb, rows int, out *int32)
// sets, for row r and block j, out[rows*j+r] to Σ scale·q·y and
// out[rows*nb+rows*j+r] to Σ min·bsum; the rows are consecutive at x,
// nb ≥ 1. R12 is the output of Σ min·bsum.
TEXT ·q4KRowSumsRelaxed(SB), NOSPLIT, $0-40
	ROWS(out+32(FP), rows+24(FP))
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f
	Set V0
	Block
	Get R13
	I64Eqz
	BrIf $0
	Loop
		I64Load y+8(FP); Set R1
		I64Load nb+16(FP); Set R2
		Get R14; Set R3
		Get R3; Get R15; Get R2; I64Mul; I64Add; Set R12
		Loop
			Q4KBLOCK
			Get R3; I32WrapI64; HSUM(V1); I32Store $0
			Get R12; I32WrapI64; HSUM(V5); I32Store $0
			ADD(R0, 144)
			ADD(R1, 292)
			Get R3; Get R15; I64Add; Set R3
			Get R12; Get R15; I64Add; Set R12
			COUNTDOWN(R2)
		End
		NEXTROW
	End
	End
	RET

// ---- Q6_K ----
// V0 0x0f bytes, V5 0x30 bytes, V1 the block's accumulator, V2, V3, V4 16
// bytes of ql, ql+32 and qh, V7 16 quants (0..63), V8 the scales.

// SUB16 adds the dot of the 16 quants in V7 with the activations at
// R1+yoff (int16 pairs, at most 2·63·128), times the int8 scale at
// R0+scoff, to V1.
#define SUB16(yoff, scoff) \
	PY(yoff); Get V7; RDOT16; \
	Get R0; I32WrapI64; I32Load8S $(scoff); I16x8Splat; I32x4DotI16x8S; \
	Get V1; I32x4Add; Set V1

// QUARTER adds the four sub-blocks of lanes lo..lo+15 of ql (and hi, qh)
// against activations yoff, yoff+32, yoff+64, yoff+96, scales scoff,
// scoff+2, scoff+4, scoff+6 (the quants as q6_k_wasm.s builds them,
// without the offset).
#define QUARTER(lo, hi, qh, yoff, scoff) \
	Get R0; I32WrapI64; V128Load $(lo); Set V2; \
	Get R0; I32WrapI64; V128Load $(hi); Set V3; \
	Get R0; I32WrapI64; V128Load $(qh); Set V4; \
	Get V2; Get V0; V128And; Get V4; I32Const $4; I16x8Shl; Get V5; V128And; V128Or; Set V7; \
	SUB16(yoff, scoff); \
	Get V3; Get V0; V128And; Get V4; I32Const $2; I16x8Shl; Get V5; V128And; V128Or; Set V7; \
	SUB16(yoff+32, scoff+2); \
	Get V2; I32Const $4; I8x16ShrU; Get V4; Get V5; V128And; V128Or; Set V7; \
	SUB16(yoff+64, scoff+4); \
	Get V3; I32Const $4; I8x16ShrU; Get V4; I32Const $2; I16x8ShrU; Get V5; V128And; V128Or; Set V7; \
	SUB16(yoff+96, scoff+6)

// Q6KBLOCK sets V1 to the lanes of the Q6_K block at R0's Σ scale·(q-32)·y
// against the Q8_K block at R1: Σ scale·q·y - 32·Σ scale·bsum, with the
// activation's sums of its 16-element sub-blocks (bsums, which
// quantizeQ8_K writes with its quants).
#define Q6KBLOCK \
	V128Const $0, $0; Set V1; \
	QUARTER(0, 32, 128, 4, 192); \
	QUARTER(16, 48, 144, 20, 193); \
	QUARTER(64, 96, 160, 132, 200); \
	QUARTER(80, 112, 176, 148, 201); \
	Get R0; I32WrapI64; V128Load $192; Set V8; \
	Get V8; I16x8ExtendLowI8x16S; PY(260); I32x4DotI16x8S; \
	Get V8; I16x8ExtendHighI8x16S; PY(276); I32x4DotI16x8S; I32x4Add; \
	I32Const $5; I32x4Shl; Set V8; \
	Get V1; Get V8; I32x4Sub; Set V1

#define Q6KCONSTS \
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; Set V0; \
	V128Const $0x3030303030303030, $0x3030303030303030; Set V5

// func q6KIntSumsRelaxed(x, y *byte, nb int, out *[q6KChunk]int32)
TEXT ·q6KIntSumsRelaxed(SB), NOSPLIT, $0-32
	I64Load x+0(FP); Set R0
	I64Load y+8(FP); Set R1
	I64Load nb+16(FP); Set R2
	I64Load out+24(FP); Set R3
	Q6KCONSTS
	Block
	Get R2
	I64Eqz
	BrIf $0
	Loop
		Q6KBLOCK
		Get R3; I32WrapI64; HSUM(V1); I32Store $0
		ADD(R0, 210)
		ADD(R1, 292)
		ADD(R3, 4)
		COUNTDOWN(R2)
	End
	End
	RET

// func q6KRowSumsRelaxed(x, y *byte, nb, rows int, out *int32)
// sets out[rows*j+r] to row r's block j's Σ scale·q·y; nb ≥ 1.
TEXT ·q6KRowSumsRelaxed(SB), NOSPLIT, $0-40
	ROWS(out+32(FP), rows+24(FP))
	Q6KCONSTS
	Block
	Get R13
	I64Eqz
	BrIf $0
	Loop
		I64Load y+8(FP); Set R1
		I64Load nb+16(FP); Set R2
		Get R14; Set R3
		Loop
			Q6KBLOCK
			Get R3; I32WrapI64; HSUM(V1); I32Store $0
			ADD(R0, 210)
			ADD(R1, 292)
			Get R3; Get R15; I64Add; Set R3
			COUNTDOWN(R2)
		End
		NEXTROW
	End
	End
	RET

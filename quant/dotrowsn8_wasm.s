//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"

// The Q8_0 and Q4_0 RowSumsN kernels (dotrowsn_wasm.go; in a file of their
// own, so that go vet's assembly check does not read their macros as part
// of dotrowsn_wasm.s's last function).

// PA pushes the 8 prepared int16 activations at R11+off.
#define PA(off) Get R11; I32WrapI64; V128Load $(off)

// ---- Q8_0 and Q4_0 ----
// Activations prepared by splitQ8_0 (64 bytes a block). A block's four
// int32 lanes are stored as they are, out[4*(acts*j+a) ..] for block j and
// activation a; the caller adds them up (hsum4), four blocks at once.
// Two blocks go at a time (eight weight vectors), then the last one.
// register use: R0 weight block, R1 block j of the first prepared
// activation, R2 blocks left, R3 an activation's output, R11 its prepared
// block, R12 16·acts (from one block's outputs to the next's), R13
// activations left, R14 block j's first output, R15 the prepared
// activations' stride (64·nb); V0 the int16 nibble mask (Q4_0), V2 16
// bytes of quants, V3 16 more (Q8_0), V8..V15 two blocks' weights.

// W8 sets wa..wd to the 32 int8 quants of the Q8_0 block at R0+off as
// int16 lanes, in the order of the prepared activations.
#define W8(off, wa, wb, wc, wd) \
	Get R0; I32WrapI64; V128Load $(off+2); Set V2; \
	Get R0; I32WrapI64; V128Load $(off+18); Set V3; \
	EVEN(V2); Set wa; ODD(V2); Set wb; EVEN(V3); Set wc; ODD(V3); Set wd

// W4 sets wa..wd to the 32 nibbles (0..15) of the Q4_0 block at R0+off
// as int16 lanes, in the order of the prepared activations.
#define W4(off, wa, wb, wc, wd) \
	Get R0; I32WrapI64; V128Load $(off+2); Set V2; \
	Get V2; Get V0; V128And; Set wa; \
	Get V2; I32Const $8; I16x8ShrU; Get V0; V128And; Set wb; \
	Get V2; I32Const $4; I16x8ShrU; Get V0; V128And; Set wc; \
	Get V2; I32Const $12; I16x8ShrU; Set wd

// DOT4 pushes the lanes of wa..wd dotted with the prepared block at R11+p.
#define DOT4(wa, wb, wc, wd, p) \
	Get wa; PA(p); I32x4DotI16x8S; \
	Get wb; PA(p+16); I32x4DotI16x8S; I32x4Add; \
	Get wc; PA(p+32); I32x4DotI16x8S; I32x4Add; \
	Get wd; PA(p+48); I32x4DotI16x8S; I32x4Add

// BLOCKS0 is the body of a 32-weight-block RowSumsN kernel, W the weight
// decoder and xsize the weight block's size.
#define BLOCKS0(W, xsize) \
	I64Load x+0(FP); Set R0; \
	I64Load yp+8(FP); Set R1; \
	I64Load nb+16(FP); Tee R2; \
	I64Const $6; I64Shl; Set R15; \
	I64Load out+32(FP); Set R14; \
	I64Load acts+24(FP); I64Const $4; I64Shl; Set R12; \
	V128Const $0x000f000f000f000f, $0x000f000f000f000f; \
	Set V0; \
	Block; \
	Loop; \
		Get R2; I64Const $2; I64LtU; BrIf $1; \
		W(0, V8, V9, V10, V11); \
		W(xsize, V12, V13, V14, V15); \
		Get R1; Set R11; Get R14; Set R3; I64Load acts+24(FP); Set R13; \
		Loop; \
			Get R3; I32WrapI64; DOT4(V8, V9, V10, V11, 0); V128Store $0, $0; \
			Get R3; Get R12; I64Add; I32WrapI64; DOT4(V12, V13, V14, V15, 64); V128Store $0, $0; \
			ADD(R3, 16); \
			Get R11; Get R15; I64Add; Set R11; \
			COUNTDOWN(R13); \
		End; \
		ADD(R0, 2*xsize); \
		ADD(R1, 128); \
		Get R14; Get R12; I64Const $1; I64Shl; I64Add; Set R14; \
		Get R2; I64Const $2; I64Sub; Set R2; \
		Br $0; \
	End; \
	End; \
	Block; \
	Get R2; I64Eqz; BrIf $0; \
	W(0, V8, V9, V10, V11); \
	Get R1; Set R11; Get R14; Set R3; I64Load acts+24(FP); Set R13; \
	Loop; \
		Get R3; I32WrapI64; DOT4(V8, V9, V10, V11, 0); V128Store $0, $0; \
		ADD(R3, 16); \
		Get R11; Get R15; I64Add; Set R11; \
		COUNTDOWN(R13); \
	End; \
	End; \
	RET

// func q8_0RowSumsN(x, yp *byte, nb, acts int, out *int32)
// sets out[4*(acts*j+a) ..] to four int32 lanes summing to block j's Σ x·y
// against activation a (nb ≥ 1, acts ≥ 1).
TEXT ·q8_0RowSumsN(SB), NOSPLIT, $0-40
	BLOCKS0(W8, 34)

// func q4_0RowSumsN(x, yp *byte, nb, acts int, out *int32)
// sets out[4*(acts*j+a) ..] to four int32 lanes summing to block j's Σ q·y
// (the nibbles, without the offset of 8) against activation a (nb ≥ 1,
// acts ≥ 1).
TEXT ·q4_0RowSumsN(SB), NOSPLIT, $0-40
	BLOCKS0(W4, 18)

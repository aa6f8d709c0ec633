//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"

// The attention kernels of a group of query heads over an fp16 KV head
// (scoresF16SIMD128 and accumulateF16SIMD128 in vec_wasm.go), written by
// hand: a tight wasm loop keeps its values in locals, where the archsimd
// version's loops spent their time on bounds checks and spills. Each
// position's key or value row is widened to float32 once, into a buffer
// on the caller's stack, then used by every head of the group.
//
// register use:
//	R0 scores / outputs, R1 queries / weights, R3 the widened row,
//	R4 hd, R5 the rows' stride in bytes, R6 positions left, R7 heads,
//	R8 position t's score / weight of head 0, R9 heads left,
//	R10 the head's query / output, R11 its score / weight, R12 chunks
//	left, R13 the widened row's chunk, R14 the fp16 row, R15 n·4 (a head's
//	scores / weights apart)
//	V0, V1 sums or the weight, V2 eight fp16 values, V3 four of them as
//	int32 lanes, V14 scratch

// WIDEN pushes the float32 values of the fp16 values in the low halves
// of u's int32 lanes, as widenF16x4 (float_wasm.go): the exponent and
// mantissa bits moved up by 13 read as a float32 are the value times
// 2^-112, exactly, so one multiplication by 2^112 (0x77800000) gives it;
// infinities and NaNs (em >= 0x7c00<<13) get the all-ones exponent; the
// sign is or-ed in last.
#define WIDEN(u) \
	Get u; V128Const $0x00007fff00007fff, $0x00007fff00007fff; V128And; I32Const $13; I32x4Shl; Set V14; \
	Get V14; V128Const $0x7f8000007f800000, $0x7f8000007f800000; V128Or; \
	Get V14; V128Const $0x7780000077800000, $0x7780000077800000; F32x4Mul; \
	Get V14; V128Const $0x0f8000000f800000, $0x0f8000000f800000; I32x4GeU; \
	V128Bitselect; \
	Get u; V128Const $0x0000800000008000, $0x0000800000008000; V128And; I32Const $16; I32x4Shl; \
	V128Or

// ROW widens the hd fp16 values at R14 into the float32 buffer at R3.
#define ROW \
	Get R14; Set R12; \
	Get R3; Set R13; \
	Get R4; I64Const $3; I64ShrU; Set R9; \
	Loop; \
		Get R12; I32WrapI64; V128Load $0; Set V2; \
		Get R13; I32WrapI64; Get V2; I32x4ExtendLowI16x8U; Set V3; WIDEN(V3); V128Store $0, $0; \
		Get R13; I32WrapI64; Get V2; I32x4ExtendHighI16x8U; Set V3; WIDEN(V3); V128Store $0, $16; \
		ADD(R12, 16); ADD(R13, 32); COUNTDOWN(R9); \
	End

#define ARGS(a, b, rows, buf) \
	I64Load a+0(FP); Set R0; \
	I64Load b+8(FP); Set R1; \
	I64Load rows+16(FP); Set R14; \
	I64Load buf+24(FP); Set R3; \
	I64Load hd+32(FP); Set R4; \
	I64Load stride+40(FP); I64Const $1; I64Shl; Set R5; \
	I64Load n+48(FP); Set R6; \
	I64Load heads+56(FP); Set R7; \
	Get R6; I64Const $2; I64Shl; Set R15; \
	Get R1; Set R8

// func scoresF16Rows(sc, q *float32, keys *uint16, kbuf *float32, hd, stride, n, heads int)
// sets sc[j*n+t] to the dot of query j (q[j*hd:]) with key t (keys[t*stride:],
// hd fp16 values) for t < n and j < g, summed as dotF16VecRef: two
// four-lane sums over the low and high halves of every 8 values, added,
// then lanes (0+2) + (1+3). hd is a multiple of 8, n and g at least 1.
TEXT ·scoresF16Rows(SB), NOSPLIT, $0-64
	ARGS(sc, q, keys, kbuf)
	Get R0; Set R8
	Loop
		ROW
		Get R1; Set R10
		Get R8; Set R11
		Get R7; Set R9
		Loop
			V128Const $0, $0; Set V0
			V128Const $0, $0; Set V1
			Get R3; Set R13
			Get R4; I64Const $3; I64ShrU; Set R12
			Loop
				Get V0; Get R10; I32WrapI64; V128Load $0; Get R13; I32WrapI64; V128Load $0; F32x4Mul; F32x4Add; Set V0
				Get V1; Get R10; I32WrapI64; V128Load $16; Get R13; I32WrapI64; V128Load $16; F32x4Mul; F32x4Add; Set V1
				ADD(R10, 32); ADD(R13, 32); COUNTDOWN(R12)
			End
			Get V0; Get V1; F32x4Add; Set V0
			Get R11; I32WrapI64
			Get V0; F32x4ExtractLane $0, $0; Get V0; F32x4ExtractLane $0, $2; F32Add
			Get V0; F32x4ExtractLane $0, $1; Get V0; F32x4ExtractLane $0, $3; F32Add
			F32Add
			F32Store $0
			Get R11; Get R15; I64Add; Set R11
			COUNTDOWN(R9)
		End
		ADD(R8, 4)
		Get R14; Get R5; I64Add; Set R14
		COUNTDOWN(R6)
	End
	RET

// func accumulateF16Rows(out, w *float32, vals *uint16, vbuf *float32, hd, stride, n, heads int)
// adds w[j*n+t]·value t (vals[t*stride:], hd fp16 values) to output j
// (out[j*hd:]) for t < n in order and j < g, each element one float32
// multiply and one add, as axpyF16Ref. hd is a multiple of 8, n and g at
// least 1.
TEXT ·accumulateF16Rows(SB), NOSPLIT, $0-64
	ARGS(out, w, vals, vbuf)
	Loop
		ROW
		Get R0; Set R10
		Get R8; Set R11
		Get R7; Set R9
		Loop
			Get R11; I32WrapI64; F32Load $0; F32x4Splat; Set V0
			Get R3; Set R13
			Get R4; I64Const $3; I64ShrU; Set R12
			Loop
				Get R10; I32WrapI64
				Get R10; I32WrapI64; V128Load $0; Get V0; Get R13; I32WrapI64; V128Load $0; F32x4Mul; F32x4Add
				V128Store $0, $0
				Get R10; I32WrapI64
				Get R10; I32WrapI64; V128Load $16; Get V0; Get R13; I32WrapI64; V128Load $16; F32x4Mul; F32x4Add
				V128Store $0, $16
				ADD(R10, 32); ADD(R13, 32); COUNTDOWN(R12)
			End
			Get R11; Get R15; I64Add; Set R11
			COUNTDOWN(R9)
		End
		ADD(R8, 4)
		Get R14; Get R5; I64Add; Set R14
		COUNTDOWN(R6)
	End
	RET

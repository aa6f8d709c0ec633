//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"

// The wasm SIMD128 dots of Q5_0, Q5_1 and Q4_1 (q5_wasm.go) in ggml's x86
// order (x86order.go), written by hand as iq4_xs_wasm.s: per block, the
// quants of weights 0..15 and 16..31 are split into even and odd bytes as
// int16 lanes and dotted with the activations' (i32x4.dot_i16x8_s), so
// int32 lane i of the two halves holds the products of weights 4i..4i+3
// and 16+4i..16+4i+3 (ggml's lanes 0..3 and 4..7, exact: |·| ≤ 4·31·128);
// each lane is added to its accumulator by the fused multiply-add of
// simd_wasm.h (FMA8) with the block's d·dy.
//
// The 5th bits: qh is splatted, its bytes 0, 1 (weights 0..15) or 2, 3
// (16..31) spread to eight bytes each (i8x16.swizzle), each byte or-ed with
// all bits but the one it tests and compared with all ones, as ggml's
// bytes_from_bits_32.
//
// register use:
//	R0 weight block, R1 activation block, R2 blocks left, R3 acc, R6 the
//	blocks' d·dy; V0 0x0f bytes, V1 the qh splat, V2, V3 int32 lanes 0..3,
//	4..7, V5 16 quants, V6 16 nibble bytes, V7 16 activations, V8 d·dy
//	(f64x2), V14, V15 accumulators 0..3, 4..7 (V4, V9..V13 FMA8's)

// HIBITS pushes 0x10 in the bytes of the 16 weights (from 16h) whose 5th
// bit is set.
#define HIBITS(h) \
	Get V1; V128Const $(0x0000000000000000+0x0202020202020202*h), $(0x0101010101010101+0x0202020202020202*h); I8x16Swizzle; \
	V128Const $0x7fbfdfeff7fbfdfe, $0x7fbfdfeff7fbfdfe; V128Or; \
	V128Const $-1, $-1; I8x16Eq; \
	V128Const $0x1010101010101010, $0x1010101010101010; V128And

// LANES16 pushes the int32 lanes of Σ q·y over the 16 quants in V5 and the
// activations at R1+yoff.
#define LANES16(yoff) \
	Get R1; I32WrapI64; V128Load $(yoff); Set V7; \
	EVEN(V5); EVEN(V7); I32x4DotI16x8S; \
	ODD(V5); ODD(V7); I32x4DotI16x8S; I32x4Add

// ARGS loads the arguments (x, y, d, nb, acc), the accumulators and the
// nibble mask.
#define ARGS \
	I64Load x+0(FP); Set R0; \
	I64Load y+8(FP); Set R1; \
	I64Load d+16(FP); Set R6; \
	I64Load nb+24(FP); Set R2; \
	I64Load acc+32(FP); Set R3; \
	Get R3; I32WrapI64; V128Load $0; Set V14; \
	Get R3; I32WrapI64; V128Load $16; Set V15; \
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; Set V0

// NEXT does the block's fused multiply-adds, moves to the next block
// (xsize, ysize its bytes) and loops while blocks are left; END stores the
// accumulators.
#define NEXT(xsize, ysize) \
	Get R6; I32WrapI64; F32Load $0; F64PromoteF32; F64x2Splat; Set V8; \
	FMA8; \
	ADD(R0, xsize); \
	ADD(R1, ysize); \
	ADD(R6, 4); \
	COUNTDOWN(R2)
#define END \
	Get R3; I32WrapI64; Get V14; V128Store $0, $0; \
	Get R3; I32WrapI64; Get V15; V128Store $0, $16; \
	RET

// func q5_0Acc(x, y *byte, d *float32, nb int, acc *[8]float32)
// adds the terms of the nb ≥ 1 Q5_0 blocks at x and Q8_0 blocks at y
// (d[b] their d·dy) to acc; the quants q-16 are int8.
TEXT ·q5_0Acc(SB), NOSPLIT, $0-40
	ARGS
	Loop
		Get R0; I32WrapI64; V128Load $6; Set V6
		Get R0; I32WrapI64; I32Load $2; I32x4Splat; Set V1
		Get V6; Get V0; V128And; HIBITS(0); V128Or; I32Const $16; I8x16Splat; I8x16Sub; Set V5
		LANES16(2); Set V2
		Get V6; I32Const $4; I8x16ShrU; HIBITS(1); V128Or; I32Const $16; I8x16Splat; I8x16Sub; Set V5
		LANES16(18); Set V3
		NEXT(22, 34)
	End
	END

// func q5_1Acc(x, y *byte, d *float32, nb int, acc *[8]float32)
// is q5_0Acc for Q5_1 blocks (unsigned quants) and Q8_1 activations.
TEXT ·q5_1Acc(SB), NOSPLIT, $0-40
	ARGS
	Loop
		Get R0; I32WrapI64; V128Load $8; Set V6
		Get R0; I32WrapI64; I32Load $4; I32x4Splat; Set V1
		Get V6; Get V0; V128And; HIBITS(0); V128Or; Set V5
		LANES16(4); Set V2
		Get V6; I32Const $4; I8x16ShrU; HIBITS(1); V128Or; Set V5
		LANES16(20); Set V3
		NEXT(24, 36)
	End
	END

// func q4_1Acc(x, y *byte, d *float32, nb int, acc *[8]float32)
// is q5_1Acc for Q4_1 blocks.
TEXT ·q4_1Acc(SB), NOSPLIT, $0-40
	ARGS
	Loop
		Get R0; I32WrapI64; V128Load $4; Set V6
		Get V6; Get V0; V128And; Set V5
		LANES16(4); Set V2
		Get V6; I32Const $4; I8x16ShrU; Set V5
		LANES16(20); Set V3
		NEXT(20, 36)
	End
	END

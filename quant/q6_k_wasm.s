//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"

// The integer part of the wasm SIMD128 Q6_K dot (dotQ6_KSIMD128 in q6_k_wasm.go),
// written by hand like q4_k_wasm.s (see there for the two-operand
// lane instructions). For 16 lanes l of a half, ql[l], ql[l+32] and qh[l]
// give the quants (-32..31) of four 16-weight sub-blocks, built in int8
// lanes (the shifts of qh are 16-bit ones where the 0x30 mask drops the
// bits that cross a byte: engines emulate 8-bit shifts on x86); the quants and the int8 activations are then split into their
// even and odd bytes as int16 lanes (arithmetic shifts) and multiplied and
// added in pairs by i32x4.dot_i16x8_s, and the int32 lanes are multiplied
// by the sub-block's int8 scale (i32x4.mul). A product is at most 4096 in
// magnitude (-32·-128), a lane of a block at most 64 of them times 128:
// exact in int32, so the lane sums equal the reference's integer sum.

// register use:
//	R0 weight block, R1 activation block, R2 blocks left, R3 output
//	V0 0x0f bytes, V5 0x30 bytes, V6 32 bytes, V1 the block's accumulator,
//	V2, V3, V4 16 bytes of ql, ql+32 and qh, V7 16 quants, V8 16 activations

// SUB16 adds the dot of the 16 quants in V7 with the activations at
// R1+yoff, times the int8 scale at R0+scoff, to V1.
#define SUB16(yoff, scoff) \
	Get R1; I32WrapI64; V128Load $(yoff); Set V8; \
	Get V7; I32Const $8; I16x8Shl; I32Const $8; I16x8ShrS; \
	Get V8; I32Const $8; I16x8Shl; I32Const $8; I16x8ShrS; \
	I32x4DotI16x8S; \
	Get V7; I32Const $8; I16x8ShrS; \
	Get V8; I32Const $8; I16x8ShrS; \
	I32x4DotI16x8S; I32x4Add; \
	Get R0; I32WrapI64; I32Load8S $(scoff); I32x4Splat; I32x4Mul; \
	Get V1; I32x4Add; Set V1

// QUARTER adds the four sub-blocks of lanes lo..lo+15 of ql (and hi, qh)
// against activations yoff, yoff+32, yoff+64, yoff+96, scales scoff,
// scoff+2, scoff+4, scoff+6.
#define QUARTER(lo, hi, qh, yoff, scoff) \
	Get R0; I32WrapI64; V128Load $(lo); Set V2; \
	Get R0; I32WrapI64; V128Load $(hi); Set V3; \
	Get R0; I32WrapI64; V128Load $(qh); Set V4; \
	Get V2; Get V0; V128And; Get V4; I32Const $4; I16x8Shl; Get V5; V128And; V128Or; Get V6; I8x16Sub; Set V7; \
	SUB16(yoff, scoff); \
	Get V3; Get V0; V128And; Get V4; I32Const $2; I16x8Shl; Get V5; V128And; V128Or; Get V6; I8x16Sub; Set V7; \
	SUB16(yoff+32, scoff+2); \
	Get V2; I32Const $4; I8x16ShrU; Get V4; Get V5; V128And; V128Or; Get V6; I8x16Sub; Set V7; \
	SUB16(yoff+64, scoff+4); \
	Get V3; I32Const $4; I8x16ShrU; Get V4; I32Const $2; I16x8ShrU; Get V5; V128And; V128Or; Get V6; I8x16Sub; Set V7; \
	SUB16(yoff+96, scoff+6)

// func q6KIntSums(x, y *byte, nb int, out *[q6KChunk]int32)
TEXT ·q6KIntSums(SB), NOSPLIT, $0-32
	I64Load x+0(FP)
	Set R0
	I64Load y+8(FP)
	Set R1
	I64Load nb+16(FP)
	Set R2
	I64Load out+24(FP)
	Set R3
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f
	Set V0
	V128Const $0x3030303030303030, $0x3030303030303030
	Set V5
	V128Const $0x2020202020202020, $0x2020202020202020
	Set V6

	Block
	Get R2
	I64Eqz
	BrIf $0
	Loop
		V128Const $0, $0
		Set V1
		QUARTER(0, 32, 128, 4, 192)
		QUARTER(16, 48, 144, 20, 193)
		QUARTER(64, 96, 160, 132, 200)
		QUARTER(80, 112, 176, 148, 201)

		Get R3; I32WrapI64
		Get V1; I32x4ExtractLane $0, $0; Get V1; I32x4ExtractLane $0, $1; I32Add
		Get V1; I32x4ExtractLane $0, $2; I32Add; Get V1; I32x4ExtractLane $0, $3; I32Add
		I32Store $0

		ADD(R0, 210)
		ADD(R1, 292)
		ADD(R3, 4)
		COUNTDOWN(R2)
	End
	End
	RET

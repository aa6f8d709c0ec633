//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"

// The integer parts of the wasm SIMD128 DotRows kernels (dotrows_wasm.go):
// the activation is split once per matrix-vector product into its even
// and odd int8 bytes as int16 lanes (splitQ8_K, splitQ8_0), so that the
// row kernels only split the weights before i32x4.dot_i16x8_s. The row
// kernels compute the same integer sums as q4_k_wasm.s,
// q6_k_wasm.s and q8_0_wasm.s (see there for the bounds that
// keep them exact in int32 and for the two-operand lane instructions), for
// several consecutive weight rows against one activation.
//
// A prepared activation holds, for every 16 int8 activations, 16 bytes of
// the even ones as int16 lanes and then 16 bytes of the odd ones: 2 bytes
// per activation, in order.

// ROWS starts a RowSums kernel: R0 the first row, R14 the first output,
// R13 the rows, R15 4·rows (an output row's stride). NEXTROW moves R14 to
// the next row's first output and loops while rows are left.
#define ROWS(outarg, rowsarg) \
	I64Load x+0(FP); Set R0; \
	I64Load outarg; Set R14; \
	I64Load rowsarg; Tee R13; I64Const $2; I64Shl; Set R15
#define NEXTROW ADD(R14, 4); COUNTDOWN(R13)

// SPLIT16 splits the 16 bytes at R1+off into R0+2*(off-base) and the 16
// bytes after it.
#define SPLIT16(off, d) \
	Get R1; I32WrapI64; V128Load $(off); Set V1; \
	Get R0; I32WrapI64; EVEN(V1); V128Store $0, $(d); \
	Get R0; I32WrapI64; ODD(V1); V128Store $0, $(d+16)

// SUMS16 stores at R0+512+d/16 the int16 sums of the two 16-activation
// sub-blocks prepared at R0+d and R0+d+32: their even and odd lanes
// added (at most 2·128 in magnitude a lane), then the lanes of each.
#define SUMS16(d) \
	Get R0; I32WrapI64; V128Load $(d); Get R0; I32WrapI64; V128Load $(d+16); I16x8Add; \
	I32x4ExtaddPairwiseI16x8S; Set V1; \
	Get R0; I32WrapI64; V128Load $(d+32); Get R0; I32WrapI64; V128Load $(d+48); I16x8Add; \
	I32x4ExtaddPairwiseI16x8S; Set V2; \
	Get R0; I32WrapI64; HSUM(V1); I32Store16 $(512+d/16); \
	Get R0; I32WrapI64; HSUM(V2); I32Store16 $(512+d/16+2)

// func splitQ8_K(dst, src *byte, nb int)
// prepares nb Q8_K blocks into 544 bytes each: the 256 activations split
// (512 bytes), then the 16 int16 sums of their 16-activation sub-blocks.
TEXT ·splitQ8_K(SB), NOSPLIT, $0-24
	I64Load dst+0(FP)
	Set R0
	I64Load src+8(FP)
	Set R1
	I64Load nb+16(FP)
	Set R2
	Block
	Get R2
	I64Eqz
	BrIf $0
	Loop
		SPLIT16(4, 0); SPLIT16(20, 32); SPLIT16(36, 64); SPLIT16(52, 96)
		SPLIT16(68, 128); SPLIT16(84, 160); SPLIT16(100, 192); SPLIT16(116, 224)
		SPLIT16(132, 256); SPLIT16(148, 288); SPLIT16(164, 320); SPLIT16(180, 352)
		SPLIT16(196, 384); SPLIT16(212, 416); SPLIT16(228, 448); SPLIT16(244, 480)
		SUMS16(0); SUMS16(64); SUMS16(128); SUMS16(192)
		SUMS16(256); SUMS16(320); SUMS16(384); SUMS16(448)
		ADD(R0, 544)
		ADD(R1, 292)
		COUNTDOWN(R2)
	End
	End
	RET

// func splitQ8_0(dst *byte, ysum *int32, src *byte, nb int)
// also sets ysum[b] to the sum of block b's 32 activations.
TEXT ·splitQ8_0(SB), NOSPLIT, $0-32
	I64Load dst+0(FP)
	Set R0
	I64Load ysum+8(FP)
	Set R3
	I64Load src+16(FP)
	Set R1
	I64Load nb+24(FP)
	Set R2
	Block
	Get R2
	I64Eqz
	BrIf $0
	Loop
		Get R1; I32WrapI64; V128Load $2; Set V1
		Get R1; I32WrapI64; V128Load $18; Set V2
		EVEN(V1); Set V3; ODD(V1); Set V4; EVEN(V2); Set V5; ODD(V2); Set V6
		Get R0; I32WrapI64; Get V3; V128Store $0, $0
		Get R0; I32WrapI64; Get V4; V128Store $0, $16
		Get R0; I32WrapI64; Get V5; V128Store $0, $32
		Get R0; I32WrapI64; Get V6; V128Store $0, $48
		// each int16 lane of the sum adds four int8: no overflow
		Get V3; Get V4; I16x8Add; Get V5; Get V6; I16x8Add; I16x8Add
		I32x4ExtaddPairwiseI16x8S; Set V1
		Get R3; I32WrapI64
		Get V1; I32x4ExtractLane $0, $0; Get V1; I32x4ExtractLane $0, $1; I32Add
		Get V1; I32x4ExtractLane $0, $2; I32Add; Get V1; I32x4ExtractLane $0, $3; I32Add
		I32Store $0
		ADD(R0, 64)
		ADD(R1, 34)
		ADD(R3, 4)
		COUNTDOWN(R2)
	End
	End
	RET

// PY pushes the 8 prepared int16 activations at R11+off.
#define PY(off) Get R11; I32WrapI64; V128Load $(off)

// ---- Q4_K ----
// register use (q4KRowSums):
//	R0 weight block, R1 activation block (bsums), R11 prepared block,
//	R2 blocks left in the row, R13 rows left, R3 and R12 the outputs of
//	Σ scale·q·y and Σ min·bsum, R14 the row's first output, R15 4·rows, R4..R10 scales and mins as in
//	q4_k_wasm.s, V0 the int16 nibble mask, V1 the block's
//	accumulator, V2, V3 the 32 bytes of a group's quants, V5 the mins

// LO16 / HI16 push the int32 lanes of Σ q·y over the low / high nibbles
// of vector rv against the prepared activations at R11+p.
#define LO16(rv, p) \
	Get rv; Get V0; V128And; PY(p); I32x4DotI16x8S; \
	Get rv; I32Const $8; I16x8ShrU; Get V0; V128And; PY(p+16); I32x4DotI16x8S; \
	I32x4Add
#define HI16(rv, p) \
	Get rv; I32Const $4; I16x8ShrU; Get V0; V128And; PY(p); I32x4DotI16x8S; \
	Get rv; I32Const $12; I16x8ShrU; PY(p+16); I32x4DotI16x8S; \
	I32x4Add

// SCALE multiplies the pushed lanes by the scale in byte sh/8 of sreg
// and adds them to V1.
#define SCALE(sreg, sh) \
	Get sreg; I64Const $(sh); I64ShrU; I64Const $0xff; I64And; I32WrapI64; I32x4Splat; \
	I32x4Mul; Get V1; I32x4Add; Set V1

// GROUP adds the 64 weights of quant bytes qoff..qoff+31 against the
// prepared activations p..p+127 to V1.
#define GROUP(qoff, p, sreg, sh1, sh2) \
	Get R0; I32WrapI64; V128Load $(qoff); Set V2; \
	Get R0; I32WrapI64; V128Load $(qoff+16); Set V3; \
	LO16(V2, p); LO16(V3, p+32); I32x4Add; SCALE(sreg, sh1); \
	HI16(V2, p+64); HI16(V3, p+96); I32x4Add; SCALE(sreg, sh2)

// func q4KRowSums(x, yp, y *byte, nb, rows int, out *int32)
// sets, for row r and block j, out[rows*j+r] to Σ scale·q·y and
// out[rows*nb+rows*j+r] to Σ min·bsum; the rows are consecutive at x,
// nb ≥ 1.
TEXT ·q4KRowSums(SB), NOSPLIT, $0-48
	ROWS(out+40(FP), rows+32(FP))
	V128Const $0x000f000f000f000f, $0x000f000f000f000f
	Set V0
	Block
	Get R13
	I64Eqz
	BrIf $0
	Loop
		I64Load yp+8(FP); Set R11
		I64Load y+16(FP); Set R1
		I64Load nb+24(FP); Set R2
		Get R14; Set R3
		Get R3; Get R15; Get R2; I64Mul; I64Add; Set R12
		Loop
			SCALESMINS

			V128Const $0, $0
			Set V1
			GROUP(16, 0, R7, 0, 8)
			GROUP(48, 128, R7, 16, 24)
			GROUP(80, 256, R8, 0, 8)
			GROUP(112, 384, R8, 16, 24)

			Get R9; I32WrapI64; I32x4Splat; Get R10; I32WrapI64; I32x4ReplaceLane $0, $1
			I16x8ExtendLowI8x16U; Set V5
			Get R1; I32WrapI64; V128Load $260; I32x4ExtaddPairwiseI16x8S
			Get V5; I32x4ExtendLowI16x8U; I32x4Mul
			Get R1; I32WrapI64; V128Load $276; I32x4ExtaddPairwiseI16x8S
			Get V5; I32x4ExtendHighI16x8U; I32x4Mul
			I32x4Add; Set V5

			Get R3; I32WrapI64; HSUM(V1); I32Store $0
			Get R12; I32WrapI64; HSUM(V5); I32Store $0

			ADD(R0, 144)
			ADD(R1, 292)
			ADD(R11, 544)
			Get R3; Get R15; I64Add; Set R3
			Get R12; Get R15; I64Add; Set R12
			COUNTDOWN(R2)
		End
		NEXTROW
	End
	End
	RET

// ---- Q6_K ----
// register use (q6KRowSums): R0 weight block, R11 prepared block, R2
// blocks left in the row, R13 rows left, R3 output, R14 the row's first
// output, R15 4·rows (the same in q8_0RowSums and q4_0RowSums); V0 0x0f bytes, V5
// 0x30 bytes, V6 the int16 low-byte mask, V1 the block's accumulator, V2, V3, V4 16
// bytes of ql, ql+32 and qh, V7 16 quants.

// SUB16 adds the dot of the 16 quants (0..63, unsigned) in V7 with the
// prepared activations at R11+p, times the int8 scale at R0+scoff, to V1.
// The quants' offset of 32 is taken off once per block, with the
// sub-blocks' activation sums (Σ(q-32)·y = Σq·y - 32·Σy).
#define SUB16(p, scoff) \
	Get V7; Get V6; V128And; PY(p); I32x4DotI16x8S; \
	Get V7; I32Const $8; I16x8ShrU; PY(p+16); I32x4DotI16x8S; I32x4Add; \
	Get R0; I32WrapI64; I32Load8S $(scoff); I32x4Splat; I32x4Mul; \
	Get V1; I32x4Add; Set V1

// QUARTER: as in q6_k_wasm.s without the offset, with prepared
// activations at p, p+64, p+128, p+192.
#define QUARTER(lo, hi, qh, p, scoff) \
	Get R0; I32WrapI64; V128Load $(lo); Set V2; \
	Get R0; I32WrapI64; V128Load $(hi); Set V3; \
	Get R0; I32WrapI64; V128Load $(qh); Set V4; \
	Get V2; Get V0; V128And; Get V4; I32Const $4; I16x8Shl; Get V5; V128And; V128Or; Set V7; \
	SUB16(p, scoff); \
	Get V3; Get V0; V128And; Get V4; I32Const $2; I16x8Shl; Get V5; V128And; V128Or; Set V7; \
	SUB16(p+64, scoff+2); \
	Get V2; I32Const $4; I8x16ShrU; Get V4; Get V5; V128And; V128Or; Set V7; \
	SUB16(p+128, scoff+4); \
	Get V3; I32Const $4; I8x16ShrU; Get V4; I32Const $2; I16x8ShrU; Get V5; V128And; V128Or; Set V7; \
	SUB16(p+192, scoff+6)

// func q6KRowSums(x, yp *byte, nb, rows int, out *int32)
// sets out[rows*j+r] to row r's block j's Σ scale·q·y; nb ≥ 1.
TEXT ·q6KRowSums(SB), NOSPLIT, $0-40
	ROWS(out+32(FP), rows+24(FP))
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f
	Set V0
	V128Const $0x3030303030303030, $0x3030303030303030
	Set V5
	V128Const $0x00ff00ff00ff00ff, $0x00ff00ff00ff00ff
	Set V6
	Block
	Get R13
	I64Eqz
	BrIf $0
	Loop
		I64Load yp+8(FP); Set R11
		I64Load nb+16(FP); Set R2
		Get R14; Set R3
		Loop
			V128Const $0, $0
			Set V1
			QUARTER(0, 32, 128, 0, 192)
			QUARTER(16, 48, 144, 32, 193)
			QUARTER(64, 96, 160, 256, 200)
			QUARTER(80, 112, 176, 288, 201)
			// V1 -= 32·Σ scale·(sub-block sum)
			Get R0; I32WrapI64; V128Load $192; Set V8
			Get V8; I16x8ExtendLowI8x16S; PY(512); I32x4DotI16x8S
			Get V8; I16x8ExtendHighI8x16S; PY(528); I32x4DotI16x8S; I32x4Add
			I32Const $5; I32x4Shl; Set V8
			Get V1; Get V8; I32x4Sub; Set V1

			Get R3; I32WrapI64; HSUM(V1); I32Store $0

			ADD(R0, 210)
			ADD(R11, 544)
			Get R3; Get R15; I64Add; Set R3
			COUNTDOWN(R2)
		End
		NEXTROW
	End
	End
	RET

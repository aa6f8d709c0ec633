//go:build goexperiment.simd

#include "go_asm.h"
#include "textflag.h"
#include "rows_amd64.h"

// The K-quants' DotRows kernels (dotRowsQ4_KAVX2, dotRowsQ6_KAVX2 in
// dotrows_amd64.go; the references are dotQ4_KRef, dotQ6_KRef): Dot row
// after row, each block's work as dotQ4_KAVX2 / dotQ6_KAVX2 do it, written
// by hand so that nothing is spilled or called per block. Each block's exact
// int32 sums are reduced, and its float part is the reference's, in scalar
// lanes (the fp16 scales by VCVTPH2PS, exact as FP16ToFP32).
//
// register use (both; the scaffolding's in rows_amd64.h): X0 the row's
//	running sum, Y1 (and Q4_K's Y2) the block's scaled sums

// Q4_K: VPMADDUBSW of the nibbles with the activation, VPMADDWD by the
// 6-bit scales, the mins by VPMADDWD of the activation's bsums; then
// sum += float32(fp16(d)·yd·isum) - float32(fp16(dmin)·yd·summ).
// Y4 the block's scales, Y5 its mins, Y6..Y9 scratch, Y15 0x0f bytes
// (q4KRowsConsts: the scale shuffles, the min shuffle, the nibble mask).

// CHUNK(c, acc) adds the scaled sums of the block's 64 quants c.. to acc.
#define CHUNK(c, acc) \
	VMOVDQU (16+32*c)(SI), Y6; \
	VPSRLW $4, Y6, Y7; \
	VPAND Y15, Y6, Y6; \
	VPAND Y15, Y7, Y7; \
	VPMADDUBSW (4+64*c)(DI), Y6, Y6; \
	VPMADDUBSW (36+64*c)(DI), Y7, Y7; \
	VPSHUFB (64*c)(R13), Y4, Y8; \
	VPSHUFB (64*c+32)(R13), Y4, Y9; \
	VPMADDWD Y8, Y6, Y6; \
	VPMADDWD Y9, Y7, Y7; \
	VPADDD Y6, acc, acc; \
	VPADDD Y7, acc, acc

// func q4_KRows(nb int, w, y *byte, out *float32, rows int, k *[10][32]byte)
TEXT ·q4_KRows(SB), NOSPLIT, $0-48
	ROWS
	VMOVDQU 288(R13), Y15
q4krow:
	TESTQ R12, R12
	JZ q4kdone
	MOVQ R11, DI
	MOVQ R9, CX
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ q4krowdone
q4kblock:
	// the scales and mins (scalesMinsK4Array): sc to every qword of Y4,
	// mn of Y5
	MOVL 4(SI), AX
	MOVL 8(SI), BX
	MOVL 12(SI), R8
	MOVL AX, R10
	ANDL $0x3f3f3f3f, R10
	VMOVD R10, X4
	SHRL $6, AX
	ANDL $0x03030303, AX
	SHLL $4, AX
	MOVL R8, R10
	ANDL $0x0f0f0f0f, R10
	ORL R10, AX
	VPINSRD $1, AX, X4, X4
	VPBROADCASTQ X4, Y4
	MOVL BX, R10
	ANDL $0x3f3f3f3f, R10
	VMOVD R10, X5
	SHRL $6, BX
	ANDL $0x03030303, BX
	SHLL $4, BX
	SHRL $4, R8
	ANDL $0x0f0f0f0f, R8
	ORL R8, BX
	VPINSRD $1, BX, X5, X5
	VPBROADCASTQ X5, Y5
	// summ lanes: min k times bsums 2k, 2k+1
	VPSHUFB 256(R13), Y5, Y5
	VPMADDWD 260(DI), Y5, Y5
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	CHUNK(0, Y1)
	CHUNK(1, Y2)
	CHUNK(2, Y1)
	CHUNK(3, Y2)
	// isum and summ in lanes 0 and 1
	VPADDD Y2, Y1, Y1
	VPHADDD Y5, Y1, Y1
	VEXTRACTI128 $1, Y1, X2
	VPADDD X2, X1, X1
	VPHADDD X1, X1, X1
	VCVTDQ2PS X1, X1
	// d·yd, dmin·yd; times float32(isum), float32(summ); their difference
	VMOVD (SI), X2
	VCVTPH2PS X2, X2
	VBROADCASTSS (DI), X3
	VMULPS X3, X2, X2
	VMULPS X1, X2, X2
	VMOVSHDUP X2, X3
	VSUBSS X3, X2, X2
	VADDSS X2, X0, X0
	NEXTBLOCK(const_q4_KBytes)
	JNZ q4kblock
q4krowdone:
	ENDROW
	JMP q4krow
q4kdone:
	VZEROUPPER
	RET

// Q6_K, for activations made by the Q8_K quantizer (its bsums the sums of
// its quants): the unsigned quants (0..63, low 4 bits from ql, high 2 from
// qh) go through VPMADDUBSW with the activation and VPMADDWD with their
// sub-block's scale; the offset is 32·Σ scale·bsum; all exact int32, so
// isum is the reference's Σ scale·Σ (q-32)·y. Then
// sum += float32(fp16(d)·yd)·float32(isum).
// Y4 the block's scales, Y5 Σ scale·bsum, Y10, Y11 the scales of each
// half, Y14 0x30 bytes, Y15 0x0f bytes, Y2, Y3, Y6..Y9, Y12 scratch
// (q6KRowsConsts: the four scale shuffles of dotQ6_KAVX2, 0x0f and 0x30 bytes).

// QUARTER(q, k, h, S) adds quants q (quarter k of half h, 32 of them) times
// the activation, times their sub-blocks' scales (from S), to Y1.
#define QUARTER(q, k, h, S) \
	VPMADDUBSW (4+128*h+32*k)(DI), q, q; \
	VPSHUFB (32*k)(R13), S, Y12; \
	VPMADDWD Y12, q, q; \
	VPADDD q, Y1, Y1

// HALF(h, S) does the block's 128 quants h·128..: ql at 64h, qh at 128+32h.
#define HALF(h, S) \
	VMOVDQU (64*h)(SI), Y6; \
	VMOVDQU (64*h+32)(SI), Y7; \
	VMOVDQU (128+32*h)(SI), Y8; \
	VPSLLW $4, Y8, Y2; \
	VPAND Y14, Y2, Y2; \
	VPAND Y15, Y6, Y3; \
	VPOR Y3, Y2, Y2; \
	QUARTER(Y2, 0, h, S); \
	VPSLLW $2, Y8, Y2; \
	VPAND Y14, Y2, Y2; \
	VPAND Y15, Y7, Y3; \
	VPOR Y3, Y2, Y2; \
	QUARTER(Y2, 1, h, S); \
	VPSRLW $4, Y6, Y6; \
	VPAND Y15, Y6, Y6; \
	VPAND Y14, Y8, Y2; \
	VPOR Y6, Y2, Y2; \
	QUARTER(Y2, 2, h, S); \
	VPSRLW $4, Y7, Y7; \
	VPAND Y15, Y7, Y7; \
	VPSRLW $2, Y8, Y2; \
	VPAND Y14, Y2, Y2; \
	VPOR Y7, Y2, Y2; \
	QUARTER(Y2, 3, h, S)

// func q6_KRows(nb int, w, y *byte, out *float32, rows int, k *[6][32]byte)
TEXT ·q6_KRows(SB), NOSPLIT, $0-48
	ROWS
	VMOVDQU 128(R13), Y15
	VMOVDQU 160(R13), Y14
q6krow:
	TESTQ R12, R12
	JZ q6kdone
	MOVQ R11, DI
	MOVQ R9, CX
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ q6krowdone
q6kblock:
	VPMOVSXBW 192(SI), Y4 // the 16 scales, int16
	VPMADDWD 260(DI), Y4, Y5 // scale·bsum pairs
	VPERM2I128 $0x00, Y4, Y4, Y10
	VPERM2I128 $0x11, Y4, Y4, Y11
	VPXOR Y1, Y1, Y1
	HALF(0, Y10)
	HALF(1, Y11)
	// isum = Σ Y1 - 32·Σ Y5, in lane 0
	VPSLLD $5, Y5, Y5
	VPSUBD Y5, Y1, Y1
	VEXTRACTI128 $1, Y1, X2
	VPADDD X2, X1, X1
	VPHADDD X1, X1, X1
	VPHADDD X1, X1, X1
	VCVTDQ2PS X1, X1
	// sum += float32(d·yd)·float32(isum)
	MOVWLZX 208(SI), AX
	VMOVD AX, X2
	VCVTPH2PS X2, X2
	VMULSS (DI), X2, X2
	VMULSS X1, X2, X2
	VADDSS X2, X0, X0
	NEXTBLOCK(const_q6_KBytes)
	JNZ q6kblock
q6krowdone:
	ENDROW
	JMP q6krow
q6kdone:
	VZEROUPPER
	RET

//go:build goexperiment.simd

#include "textflag.h"

// The Q6_K DotRows kernel (dotRowsQ6_K in dotrows_amd64_simd.go; the
// reference is dotQ6_KRef), like q4_k_rows_amd64.s: Dot row after row,
// each block's work as dotQ6_K does it, for activations made by the Q8_K
// quantizer (its bsums the sums of its quants). The unsigned quants
// (0..63, low 4 bits from ql, high 2 from qh) go through VPMADDUBSW with
// the activation and VPMADDWD with their sub-block's scale; the offset is
// 32·Σ scale·bsum; all exact int32, so isum is the reference's
// Σ scale·Σ (q-32)·y. Then sum += float32(fp16(d)·yd)·float32(isum).
//
// register use:
//	SI weight block, DI activation block, R11 the activation, CX blocks
//	left, R9 blocks per row, R12 rows left, DX out, R13 the constants
//	(q6KRowsConsts: the four scale shuffles of dotQ6_K, 0x0f and 0x30 bytes)
//	X0 the row's running sum, Y1 the block's scaled sums, Y4 its scales,
//	Y5 Σ scale·bsum, Y10, Y11 the scales of each half, Y14 0x30 bytes,
//	Y15 0x0f bytes, Y2, Y3, Y6..Y9, Y12, Y13 scratch

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
	MOVQ nb+0(FP), R9
	MOVQ w+8(FP), SI
	MOVQ y+16(FP), R11
	MOVQ out+24(FP), DX
	MOVQ rows+32(FP), R12
	MOVQ k+40(FP), R13
	VMOVDQU 128(R13), Y15
	VMOVDQU 160(R13), Y14
row:
	TESTQ R12, R12
	JZ done
	MOVQ R11, DI
	MOVQ R9, CX
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ rowdone
block:
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
	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JNZ block
rowdone:
	VMOVSS X0, (DX)
	ADDQ $4, DX
	DECQ R12
	JMP row
done:
	VZEROUPPER
	RET

//go:build goexperiment.simd

#include "textflag.h"

// The Q4_K DotRows kernel (dotRowsQ4_K in dotrows_amd64_simd.go; the
// reference is dotQ4_KRef): Dot row after row, each block's work as
// dotQ4_K does it (VPMADDUBSW of the nibbles with the activation, VPMADDWD
// by the 6-bit scales, the mins by VPMADDWD of the activation's bsums),
// written by hand so that nothing is spilled or called per block. The
// block's exact int32 sums are reduced to isum and summ, and the float
// part is the reference's, in scalar lanes: d = fp16(d)·yd, dmin =
// fp16(dmin)·yd (VCVTPH2PS is exact, as FP16ToFP32), then
// sum += float32(d·isum) - float32(dmin·summ).
//
// register use:
//	SI weight block, DI activation block, R11 the activation, CX blocks
//	left, R9 blocks per row, R12 rows left, DX out, R13 the constants
//	(q4KRowsConsts: the scale shuffles, the min shuffle, the nibble mask)
//	X0 the row's running sum, Y1, Y2 the block's scaled sums, Y4 its
//	scales, Y5 its mins, Y6..Y9 scratch, Y15 0x0f bytes

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
	MOVQ nb+0(FP), R9
	MOVQ w+8(FP), SI
	MOVQ y+16(FP), R11
	MOVQ out+24(FP), DX
	MOVQ rows+32(FP), R12
	MOVQ k+40(FP), R13
	VMOVDQU 288(R13), Y15
row:
	TESTQ R12, R12
	JZ done
	MOVQ R11, DI
	MOVQ R9, CX
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ rowdone
block:
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
	ADDQ $144, SI
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

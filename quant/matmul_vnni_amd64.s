//go:build goexperiment.simd

#include "go_asm.h"
#include "textflag.h"

// The AVX512-VNNI rows of the Q4_0 and Q8_0 DotRowsN kernels
// (dotRowsNQ4_0VNNI, dotRowsNQ8_0VNNI in matmul_amd64.go, which also has
// the AVX2 kernels for CPUs without VNNI; the references are dotQ4_0Ref /
// dotQ8_0Ref). archsimd has
// no VPDPBUSD, so these are written by hand, on 256-bit registers
// (AVX512VL).
//
// One call adds a row's terms for the sixteen activations of a prepared
// batch (batchQ8_0 in its transposed layout) to the running sums in acc.
// Per block: the row's quants 4e..4e+3, made unsigned, are broadcast to
// every dword (Y2..Y9 for e = 0..7); VPDPBUSD of that with vector 8g+e of
// the block's activations (dword k: quants 4e..4e+3 of activation 8g+k)
// adds those four products to lane k. The eight dwords' sums are exact
// int32 (no saturation), minus the offset's Σy (sy: 8·Σy for Q4_0's
// nibbles, 128·Σy for Q8_0's quants + 128), times dx·dy, added to the
// running sum: the reference's operations, lane by lane.
//
// register use:
//	SI weight block, DI its prepared activations, R8 their scales (fy),
//	R9 their offset sums (sy), CX blocks left, DX acc, R10 the next row's block
//	Y0, Y1 running sums of activations 0..7, 8..15
//	Y2..Y9 the block's quants, broadcast; Y10, Y11 integer sums
//	Y12 dx, Y13 dx·dy, Y14 0x0f or 0x80 bytes

#define BATCH_BLOCK 512 // bytes of a block's prepared quants: 16 vectors
#define SCALES 64       // bytes of a block's fy (and of its sy)

// GROUP(g, acc) adds the block's terms of activations 8g..8g+7 to acc.
#define GROUP(g, acc) \
	VPXOR Y10, Y10, Y10; \
	VPXOR Y11, Y11, Y11; \
	VPDPBUSD (g*256+0)(DI), Y2, Y10; \
	VPDPBUSD (g*256+32)(DI), Y3, Y11; \
	VPDPBUSD (g*256+64)(DI), Y4, Y10; \
	VPDPBUSD (g*256+96)(DI), Y5, Y11; \
	VPDPBUSD (g*256+128)(DI), Y6, Y10; \
	VPDPBUSD (g*256+160)(DI), Y7, Y11; \
	VPDPBUSD (g*256+192)(DI), Y8, Y10; \
	VPDPBUSD (g*256+224)(DI), Y9, Y11; \
	VPADDD Y11, Y10, Y10; \
	VPSUBD (g*32)(R9), Y10, Y10; \
	VCVTDQ2PS Y10, Y10; \
	VMULPS (g*32)(R8), Y12, Y13; \
	VMULPS Y13, Y10, Y10; \
	VADDPS Y10, acc, acc

// SCALE loads the block's fp16 dx (at off(SI)) into every lane of Y12
// (VCVTPH2PS: exact, NaNs made quiet, as FP16ToFP32).
#define SCALE(off) \
	VPBROADCASTW off(SI), X12; \
	VCVTPH2PS X12, Y12

// NEXT moves to the next block (bytes: the weight block's size).
#define NEXT(bytes) \
	ADDQ $bytes, SI; \
	ADDQ $bytes, R10; \
	ADDQ $BATCH_BLOCK, DI; \
	ADDQ $SCALES, R8; \
	ADDQ $SCALES, R9; \
	DECQ CX

// START(bytes) loads a row's arguments (as q4_0RowVNNI takes them), its
// running sums and bytes (a constant) in every byte of Y14; END stores the
// running sums.
#define START(bytes) \
	MOVQ x+0(FP), SI; \
	MOVQ nb+8(FP), CX; \
	MOVQ b+16(FP), DI; \
	MOVQ acc+24(FP), DX; \
	MOVQ next+32(FP), R10; \
	LEAQ batchQ8_0_fy(DI), R8; \
	LEAQ batchQ8_0_sy(DI), R9; \
	VMOVDQU (DX), Y0; \
	VMOVDQU 32(DX), Y1; \
	MOVL $bytes, AX; \
	VPBROADCASTD AX, Y14 // EVEX from AX, not a legacy-SSE MOVD (see matmul_kvnni_amd64.s)
#define END \
	VMOVDQU Y0, (DX); \
	VMOVDQU Y1, 32(DX); \
	VZEROUPPER; \
	RET

// func q4_0RowVNNI(x *byte, nb int, b *batchQ8_0, acc *[MaxDotN]float32, next *byte)
TEXT ·q4_0RowVNNI(SB), NOSPLIT, $0-40
	START(0x0f0f0f0f)
	TESTQ CX, CX
	JZ q40done
q40block:
	PREFETCHT0 (R10) // the next row's block (the blocks are smaller than a line)
	SCALE(0)
	// the nibbles: bytes 4e..4e+3 (low, e < 4) and their high nibbles
	VPBROADCASTD 2(SI), Y2
	VPBROADCASTD 6(SI), Y3
	VPBROADCASTD 10(SI), Y4
	VPBROADCASTD 14(SI), Y5
	VPSRLW $4, Y2, Y6
	VPSRLW $4, Y3, Y7
	VPSRLW $4, Y4, Y8
	VPSRLW $4, Y5, Y9
	VPAND Y14, Y2, Y2
	VPAND Y14, Y3, Y3
	VPAND Y14, Y4, Y4
	VPAND Y14, Y5, Y5
	VPAND Y14, Y6, Y6
	VPAND Y14, Y7, Y7
	VPAND Y14, Y8, Y8
	VPAND Y14, Y9, Y9
	GROUP(0, Y0)
	GROUP(1, Y1)
	NEXT(18)
	JNZ q40block
q40done:
	END

// func q8_0RowVNNI(x *byte, nb int, b *batchQ8_0, acc *[MaxDotN]float32, next *byte)
TEXT ·q8_0RowVNNI(SB), NOSPLIT, $0-40
	START(0x80808080)
	TESTQ CX, CX
	JZ q80done
q80block:
	PREFETCHT0 (R10) // the next row's block (the blocks are smaller than a line)
	SCALE(0)
	// the quants + 128 (the sign bit flipped)
	VPBROADCASTD 2(SI), Y2
	VPBROADCASTD 6(SI), Y3
	VPBROADCASTD 10(SI), Y4
	VPBROADCASTD 14(SI), Y5
	VPBROADCASTD 18(SI), Y6
	VPBROADCASTD 22(SI), Y7
	VPBROADCASTD 26(SI), Y8
	VPBROADCASTD 30(SI), Y9
	VPXOR Y14, Y2, Y2
	VPXOR Y14, Y3, Y3
	VPXOR Y14, Y4, Y4
	VPXOR Y14, Y5, Y5
	VPXOR Y14, Y6, Y6
	VPXOR Y14, Y7, Y7
	VPXOR Y14, Y8, Y8
	VPXOR Y14, Y9, Y9
	GROUP(0, Y0)
	GROUP(1, Y1)
	NEXT(34)
	JNZ q80block
q80done:
	END

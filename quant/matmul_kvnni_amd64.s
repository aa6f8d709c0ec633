//go:build goexperiment.simd

#include "go_asm.h"
#include "textflag.h"

// The AVX512-VNNI rows of the Q4_K DotRowsN kernel (matmul_kvnni_amd64.go;
// the reference is dotQ4_KRef), on 256-bit registers like
// matmul_vnni_amd64.s. Per block and sub-block s of 32 quants: the row's
// quants 4e..4e+3 (nibbles, unsigned) broadcast to every dword (Y2..Y9),
// VPDPBUSD with the activations' transposed quants gives lane k activation
// k's exact Σq·y; times the sub-block's scale (VPMULLD), summed over s:
// isum. summ = Σ_s m_s·(bsum 2s + bsum 2s+1) by VPMADDWD. Then, lane by lane
// as dotQ4_KAVX2: sum += float32(d·yd·isum) - float32(dmin·yd·summ).
//
// register use:
//	SI weight block, DI its prepared quants, R8 bsums, R9 scales (yd),
//	R10 the block's rowQ4_K, CX blocks left, DX acc, R11 the next row's block
//	Y0, Y1 running sums of activations 0..7, 8..15
//	Y2..Y9 a sub-block's quants, broadcast; Y10, Y11 integer sums
//	Y12 scratch, Y13 0x0f bytes, Y14, Y15 isum of activations 0..7, 8..15,
//	Y16, Y17 their summ (EVEX registers)

#define QBLOCK 4096 // bytes of a block's prepared quants (batchQ8_K.q[j])
#define BSBLOCK 512 // of its bsums (batchQ8_K.bs[j])
#define YDBLOCK 64  // of its scales (batchQ8_K.yd[j])

// QUANTS(c) broadcasts dwords e = 0..7 of the block's 32 bytes c to Y2..Y9.
#define QUANTS(c) \
	VPBROADCASTD (16+32*c)(SI), Y2; \
	VPBROADCASTD (16+32*c+4)(SI), Y3; \
	VPBROADCASTD (16+32*c+8)(SI), Y4; \
	VPBROADCASTD (16+32*c+12)(SI), Y5; \
	VPBROADCASTD (16+32*c+16)(SI), Y6; \
	VPBROADCASTD (16+32*c+20)(SI), Y7; \
	VPBROADCASTD (16+32*c+24)(SI), Y8; \
	VPBROADCASTD (16+32*c+28)(SI), Y9

// HIGH moves the high nibbles of Y2..Y9 down.
#define HIGH \
	VPSRLW $4, Y2, Y2; \
	VPSRLW $4, Y3, Y3; \
	VPSRLW $4, Y4, Y4; \
	VPSRLW $4, Y5, Y5; \
	VPSRLW $4, Y6, Y6; \
	VPSRLW $4, Y7, Y7; \
	VPSRLW $4, Y8, Y8; \
	VPSRLW $4, Y9, Y9

// NIBBLES keeps the low nibble of every byte of Y2..Y9.
#define NIBBLES \
	VPAND Y13, Y2, Y2; \
	VPAND Y13, Y3, Y3; \
	VPAND Y13, Y4, Y4; \
	VPAND Y13, Y5, Y5; \
	VPAND Y13, Y6, Y6; \
	VPAND Y13, Y7, Y7; \
	VPAND Y13, Y8, Y8; \
	VPAND Y13, Y9, Y9

// DOTS(s, g, isum) adds sub-block s's Σq·y of activations 8g.., times its
// scale, to isum.
#define DOTS(s, g, isum) \
	VPXOR Y10, Y10, Y10; \
	VPXOR Y11, Y11, Y11; \
	VPDPBUSD ((g*64+8*s)*32)(DI), Y2, Y10; \
	VPDPBUSD ((g*64+8*s+1)*32)(DI), Y3, Y11; \
	VPDPBUSD ((g*64+8*s+2)*32)(DI), Y4, Y10; \
	VPDPBUSD ((g*64+8*s+3)*32)(DI), Y5, Y11; \
	VPDPBUSD ((g*64+8*s+4)*32)(DI), Y6, Y10; \
	VPDPBUSD ((g*64+8*s+5)*32)(DI), Y7, Y11; \
	VPDPBUSD ((g*64+8*s+6)*32)(DI), Y8, Y10; \
	VPDPBUSD ((g*64+8*s+7)*32)(DI), Y9, Y11; \
	VPADDD Y11, Y10, Y10; \
	MOVBLZX (rowQ4_K_sc+s)(R10), AX; \
	VPBROADCASTD AX, Y12; \
	VPMULLD Y12, Y10, Y10; \
	VPADDD Y10, isum, isum

// SUBLO(s, c) and SUBHI(s, c) do sub-block s (both groups of
// activations): its quants are the low (s even) or high nibbles of the
// block's 32 bytes c = s/2.
#define SUBLO(s, c) \
	QUANTS(c); \
	NIBBLES; \
	DOTS(s, 0, Y14); \
	DOTS(s, 1, Y15)
#define SUBHI(s, c) \
	QUANTS(c); \
	HIGH; \
	NIBBLES; \
	DOTS(s, 0, Y14); \
	DOTS(s, 1, Y15)

// MINS(g, summ) sets summ to Σ_s m_s·(bsum 2s + bsum 2s+1) of
// activations 8g.. (Y2..Y9: the mins, in both halves of every dword).
#define MINS(g, summ) \
	VPMADDWD ((g*8)*32)(R8), Y2, summ; \
	VPMADDWD ((g*8+1)*32)(R8), Y3, Y10; \
	VPMADDWD ((g*8+2)*32)(R8), Y4, Y11; \
	VPMADDWD ((g*8+3)*32)(R8), Y5, Y12; \
	VPADDD Y10, summ, summ; \
	VPADDD Y12, Y11, Y11; \
	VPMADDWD ((g*8+4)*32)(R8), Y6, Y10; \
	VPMADDWD ((g*8+5)*32)(R8), Y7, Y12; \
	VPADDD Y11, summ, summ; \
	VPADDD Y12, Y10, Y10; \
	VPMADDWD ((g*8+6)*32)(R8), Y8, Y11; \
	VPMADDWD ((g*8+7)*32)(R8), Y9, Y12; \
	VPADDD Y10, summ, summ; \
	VPADDD Y12, Y11, Y11; \
	VPADDD Y11, summ, summ

// TERMS(g, isum, summ, acc) adds float32(d·yd·isum) - float32(dmin·yd·summ)
// of activations 8g.. to acc (Y12: d, Y13: dmin of the weights, broadcast).
#define TERMS(g, isum, summ, acc) \
	VMULPS (g*32)(R9), Y12, Y10; \
	VMULPS (g*32)(R9), Y13, Y11; \
	VCVTDQ2PS isum, isum; \
	VCVTDQ2PS summ, summ; \
	VMULPS isum, Y10, Y10; \
	VMULPS summ, Y11, Y11; \
	VSUBPS Y11, Y10, Y10; \
	VADDPS Y10, acc, acc

// KSTART loads a row's arguments (as q4_KRowVNNI takes them) and its
// running sums; KNEXT(bytes, rowsize) moves every pointer to the next block
// (bytes: the weight block's size, rowsize: its decoded form's) and counts
// it; KEND stores the running sums.
#define KSTART \
	MOVQ x+0(FP), SI; \
	MOVQ nb+8(FP), CX; \
	MOVQ rb+16(FP), R10; \
	MOVQ b+24(FP), DI; \
	MOVQ acc+32(FP), DX; \
	MOVQ next+40(FP), R11; \
	LEAQ batchQ8_K_bs(DI), R8; \
	LEAQ batchQ8_K_yd(DI), R9; \
	ADDQ $batchQ8_K_q, DI; \
	VMOVDQU (DX), Y0; \
	VMOVDQU 32(DX), Y1
#define KNEXT(bytes, rowsize) \
	ADDQ $bytes, SI; \
	ADDQ $bytes, R11; \
	ADDQ $rowsize, R10; \
	ADDQ $QBLOCK, DI; \
	ADDQ $BSBLOCK, R8; \
	ADDQ $YDBLOCK, R9; \
	DECQ CX
#define KEND \
	VMOVDQU Y0, (DX); \
	VMOVDQU Y1, 32(DX); \
	VZEROUPPER; \
	RET

// func q4_KRowVNNI(x *byte, nb int, rb *[kSpan]rowQ4_K, b *batchQ8_K, acc *[MaxDotN]float32, next *byte)
TEXT ·q4_KRowVNNI(SB), NOSPLIT, $0-48
	KSTART
	TESTQ CX, CX
	JZ q4kdone
q4kblock:
	PREFETCHT0 (R11) // the next row's block, for the Go side's next call
	PREFETCHT0 64(R11)
	PREFETCHT0 128(R11)
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Y13 // EVEX from AX: a legacy-SSE MOVD here, with the upper halves in use, stalls Intel cores
	VPXOR Y14, Y14, Y14
	VPXOR Y15, Y15, Y15
	SUBLO(0, 0)
	SUBHI(1, 0)
	SUBLO(2, 1)
	SUBHI(3, 1)
	SUBLO(4, 2)
	SUBHI(5, 2)
	SUBLO(6, 3)
	SUBHI(7, 3)
	MOVBLZX (rowQ4_K_mn+0)(R10), AX
	VPBROADCASTW AX, Y2
	MOVBLZX (rowQ4_K_mn+1)(R10), AX
	VPBROADCASTW AX, Y3
	MOVBLZX (rowQ4_K_mn+2)(R10), AX
	VPBROADCASTW AX, Y4
	MOVBLZX (rowQ4_K_mn+3)(R10), AX
	VPBROADCASTW AX, Y5
	MOVBLZX (rowQ4_K_mn+4)(R10), AX
	VPBROADCASTW AX, Y6
	MOVBLZX (rowQ4_K_mn+5)(R10), AX
	VPBROADCASTW AX, Y7
	MOVBLZX (rowQ4_K_mn+6)(R10), AX
	VPBROADCASTW AX, Y8
	MOVBLZX (rowQ4_K_mn+7)(R10), AX
	VPBROADCASTW AX, Y9
	MINS(0, Y16)
	MINS(1, Y17)
	VPBROADCASTW (SI), X12 // d and dmin: VCVTPH2PS is exact, as FP16ToFP32
	VCVTPH2PS X12, Y12
	VPBROADCASTW 2(SI), X13
	VCVTPH2PS X13, Y13
	TERMS(0, Y14, Y16, Y0)
	TERMS(1, Y15, Y17, Y1)
	KNEXT(const_q4_KBytes, rowQ4_K__size)
	JNZ q4kblock
q4kdone:
	KEND

// The Q6_K rows (reference: dotQ6_KRef). The block's quants come decoded
// (rowQ6_K: quants + 32 in element order, scale pairs) from the Go side; its
// int8 scales are read from the block. Per 32 quants v
// (sub-blocks 2v, 2v+1 of 16): VPDPBUSD of dwords 0..3 and 4..7 with the
// activations gives each sub-block's Σq·y, times its scale (VPMULLD),
// summed: Σ sc·q·y; the -32 of the quants is Σ sc·32·bsum (VPMADDWD of the
// bsums pairs with the scale pairs). Then sum += float32(d·yd)·isum.
//
// register use: as q4_KRowVNNI, R10 the block's rowQ6_K; Y16, Y17 Σ sc·bsum.

// Q6QUANTS(v) broadcasts dwords 0..7 of the decoded quants 32v.. to Y2..Y9.
#define Q6QUANTS(v) \
	VPBROADCASTD (rowQ6_K_q+32*v)(R10), Y2; \
	VPBROADCASTD (rowQ6_K_q+32*v+4)(R10), Y3; \
	VPBROADCASTD (rowQ6_K_q+32*v+8)(R10), Y4; \
	VPBROADCASTD (rowQ6_K_q+32*v+12)(R10), Y5; \
	VPBROADCASTD (rowQ6_K_q+32*v+16)(R10), Y6; \
	VPBROADCASTD (rowQ6_K_q+32*v+20)(R10), Y7; \
	VPBROADCASTD (rowQ6_K_q+32*v+24)(R10), Y8; \
	VPBROADCASTD (rowQ6_K_q+32*v+28)(R10), Y9

// Q6DOTS(v, g, isum) adds sub-blocks 2v and 2v+1's Σq·y of activations
// 8g.., times their scales, to isum.
#define Q6DOTS(v, g, isum) \
	VPXOR Y10, Y10, Y10; \
	VPXOR Y11, Y11, Y11; \
	VPDPBUSD ((g*64+8*v)*32)(DI), Y2, Y10; \
	VPDPBUSD ((g*64+8*v+4)*32)(DI), Y6, Y11; \
	VPDPBUSD ((g*64+8*v+1)*32)(DI), Y3, Y10; \
	VPDPBUSD ((g*64+8*v+5)*32)(DI), Y7, Y11; \
	VPDPBUSD ((g*64+8*v+2)*32)(DI), Y4, Y10; \
	VPDPBUSD ((g*64+8*v+6)*32)(DI), Y8, Y11; \
	VPDPBUSD ((g*64+8*v+3)*32)(DI), Y5, Y10; \
	VPDPBUSD ((g*64+8*v+7)*32)(DI), Y9, Y11; \
	MOVBQSX (192+2*v)(SI), AX; \
	VPBROADCASTD AX, Y12; \
	VPMULLD Y12, Y10, Y10; \
	MOVBQSX (193+2*v)(SI), AX; \
	VPBROADCASTD AX, Y12; \
	VPMULLD Y12, Y11, Y11; \
	VPADDD Y11, Y10, Y10; \
	VPADDD Y10, isum, isum

#define Q6QUARTER(v) \
	Q6QUANTS(v); \
	Q6DOTS(v, 0, Y14); \
	Q6DOTS(v, 1, Y15)

// Q6TERMS(g, isum, offs, acc) adds float32(d·yd)·(isum - 32·offs) of
// activations 8g.. to acc (Y12: the weights' d, broadcast).
#define Q6TERMS(g, isum, offs, acc) \
	VPSLLD $5, offs, offs; \
	VPSUBD offs, isum, isum; \
	VMULPS (g*32)(R9), Y12, Y10; \
	VCVTDQ2PS isum, isum; \
	VMULPS isum, Y10, Y10; \
	VADDPS Y10, acc, acc

// func q6_KRowVNNI(x *byte, nb int, rb *[kSpan]rowQ6_K, b *batchQ8_K, acc *[MaxDotN]float32, next *byte)
TEXT ·q6_KRowVNNI(SB), NOSPLIT, $0-48
	KSTART
	TESTQ CX, CX
	JZ q6kdone
q6kblock:
	PREFETCHT0 (R11) // the next row's block, for the Go side's next call
	PREFETCHT0 64(R11)
	PREFETCHT0 128(R11)
	PREFETCHT0 192(R11)
	VPXOR Y14, Y14, Y14
	VPXOR Y15, Y15, Y15
	Q6QUARTER(0)
	Q6QUARTER(1)
	Q6QUARTER(2)
	Q6QUARTER(3)
	Q6QUARTER(4)
	Q6QUARTER(5)
	Q6QUARTER(6)
	Q6QUARTER(7)
	VPBROADCASTD (rowQ6_K_scp)(R10), Y2
	VPBROADCASTD (rowQ6_K_scp+4)(R10), Y3
	VPBROADCASTD (rowQ6_K_scp+8)(R10), Y4
	VPBROADCASTD (rowQ6_K_scp+12)(R10), Y5
	VPBROADCASTD (rowQ6_K_scp+16)(R10), Y6
	VPBROADCASTD (rowQ6_K_scp+20)(R10), Y7
	VPBROADCASTD (rowQ6_K_scp+24)(R10), Y8
	VPBROADCASTD (rowQ6_K_scp+28)(R10), Y9
	MINS(0, Y16)
	MINS(1, Y17)
	VPBROADCASTW 208(SI), X12 // d (VCVTPH2PS: exact, as FP16ToFP32)
	VCVTPH2PS X12, Y12
	Q6TERMS(0, Y14, Y16, Y0)
	Q6TERMS(1, Y15, Y17, Y1)
	KNEXT(const_q6_KBytes, rowQ6_K__size)
	JNZ q6kblock
q6kdone:
	KEND

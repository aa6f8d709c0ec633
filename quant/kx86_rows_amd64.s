//go:build goexperiment.simd

#include "go_asm.h"
#include "textflag.h"
#include "rows_amd64.h"

// The DotRows kernels of the K-quants in ggml's x86 order and of IQ4_XS
// (dotRowsQ2_KAVX2, dotRowsQ3_KAVX2, dotRowsQ5_KAVX2, dotRowsIQ4_XSAVX2 in
// kx86_rows_amd64.go; the references are dotQ2_KRef, dotQ3_KRef,
// dotQ5_KRef, dotIQ4_XSRef): Dot row after row, each block's
// work as dotQ2_KAVX2, dotQ3_KAVX2 and dotQ5_KAVX2 do it, written by hand so
// that nothing is spilled or called per block. A block's exact int32 lanes
// (VPMADDUBSW, VPMADDWD by the sub-block scales, VPADDD: lane k holds the
// weights 4k..4k+3 of every 32) are widened and accumulated into the row's
// eight float32 lanes by VFMADD231PS, one rounding per lane as fma32; the
// lanes are added at the end as hsumX86 does. The fp16 scales are widened by
// VCVTPH2PS (exact, as FP16ToFP32).
//
// register use (all four; the scaffolding's in rows_amd64.h): R13 the
//	constants (kx86RowsConsts), Y0 the row's float32 lanes, Y1, Y2 the
//	block's int32 lanes, Y15 the low-bits mask, the rest scratch

// Offsets of kx86RowsConsts's rows: the VPSHUFB patterns putting byte k in
// every int16 lane (k < 8), q4KMinShuffle, 0x0f bytes, bytes 1<<b (b < 8),
// q6KScaleShuffle k (k < 4), 0x03 bytes, 0x20 bytes, iq4Levels, the
// VPSHUFB patterns putting int16 lane k in every lane, the bit-spreading
// masks.
#define C_BYTE 0
#define C_MIN 256
#define C_M4 288
#define C_BIT 320
#define C_SC16 576
#define C_M3 704
#define C_32 736
#define C_IQ4 768
#define C_WORD 800
#define C_SPREAD 1056

// HSUMX86 leaves hsumX86 of the lanes of Y0 in X0: the 128-bit halves
// added, then lanes 0+2 and 1+3, then those two.
#define HSUMX86 \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS X1, X0, X0; \
	VMOVHLPS X0, X0, X1; \
	VADDPS X1, X0, X0; \
	VMOVSHDUP X0, X1; \
	VADDSS X1, X0, X0

// LANES(d, lanes) adds fma(d, float32(lanes), ·) to Y0, d a float32 in
// lane 0 of an X register (lanes: a Y register, overwritten).
#define LANES(d, lanes) \
	VBROADCASTSS d, Y3; \
	VCVTDQ2PS lanes, lanes; \
	VFMADD231PS Y3, lanes, Y0

// Q5_K. Y4 the block's scales (every qword), Y5 its mins, Y14 its qh.
// Q5GROUP(g, op1, n1, op2, n2, acc) adds the scaled sums of the 64 weights of
// qs bytes 32g.. to acc: the low nibbles with bit 2g of qh moved to bit 4
// (by op1 $n1), the high ones with bit 2g+1 (op2 $n2).
#define Q5GROUP(g, op1, n1, op2, n2, acc) \
	VMOVDQU (48+32*g)(SI), Y6; \
	VPSRLW $4, Y6, Y7; \
	VPAND Y15, Y6, Y6; \
	VPAND Y15, Y7, Y7; \
	VPAND (C_BIT+64*g)(R13), Y14, Y8; \
	VPAND (C_BIT+64*g+32)(R13), Y14, Y9; \
	op1 $n1, Y8, Y8; \
	op2 $n2, Y9, Y9; \
	VPOR Y8, Y6, Y6; \
	VPOR Y9, Y7, Y7; \
	VPMADDUBSW (4+64*g)(DI), Y6, Y6; \
	VPMADDUBSW (36+64*g)(DI), Y7, Y7; \
	VPSHUFB (C_BYTE+64*g)(R13), Y4, Y8; \
	VPSHUFB (C_BYTE+64*g+32)(R13), Y4, Y9; \
	VPMADDWD Y8, Y6, Y6; \
	VPMADDWD Y9, Y7, Y7; \
	VPADDD Y6, acc, acc; \
	VPADDD Y7, acc, acc

// func q5_KRows(nb int, w, y *byte, out *float32, rows int, k *[kx86RowsConstRows][32]byte)
//
// X10 the row's min sum (the reference's summs).
TEXT ·q5_KRows(SB), NOSPLIT, $0-48
	ROWS
	VMOVDQU C_M4(R13), Y15
q5krow:
	ROWSTART(q5kdone, q5krowdone)
q5kblock:
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
	// Σ min·(bsum 2k + bsum 2k+1), exact int32, to lane 0 of X5
	VPSHUFB C_MIN(R13), Y5, Y5
	VPMADDWD 260(DI), Y5, Y5
	VEXTRACTI128 $1, Y5, X6
	VPADDD X6, X5, X5
	VPHADDD X5, X5, X5
	VPHADDD X5, X5, X5
	VMOVDQU 16(SI), Y14
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	Q5GROUP(0, VPSLLW, 4, VPSLLW, 3, Y1)
	Q5GROUP(1, VPSLLW, 2, VPSLLW, 1, Y2)
	Q5GROUP(2, VPSRLW, 0, VPSRLW, 1, Y1)
	Q5GROUP(3, VPSRLW, 2, VPSRLW, 3, Y2)
	VPADDD Y2, Y1, Y1
	// yd·d, yd·dmin in lanes 0, 1 of X7
	VMOVD (SI), X7
	VCVTPH2PS X7, X7
	VBROADCASTSS (DI), X6
	VMULPS X6, X7, X7
	LANES(X7, Y1)
	// summs = fma(-yd·dmin, float32(Σ min·bsum), summs)
	VMOVSHDUP X7, X8
	VCVTDQ2PS X5, X5
	VFNMADD231SS X8, X5, X10
	NEXTBLOCK(const_q5_KBytes)
	JNZ q5kblock
q5krowdone:
	HSUMX86
	VADDSS X10, X0, X0
	ENDROW
	JMP q5krow
q5kdone:
	VZEROUPPER
	RET

// Q3_K. Y4, Y5 the scales (minus 32, int16) of the block's halves, each in
// both 128-bit halves, Y14 its hmask inverted.
// Q3PART(i, q, k, op, n, S) adds the 32 weights i (2-bit fields k of q, high
// bit i of hmask) to Y1 or Y2: VPMADDUBSW of the low bits and, apart, of
// 4·(1 - high bit) (bit i of Y14 moved to bit 2 by op $n), their
// difference times the scales S picks for them.
#define Q3PART(i, q, k, op, n, S, acc) \
	VPSRLW $(2*k), q, Y6; \
	VPAND Y15, Y6, Y6; \
	VPAND (C_BIT+32*i)(R13), Y14, Y7; \
	op $n, Y7, Y7; \
	VPMADDUBSW (4+32*i)(DI), Y6, Y6; \
	VPMADDUBSW (4+32*i)(DI), Y7, Y7; \
	VPSUBW Y7, Y6, Y6; \
	VPSHUFB (C_SC16+32*k)(R13), S, Y8; \
	VPMADDWD Y8, Y6, Y6; \
	VPADDD Y6, acc, acc

// func q3_KRows(nb int, w, y *byte, out *float32, rows int, k *[kx86RowsConstRows][32]byte)
TEXT ·q3_KRows(SB), NOSPLIT, $0-48
	ROWS
	VMOVDQU C_M3(R13), Y15
	VPCMPEQB Y13, Y13, Y13 // all ones
q3krow:
	ROWSTART(q3kdone, q3krowdone)
q3kblock:
	// the scales (q3KScalesVec): words a0&low4 | (a2&top2)<<4,
	// a1&low4 | (a2>>2&top2)<<4, a0>>4&low4 | (a2>>4&top2)<<4,
	// a1>>4&low4 | (a2>>6&top2)<<4, minus 32, to int16
	MOVL 96(SI), AX
	MOVL 100(SI), BX
	MOVL 104(SI), R8
	MOVL AX, R10
	ANDL $0x0f0f0f0f, R10
	MOVL R8, R14
	ANDL $0x03030303, R14
	SHLL $4, R14
	ORL R14, R10
	VMOVD R10, X4
	MOVL BX, R10
	ANDL $0x0f0f0f0f, R10
	MOVL R8, R14
	SHRL $2, R14
	ANDL $0x03030303, R14
	SHLL $4, R14
	ORL R14, R10
	VPINSRD $1, R10, X4, X4
	SHRL $4, AX
	ANDL $0x0f0f0f0f, AX
	MOVL R8, R14
	SHRL $4, R14
	ANDL $0x03030303, R14
	SHLL $4, R14
	ORL R14, AX
	VPINSRD $2, AX, X4, X4
	SHRL $4, BX
	ANDL $0x0f0f0f0f, BX
	SHRL $6, R8
	ANDL $0x03030303, R8
	SHLL $4, R8
	ORL R8, BX
	VPINSRD $3, BX, X4, X4
	VPSUBB C_32(R13), X4, X4
	VPMOVSXBW X4, Y4
	VPERMQ $0xee, Y4, Y5
	VPERMQ $0x44, Y4, Y4
	VPXOR (SI), Y13, Y14
	VMOVDQU 32(SI), Y9
	VMOVDQU 64(SI), Y10
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	Q3PART(0, Y9, 0, VPSLLW, 2, Y4, Y1)
	Q3PART(1, Y9, 1, VPSLLW, 1, Y4, Y2)
	Q3PART(2, Y9, 2, VPSRLW, 0, Y4, Y1)
	Q3PART(3, Y9, 3, VPSRLW, 1, Y4, Y2)
	Q3PART(4, Y10, 0, VPSRLW, 2, Y5, Y1)
	Q3PART(5, Y10, 1, VPSRLW, 3, Y5, Y2)
	Q3PART(6, Y10, 2, VPSRLW, 4, Y5, Y1)
	Q3PART(7, Y10, 3, VPSRLW, 5, Y5, Y2)
	VPADDD Y2, Y1, Y1
	// d·yd
	MOVWLZX 108(SI), AX
	VMOVD AX, X7
	VCVTPH2PS X7, X7
	VMULSS (DI), X7, X7
	LANES(X7, Y1)
	NEXTBLOCK(const_q3_KBytes)
	JNZ q3kblock
q3krowdone:
	HSUMX86
	ENDROW
	JMP q3krow
q3kdone:
	VZEROUPPER
	RET

// Q2_K. Y4, Y5 the scales (int16) of the block's halves, each in both
// 128-bit halves; Y9, Y10 its quant bytes.
// Q2PART(i, q, k, S, acc) adds the 32 weights i (2-bit fields k of q) to
// acc.
#define Q2PART(i, q, k, S, acc) \
	VPSRLW $(2*k), q, Y6; \
	VPAND Y15, Y6, Y6; \
	VPMADDUBSW (4+32*i)(DI), Y6, Y6; \
	VPSHUFB (C_SC16+32*k)(R13), S, Y8; \
	VPMADDWD Y8, Y6, Y6; \
	VPADDD Y6, acc, acc

// func q2_KRows(nb int, w, y *byte, out *float32, rows int, k *[kx86RowsConstRows][32]byte)
TEXT ·q2_KRows(SB), NOSPLIT, $0-48
	ROWS
	VMOVDQU C_M3(R13), Y15
	VMOVDQU C_M4(R13), X13
q2krow:
	ROWSTART(q2kdone, q2krowdone)
q2kblock:
	// the mins (high nibbles) times the bsums: the min lanes
	VMOVDQU (SI), X4
	VPSRLW $4, X4, X5
	VPAND X13, X5, X5
	VPMOVZXBW X5, Y5
	VPMADDWD 260(DI), Y5, Y11
	// the scales (low nibbles)
	VPAND X13, X4, X4
	VPMOVZXBW X4, Y4
	VPERMQ $0xee, Y4, Y5
	VPERMQ $0x44, Y4, Y4
	VMOVDQU 16(SI), Y9
	VMOVDQU 48(SI), Y10
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	Q2PART(0, Y9, 0, Y4, Y1)
	Q2PART(1, Y9, 1, Y4, Y2)
	Q2PART(2, Y9, 2, Y4, Y1)
	Q2PART(3, Y9, 3, Y4, Y2)
	Q2PART(4, Y10, 0, Y5, Y1)
	Q2PART(5, Y10, 1, Y5, Y2)
	Q2PART(6, Y10, 2, Y5, Y1)
	Q2PART(7, Y10, 3, Y5, Y2)
	VPADDD Y2, Y1, Y1
	// yd·d, yd·dmin in lanes 0, 1 of X7; the min lanes first, by
	// fma(-yd·dmin, ·, ·), then the scaled ones
	VMOVD 80(SI), X7
	VCVTPH2PS X7, X7
	VBROADCASTSS (DI), X6
	VMULPS X6, X7, X7
	VMOVSHDUP X7, X8
	VBROADCASTSS X8, Y3
	VCVTDQ2PS Y11, Y11
	VFNMADD231PS Y3, Y11, Y0
	LANES(X7, Y1)
	NEXTBLOCK(const_q2_KBytes)
	JNZ q2kblock
q2krowdone:
	HSUMX86
	ENDROW
	JMP q2krow
q2kdone:
	VZEROUPPER
	RET

// IQ4_XS (reference dotIQ4_XSRef, kernel dotIQ4_XSAVX2): per sub-block j
// of 32 weights, VPSHUFB looks the levels of its nibbles up (the low
// nibbles' in the low 128-bit half, the high ones' in the high half, as the
// activations lie), VPMADDUBSW of |y| and the levels with y's sign
// (VPSIGNB), VPMADDWD by the sub-block's scale-32. The eight scales are
// made once per block: scales_l's nibbles and scales_h's 2-bit fields
// spread to one byte each by shifts and masks (C_SPREAD), combined, less
// 32, widened to int16 lanes in both 128-bit halves of Y13; VPSHUFB by
// C_WORD+32j puts scale j in every lane.
// Y14 the levels.
// IQ4PAIR(j, acc1, acc2) adds sub-block j's lanes to acc1 and j+1's to
// acc2 (j even: their 32 nibble bytes are adjacent).
#define IQ4PAIR(j, acc1, acc2) \
	VMOVDQU (8+16*j)(SI), Y6; \
	VPSRLW $4, Y6, Y7; \
	VPAND Y15, Y6, Y6; \
	VPAND Y15, Y7, Y7; \
	VPERM2I128 $0x20, Y7, Y6, Y8; \
	VPERM2I128 $0x31, Y7, Y6, Y9; \
	VPSHUFB Y8, Y14, Y8; \
	VPSHUFB Y9, Y14, Y9; \
	VMOVDQU (4+32*j)(DI), Y10; \
	VMOVDQU (36+32*j)(DI), Y11; \
	VPSIGNB Y10, Y8, Y8; \
	VPSIGNB Y11, Y9, Y9; \
	VPABSB Y10, Y10; \
	VPABSB Y11, Y11; \
	VPMADDUBSW Y8, Y10, Y10; \
	VPMADDUBSW Y9, Y11, Y11; \
	VPSHUFB (C_WORD+32*j)(R13), Y13, Y8; \
	VPSHUFB (C_WORD+32*j+32)(R13), Y13, Y9; \
	VPMADDWD Y8, Y10, Y10; \
	VPMADDWD Y9, Y11, Y11; \
	VPADDD Y10, acc1, acc1; \
	VPADDD Y11, acc2, acc2

// IQ4SCALES sets Y13 to the block's eight scales-32 (int16, in both
// 128-bit halves), from scales_h (2(SI)) and scales_l (4(SI)).
#define IQ4SCALES \
	MOVL 4(SI), AX; \
	MOVQ AX, BX; \
	SHLQ $16, BX; \
	ORQ BX, AX; \
	ANDQ (C_SPREAD)(R13), AX; \
	MOVQ AX, BX; \
	SHLQ $8, BX; \
	ORQ BX, AX; \
	ANDQ (C_SPREAD+8)(R13), AX; \
	MOVQ AX, BX; \
	SHLQ $4, BX; \
	ORQ BX, AX; \
	ANDQ (C_SPREAD+16)(R13), AX; \
	MOVWQZX 2(SI), R8; \
	MOVQ R8, BX; \
	SHLQ $24, BX; \
	ORQ BX, R8; \
	ANDQ (C_SPREAD+24)(R13), R8; \
	MOVQ R8, BX; \
	SHLQ $12, BX; \
	ORQ BX, R8; \
	ANDQ (C_SPREAD+32)(R13), R8; \
	MOVQ R8, BX; \
	SHLQ $6, BX; \
	ORQ BX, R8; \
	ANDQ (C_SPREAD+40)(R13), R8; \
	SHLQ $4, R8; \
	ORQ R8, AX; \
	VMOVQ AX, X13; \
	VPSUBB C_32(R13), X13, X13; \
	VPMOVSXBW X13, Y13; \
	VPERMQ $0x44, Y13, Y13

// func iq4_XSRows(nb int, w, y *byte, out *float32, rows int, k *[kx86RowsConstRows][32]byte)
TEXT ·iq4_XSRows(SB), NOSPLIT, $0-48
	ROWS
	VMOVDQU C_M4(R13), Y15
	VMOVDQU C_IQ4(R13), Y14
iq4xsrow:
	ROWSTART(iq4xsdone, iq4xsrowdone)
iq4xsblock:
	IQ4SCALES
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	IQ4PAIR(0, Y1, Y2)
	IQ4PAIR(2, Y1, Y2)
	IQ4PAIR(4, Y1, Y2)
	IQ4PAIR(6, Y1, Y2)
	VPADDD Y2, Y1, Y1
	// fp16(d)·yd
	MOVWLZX (SI), AX
	VMOVD AX, X7
	VCVTPH2PS X7, X7
	VMULSS (DI), X7, X7
	LANES(X7, Y1)
	NEXTBLOCK(const_iq4_XSBytes)
	JNZ iq4xsblock
iq4xsrowdone:
	HSUMX86
	ENDROW
	JMP iq4xsrow
iq4xsdone:
	VZEROUPPER
	RET

// Q5_0, Q5_1, Q4_1 (references dotQ5_0Ref, dotQ5_1Ref, dotQ4_1Ref; kernels
// dotQ5_0AVX2, …): a block's 32 quants in one vector in weight order (the
// low nibbles in the low 128-bit half, the high ones in the high half),
// Q5's fifth bits spread from the qh word (VPSHUFB, VPAND, VPCMPEQB: 16
// where set); VPMADDUBSW with the int8 activations (Q5_0: less VPMADDUBSW
// of 16 and them) and VPMADDWD with ones leave lane k the weights
// 4k..4k+3; then acc = fma(dx·dy, lanes, acc) and, for Q5_1 and Q4_1, the
// scalar summs = fma(m, s, summs). The constants (q5RowsConsts): 0x0f
// bytes, q5Spread, q5Bits, 16 bytes, int16 ones.
#define C5_M4 0
#define C5_SPREAD 32
#define C5_BITS 64
#define C5_16 96
#define C5_ONES 128

// NIBBLES32(off) sets Y1 to the 32 nibbles of the 16 bytes at off(SI).
#define NIBBLES32(off) \
	VMOVDQU off(SI), X1; \
	VPSRLW $4, X1, X2; \
	VINSERTI128 $1, X2, Y1, Y1; \
	VPAND Y15, Y1, Y1

// FIFTH(off) adds 16 to the quants in Y1 whose bit in the qh word at
// off(SI) is set.
#define FIFTH(off) \
	VPBROADCASTD off(SI), Y2; \
	VPSHUFB Y14, Y2, Y2; \
	VPAND Y13, Y2, Y2; \
	VPCMPEQB Y13, Y2, Y2; \
	VPAND Y12, Y2, Y2; \
	VPOR Y2, Y1, Y1

// Q5ROWS loads the arguments and the constants: Y15 0x0f bytes, Y14
// q5Spread, Y13 q5Bits, Y12 16 bytes, Y11 int16 ones.
#define Q5ROWS \
	ROWS; \
	VMOVDQU C5_M4(R13), Y15; \
	VMOVDQU C5_SPREAD(R13), Y14; \
	VMOVDQU C5_BITS(R13), Y13; \
	VMOVDQU C5_16(R13), Y12; \
	VMOVDQU C5_ONES(R13), Y11

// DXDY sets X5 to dx·dy, X8 to m, X9 to s (Q5_1, Q4_1: the fp16 pairs
// d, m and d, s at the blocks' starts).
#define DXDY \
	VMOVD (SI), X5; \
	VCVTPH2PS X5, X5; \
	VMOVD (DI), X6; \
	VCVTPH2PS X6, X6; \
	VMOVSHDUP X5, X8; \
	VMOVSHDUP X6, X9; \
	VMULSS X6, X5, X5

// func q5_0Rows(nb int, w, y *byte, out *float32, rows int, k *[5][32]byte)
TEXT ·q5_0Rows(SB), NOSPLIT, $0-48
	Q5ROWS
q50row:
	ROWSTART(q50done, q50rowdone)
q50block:
	NIBBLES32(6)
	FIFTH(2)
	VMOVDQU 2(DI), Y3
	VPMADDUBSW Y3, Y1, Y1
	VPMADDUBSW Y3, Y12, Y4
	VPSUBW Y4, Y1, Y1
	VPMADDWD Y11, Y1, Y1
	MOVWLZX (SI), AX
	VMOVD AX, X5
	VCVTPH2PS X5, X5
	MOVWLZX (DI), AX
	VMOVD AX, X6
	VCVTPH2PS X6, X6
	VMULSS X6, X5, X5
	LANES(X5, Y1)
	ADDQ $const_q5_0Bytes, SI
	ADDQ $const_q8_0Bytes, DI
	DECQ CX
	JNZ q50block
q50rowdone:
	HSUMX86
	ENDROW
	JMP q50row
q50done:
	VZEROUPPER
	RET

// func q5_1Rows(nb int, w, y *byte, out *float32, rows int, k *[5][32]byte)
TEXT ·q5_1Rows(SB), NOSPLIT, $0-48
	Q5ROWS
q51row:
	ROWSTART(q51done, q51rowdone)
q51block:
	NIBBLES32(8)
	FIFTH(4)
	VPMADDUBSW 4(DI), Y1, Y1
	VPMADDWD Y11, Y1, Y1
	DXDY
	VFMADD231SS X9, X8, X10
	LANES(X5, Y1)
	ADDQ $const_q5_1Bytes, SI
	ADDQ $const_q8_1Bytes, DI
	DECQ CX
	JNZ q51block
q51rowdone:
	HSUMX86
	VADDSS X10, X0, X0
	ENDROW
	JMP q51row
q51done:
	VZEROUPPER
	RET

// func q4_1Rows(nb int, w, y *byte, out *float32, rows int, k *[5][32]byte)
TEXT ·q4_1Rows(SB), NOSPLIT, $0-48
	Q5ROWS
q41row:
	ROWSTART(q41done, q41rowdone)
q41block:
	NIBBLES32(4)
	VPMADDUBSW 4(DI), Y1, Y1
	VPMADDWD Y11, Y1, Y1
	DXDY
	VFMADD231SS X9, X8, X10
	LANES(X5, Y1)
	ADDQ $const_q4_1Bytes, SI
	ADDQ $const_q8_1Bytes, DI
	DECQ CX
	JNZ q41block
q41rowdone:
	HSUMX86
	VADDSS X10, X0, X0
	ENDROW
	JMP q41row
q41done:
	VZEROUPPER
	RET

// The DotN kernels of Q5_0, Q5_1 and Q4_1 (dotNQ5AVX2): one row against
// four activations, each block decoded once (NIBBLES32, FIFTH) and its
// lanes with each activation's block added to that activation's eight
// float32 lanes (Y4..Y7) as the Rows kernels above add them. The four
// products dx·dy are made in one vector (the activations' fp16 scales
// gathered by VPINSR, widened by VCVTPH2PS) and broadcast from the frame;
// Q5_1's and Q4_1's four summs = fma(m, s, summs) run in the odd lanes of
// Y10 (the even ones are not read). R8..R11 the activations, DI the offset
// of their current block, SI the weight block, CX blocks left.

// DOT4ARGS loads the activations (from the array at AX) and the constants
// (at R13), and clears the sums.
#define DOT4ARGS \
	MOVQ 0(AX), R8; \
	MOVQ 8(AX), R9; \
	MOVQ 16(AX), R10; \
	MOVQ 24(AX), R11; \
	VMOVDQU C5_M4(R13), Y15; \
	VMOVDQU C5_SPREAD(R13), Y14; \
	VMOVDQU C5_BITS(R13), Y13; \
	VMOVDQU C5_16(R13), Y12; \
	VMOVDQU C5_ONES(R13), Y11; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	VXORPS Y10, Y10, Y10; \
	XORQ DI, DI

// DS1 sets the frame's float32s 0, 2, 4, 6 to dx·dy of the four
// activations and runs their summs (Q8_1 activations: d, s at their
// blocks' starts; the weight block's d, m at SI).
#define DS1 \
	VMOVD (R8)(DI*1), X9; \
	VPINSRD $1, (R9)(DI*1), X9, X9; \
	VPINSRD $2, (R10)(DI*1), X9, X9; \
	VPINSRD $3, (R11)(DI*1), X9, X9; \
	VCVTPH2PS X9, Y9; \
	VMOVD (SI), X8; \
	VCVTPH2PS X8, X8; \
	VPBROADCASTQ X8, Y8; \
	VFMADD231PS Y9, Y8, Y10; \
	VMULPS Y9, Y8, Y8; \
	VMOVUPS Y8, 0(SP)

// ACT1(r, off, acc): acc = fma(dx·dy, lanes, acc) for the Q8_1 activation
// at r (its product at off(SP)), the quants in Y1.
#define ACT1(r, off, acc) \
	VPMADDUBSW 4(r)(DI*1), Y1, Y0; \
	VPMADDWD Y11, Y0, Y0; \
	VCVTDQ2PS Y0, Y0; \
	VBROADCASTSS off(SP), Y3; \
	VFMADD231PS Y3, Y0, acc

// DOT4ONE(acc, k) stores activation k's result: its lanes added as
// hsumX86; DOT4ONES(acc, k) adds its summs too (lane 2k+1 of Y10, stored
// at 32(SP)).
#define DOT4ONE(acc, k) \
	VMOVAPS acc, Y0; \
	HSUMX86; \
	VMOVSS X0, (4*k)(DX)

#define DOT4ONES(acc, k) \
	VMOVAPS acc, Y0; \
	HSUMX86; \
	VADDSS (32+8*k+4)(SP), X0, X0; \
	VMOVSS X0, (4*k)(DX)

// func q5_1Dot4(nb int, w *byte, y *[4]*byte, out *[4]float32, k *[5][32]byte)
TEXT ·q5_1Dot4(SB), NOSPLIT, $64-40
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ y+16(FP), AX
	MOVQ k+32(FP), R13
	DOT4ARGS
q51d4block:
	NIBBLES32(8)
	FIFTH(4)
	DS1
	ACT1(R8, 0, Y4)
	ACT1(R9, 8, Y5)
	ACT1(R10, 16, Y6)
	ACT1(R11, 24, Y7)
	ADDQ $const_q5_1Bytes, SI
	ADDQ $const_q8_1Bytes, DI
	DECQ CX
	JNZ q51d4block
	MOVQ out+24(FP), DX
	VMOVUPS Y10, 32(SP)
	DOT4ONES(Y4, 0)
	DOT4ONES(Y5, 1)
	DOT4ONES(Y6, 2)
	DOT4ONES(Y7, 3)
	VZEROUPPER
	RET

// func q4_1Dot4(nb int, w *byte, y *[4]*byte, out *[4]float32, k *[5][32]byte)
TEXT ·q4_1Dot4(SB), NOSPLIT, $64-40
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ y+16(FP), AX
	MOVQ k+32(FP), R13
	DOT4ARGS
q41d4block:
	NIBBLES32(4)
	DS1
	ACT1(R8, 0, Y4)
	ACT1(R9, 8, Y5)
	ACT1(R10, 16, Y6)
	ACT1(R11, 24, Y7)
	ADDQ $const_q4_1Bytes, SI
	ADDQ $const_q8_1Bytes, DI
	DECQ CX
	JNZ q41d4block
	MOVQ out+24(FP), DX
	VMOVUPS Y10, 32(SP)
	DOT4ONES(Y4, 0)
	DOT4ONES(Y5, 1)
	DOT4ONES(Y6, 2)
	DOT4ONES(Y7, 3)
	VZEROUPPER
	RET

// DS0 sets the frame's float32s 0..3 to dx·dy of the four Q8_0
// activations (their fp16 d at their blocks' starts, the weight block's
// at SI).
#define DS0 \
	MOVWLZX (R8)(DI*1), AX; \
	VMOVD AX, X9; \
	MOVWLZX (R9)(DI*1), AX; \
	VPINSRW $1, AX, X9, X9; \
	MOVWLZX (R10)(DI*1), AX; \
	VPINSRW $2, AX, X9, X9; \
	MOVWLZX (R11)(DI*1), AX; \
	VPINSRW $3, AX, X9, X9; \
	VCVTPH2PS X9, X9; \
	MOVWLZX (SI), AX; \
	VMOVD AX, X8; \
	VCVTPH2PS X8, X8; \
	VBROADCASTSS X8, X8; \
	VMULPS X9, X8, X8; \
	VMOVUPS X8, 0(SP)

// ACT0(r, off, acc) is ACT1 for Q5_0 and its Q8_0 activation at r: the
// quants less 16 (VPMADDUBSW of 16 and y subtracted).
#define ACT0(r, off, acc) \
	VMOVDQU 2(r)(DI*1), Y3; \
	VPMADDUBSW Y3, Y1, Y0; \
	VPMADDUBSW Y3, Y12, Y2; \
	VPSUBW Y2, Y0, Y0; \
	VPMADDWD Y11, Y0, Y0; \
	VCVTDQ2PS Y0, Y0; \
	VBROADCASTSS off(SP), Y3; \
	VFMADD231PS Y3, Y0, acc

// func q5_0Dot4(nb int, w *byte, y *[4]*byte, out *[4]float32, k *[5][32]byte)
TEXT ·q5_0Dot4(SB), NOSPLIT, $64-40
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ y+16(FP), AX
	MOVQ k+32(FP), R13
	DOT4ARGS
q50d4block:
	NIBBLES32(6)
	FIFTH(2)
	DS0
	ACT0(R8, 0, Y4)
	ACT0(R9, 4, Y5)
	ACT0(R10, 8, Y6)
	ACT0(R11, 12, Y7)
	ADDQ $const_q5_0Bytes, SI
	ADDQ $const_q8_0Bytes, DI
	DECQ CX
	JNZ q50d4block
	MOVQ out+24(FP), DX
	DOT4ONE(Y4, 0)
	DOT4ONE(Y5, 1)
	DOT4ONE(Y6, 2)
	DOT4ONE(Y7, 3)
	VZEROUPPER
	RET

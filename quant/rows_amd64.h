// The scaffolding of the hand-written DotRows kernels (k_rows_amd64.s,
// kx86_rows_amd64.s): each takes (nb int, w, y *byte, out *float32,
// rows int, k *constants) and runs row after row, block after block.
//
// register use: SI weight block, DI activation block, R11 the activation,
// CX blocks left, R9 blocks per row, R12 rows left, DX out, R13 the
// constants, X0 the row's sum (or its float32 lanes), X10 a second sum
// (the min sums of the formats that have them).

// ROWS loads the arguments.
#define ROWS \
	MOVQ nb+0(FP), R9; \
	MOVQ w+8(FP), SI; \
	MOVQ y+16(FP), R11; \
	MOVQ out+24(FP), DX; \
	MOVQ rows+32(FP), R12; \
	MOVQ k+40(FP), R13

// ROWSTART(done, rowdone) starts a row (X0, X10 cleared), or jumps to done
// if none is left (to rowdone if the row has no blocks).
#define ROWSTART(done, rowdone) \
	TESTQ R12, R12; \
	JZ done; \
	MOVQ R11, DI; \
	MOVQ R9, CX; \
	VXORPS X0, X0, X0; \
	VXORPS X10, X10, X10; \
	TESTQ CX, CX; \
	JZ rowdone

// NEXTBLOCK(bytes) moves to the next weight block (bytes long) and Q8_K
// block and counts it.
#define NEXTBLOCK(bytes) \
	ADDQ $bytes, SI; \
	ADDQ $const_q8_KBytes, DI; \
	DECQ CX

// ENDROW stores the row's sum (X0) and moves to the next row.
#define ENDROW \
	VMOVSS X0, (DX); \
	ADDQ $4, DX; \
	DECQ R12

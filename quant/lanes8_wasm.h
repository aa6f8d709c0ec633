// Macros of the kernels whose blocks give ggml's eight x86 lane sums
// (lane L: the weights whose index modulo 32 is 4L..4L+3) from int16
// weights dotted with activations prepared by splitQ8_K (tq_wasm.s,
// iq1_wasm.s, e8iq3_wasm.s). The including file defines the register use they name.

// PY pushes the 8 prepared int16 activations at R1+off.
#define PY(off) Get R1; I32WrapI64; V128Load $(off)

// DXTAB pushes the float32 of the block's fp16 d (byte off of the block
// at R0), through the table at R4.
#define DXTAB(off) Get R4; Get R0; I32WrapI64; I64Load16U $(off); I64Const $2; I64Shl; I64Add; I32WrapI64; F32Load $0

// LANESUM8 pushes laneSum8 of the running sums lo, hi (V10 scratch).
#define LANESUM8(lo, hi) \
	Get lo; Get hi; F32x4Add; Set V10; \
	Get V10; F32x4ExtractLane $0, $0; Get V10; F32x4ExtractLane $0, $2; F32Add; \
	Get V10; F32x4ExtractLane $0, $1; Get V10; F32x4ExtractLane $0, $3; F32Add; \
	F32Add

// PA pushes the 8 prepared int16 activations at R11+off.
#define PA(off) Get R11; I32WrapI64; V128Load $(off)

// ACTSN runs body over the activations: R11 the activation's prepared
// block (from R1, by R15), R3 its accumulators (from acc, by stride),
// R13 counting (the kernel's arguments acc at 32(FP), acts at 56(FP)).
#define ACTSN(stride, body) \
	Get R1; Set R11; I64Load acc+32(FP); Set R3; I64Load acts+56(FP); Set R13; \
	Loop; \
		body; \
		Get R11; Get R15; I64Add; Set R11; ADD(R3, stride); \
		COUNTDOWN(R13); \
	End

// TRITS2 sets V8..V15 to the trits pushed by its arguments: for a run l
// and the next, of the half-block in V2 (bytes 0-15), V3 (16-31): run l's
// even and odd trits of V2, then of V3, then run l+1's.
#define TRITS2(ta0, ta1, tb0, tb1, ua0, ua1, ub0, ub1) \
	ta0; Set V8; ta1; Set V9; tb0; Set V10; tb1; Set V11; \
	ua0; Set V12; ua1; Set V13; ub0; Set V14; ub1; Set V15

// DOTS2 pushes, for the activation at R11, the int32 lanes 0-3 and then
// 4-7 of V8..V15 with its prepared activations from p.
#define DOTS2(p) \
	Get V8; PA(p); I32x4DotI16x8S; Get V9; PA(p+16); I32x4DotI16x8S; I32x4Add; \
	Get V12; PA(p+64); I32x4DotI16x8S; I32x4Add; Get V13; PA(p+80); I32x4DotI16x8S; I32x4Add; \
	Set V4; \
	Get V10; PA(p+32); I32x4DotI16x8S; Get V11; PA(p+48); I32x4DotI16x8S; I32x4Add; \
	Get V14; PA(p+96); I32x4DotI16x8S; I32x4Add; Get V15; PA(p+112); I32x4DotI16x8S; I32x4Add; \
	Set V5
#define FIRSTN(p) DOTS2(p); \
	Get R3; I32WrapI64; Get V4; V128Store $0, $0; \
	Get R3; I32WrapI64; Get V5; V128Store $0, $16
#define ADDN(p) DOTS2(p); \
	Get R3; I32WrapI64; Get R3; I32WrapI64; V128Load $0; Get V4; I32x4Add; V128Store $0, $0; \
	Get R3; I32WrapI64; Get R3; I32WrapI64; V128Load $16; Get V5; I32x4Add; V128Store $0, $16


// ROWSN8(pre, block, size, stride, rowend) is the body of the DotRowsN
// kernels of tq_wasm.s, iq1_wasm.s and e8iq3_wasm.s (their arguments x,
// yp, yd, tab, acc, nb, rows, acts, out at 0..64(FP)): pre sets the
// kernel's constants and other arguments (NOPRE8: none); per weight block
// (size bytes) block, the decoder with its ACTSN over the activations,
// whose accumulators are stride bytes apart; per row ACTSN of rowend.
#define ROWSN8(pre, block, size, stride, rowend) \
	I64Load x+0(FP); Set R0; \
	I64Load tab+24(FP); Set R4; \
	I64Load rows+48(FP); Set R6; \
	I64Load out+64(FP); Set R14; \
	I64Load nb+40(FP); I64Const $544; I64Mul; Set R15; \
	pre; \
	Loop; \
		I64Load yp+8(FP); Set R1; \
		I64Load yd+16(FP); Set R5; \
		I64Load nb+40(FP); Set R2; \
		Loop; \
			block; \
			ADD(R0, size); \
			ADD(R1, 544); \
			COUNTDOWN(R2); \
		End; \
		ACTSN(stride, rowend); \
		COUNTDOWN(R6); \
	End
#define NOPRE8

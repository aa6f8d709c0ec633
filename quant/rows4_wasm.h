// Macros of the four-row Q8_0 and Q4_0 DotRows kernels (rows4_wasm.s, and
// rows4_relaxed_wasm.s in the relaxedsimd build): see rows4_wasm.s for
// the register use. The including file defines PY and the row macros.

// PAIRS4 sets a to [a0+a1, b0+b1, a2+a3, b2+b3].
#define PAIRS4(a, b) \
	Get a; Get a; I32Const $32; I64x2ShrU; I32x4Add; \
	Get b; Get b; I32Const $32; I64x2Shl; I32x4Add; \
	Get V9; V128Bitselect; Set a

// REDUCE4 pushes [ΣV5, ΣV6, ΣV7, ΣV8] (wrapping int32 adds): pairs of
// lanes added and merged, then each int64 half added to the other one.
#define REDUCE4 \
	PAIRS4(V5, V6); PAIRS4(V7, V8); \
	Get V5; Get V5; Get V11; I8x16Swizzle; I32x4Add; \
	Get V7; Get V7; Get V11; I8x16Swizzle; I32x4Add; \
	Get V10; V128Bitselect

// DX pushes the float32 of the fp16 scale at the start of the block at r
// (through fp16ToFP32Table at R13).
#define DX(r) Get R13; Get r; I32WrapI64; I64Load16U $0; I64Const $2; I64Shl; I64Add; I32WrapI64; F32Load $0

// FLOAT4 adds float32(sums)·float32(dx·dy) of the pushed int32 sums of
// the four rows' blocks to V1 (dx their fp16 scales, through the table).
#define FLOAT4 \
	F32x4ConvertI32x4S; \
	DX(R0); F32x4Splat; DX(R4); F32x4ReplaceLane $0, $1; DX(R5); F32x4ReplaceLane $0, $2; DX(R6); F32x4ReplaceLane $0, $3; \
	Get R1; I32WrapI64; F32Load $0; F32x4Splat; F32x4Mul; \
	F32x4Mul; Get V1; F32x4Add; Set V1

// ROWS4 is the body of q8_0Rows4, q4_0Rows4 and q4_0Rows4Relaxed: for
// each group of four rows, each block's four integer sums (rowq for each
// row, then bias), its float part, and the group's four results stored at
// R14; the activation's blocks at yp are ystride bytes apart.
#define ROWS4(xsize, ystride, rowq, bias) \
	I64Load x+0(FP); Set R0; \
	I64Load rowBytes+48(FP); Set R15; \
	I64Load groups+56(FP); Set R12; \
	I64Load tab+32(FP); Set R13; \
	I64Load out+64(FP); Set R14; \
	V128Const $0x000f000f000f000f, $0x000f000f000f000f; Set V0; \
	V128Const $0x00000000ffffffff, $0x00000000ffffffff; Set V9; \
	V128Const $-1, $0; Set V10; \
	V128Const $0x0f0e0d0c0b0a0908, $0x0706050403020100; Set V11; \
	Block; \
	Get R12; I64Eqz; BrIf $0; \
	Loop; \
		Get R0; Get R15; I64Add; Set R4; \
		Get R4; Get R15; I64Add; Set R5; \
		Get R5; Get R15; I64Add; Set R6; \
		I64Load yp+8(FP); Set R11; \
		I64Load yd+16(FP); Set R1; \
		I64Load ysum+24(FP); Set R3; \
		I64Load nb+40(FP); Set R2; \
		V128Const $0, $0; Set V1; \
		Loop; \
			rowq(R0, V5); rowq(R4, V6); rowq(R5, V7); rowq(R6, V8); \
			REDUCE4; bias; FLOAT4; \
			ADD(R0, xsize); ADD(R4, xsize); ADD(R5, xsize); ADD(R6, xsize); \
			ADD(R11, ystride); ADD(R1, 4); ADD(R3, 4); \
			COUNTDOWN(R2); \
		End; \
		Get R14; I32WrapI64; Get V1; V128Store $0, $0; \
		ADD(R14, 16); \
		Get R6; Set R0; \
		COUNTDOWN(R12); \
	End; \
	End

// NOBIAS leaves Q8_0's sums as they are; BIAS8 takes 8·Σy off Q4_0's.
#define NOBIAS
#define BIAS8 Get R3; I32WrapI64; I32Load $0; I32Const $3; I32Shl; I32x4Splat; I32x4Sub

// Macros of the wasm SIMD128 K-quant kernels of q5_k_wasm.s (besides
// simd_wasm.h's).

// KTAB(r, off) pushes the float32 value of the fp16 at r+off, looked up
// in the table at R14 (fp16ToFP32Table).
#define KTAB(r, off) \
	Get r; I32WrapI64; I32Load16U $(off); I32Const $2; I32Shl; Get R14; I32WrapI64; I32Add; F32Load $0

// KSPLAT(k) sets V4 to byte k of V1 in every int32 lane (i8x16.swizzle:
// an index of 0x80 gives zero).
#define KSPLAT(k) \
	Get V1; V128Const $(0x8080800080808000|(k)|((k)<<32)), $(0x8080800080808000|(k)|((k)<<32)); I8x16Swizzle; Set V4

// KROWS(size, body) runs body (one block at R0, its prepared activation
// at R1, the activation's scale at R3) over the rows of a DotRows kernel
// taking (x *byte, nb, rows int, yp *byte, yd, tab, out *float32): each
// row's accumulators V14, V15 zeroed, its nb blocks of size bytes, then
// hsumX86 of its accumulators stored at out. R2 counts the blocks, R12
// walks out, R14 holds tab, R15 counts the rows.
#define KROWS(size, body) \
	I64Load x+0(FP); Set R0; \
	I64Load tab+40(FP); Set R14; \
	I64Load out+48(FP); Set R12; \
	I64Load rows+16(FP); Set R15; \
	Block; \
	Get R15; I64Eqz; BrIf $0; \
	Loop; \
		I64Load yp+24(FP); Set R1; \
		I64Load yd+32(FP); Set R3; \
		I64Load nb+8(FP); Set R2; \
		V128Const $0, $0; Set V14; \
		V128Const $0, $0; Set V15; \
		Loop; \
			body; \
			ADD(R0, size); \
			ADD(R1, 544); \
			ADD(R3, 4); \
			COUNTDOWN(R2); \
		End; \
		Get R12; I32WrapI64; KHSUM8; F32Store $0; \
		ADD(R12, 4); \
		COUNTDOWN(R15); \
	End; \
	End

// KHSUM8 pushes hsumX86 of the accumulators V14, V15 (V4 scratch).
#define KHSUM8 \
	Get V14; Get V15; F32x4Add; Set V4; \
	Get V4; F32x4ExtractLane $0, $0; Get V4; F32x4ExtractLane $0, $2; F32Add; \
	Get V4; F32x4ExtractLane $0, $1; Get V4; F32x4ExtractLane $0, $3; F32Add; \
	F32Add

// KD(off) sets V8 to the f64x2 splat of yd·d, d the fp16 at R0+off and yd
// the float32 at R3 (the block's fused multiply-add's factor).
#define KD(off) \
	Get R3; I32WrapI64; F32Load $0; KTAB(R0, off); F32Mul; F64PromoteF32; F64x2Splat; Set V8

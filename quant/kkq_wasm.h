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

// Macros shared by the DotRowsN kernels that put four activations (a
// quad) in the four int32 lanes of every vector, so that no sum is reduced
// across lanes: quads_wasm.s (Q8_0, Q4_0) and relaxedn_wasm.s (Q4_K, Q6_K).

// GATHER sets V1 to the int32 at byte off of each activation block R4..R7.
#define GATHER(off) \
	Get R4; I32WrapI64; I32Load $(off); I32x4Splat; \
	Get R5; I32WrapI64; I32Load $(off); I32x4ReplaceLane $0, $1; \
	Get R6; I32WrapI64; I32Load $(off); I32x4ReplaceLane $0, $2; \
	Get R7; I32WrapI64; I32Load $(off); I32x4ReplaceLane $0, $3; \
	Set V1

// ZERO sets v to zero.
#define ZERO(v) V128Const $0, $0; Set v

// SPL sets V8 to int32 lane m of V9 in every lane (mask V10+m).
#define SPL(mask) Get V9; Get mask; I8x16Swizzle; Set V8

// MASKS sets V10..V13 to the i8x16.swizzle masks that splat int32 lane
// 0..3 over a vector (SPL).
#define MASKS \
	V128Const $0x0302010003020100, $0x0302010003020100; Set V10; \
	V128Const $0x0706050407060504, $0x0706050407060504; Set V11; \
	V128Const $0x0b0a09080b0a0908, $0x0b0a09080b0a0908; Set V12; \
	V128Const $0x0f0e0d0c0f0e0d0c, $0x0f0e0d0c0f0e0d0c; Set V13


// Macros of the relaxed-SIMD kernels (relaxed_wasm.s, the relaxedsimd build).
//
// Go 1.27's wasm assembler encodes every relaxed op wrongly (FD 92 01 02
// for i16x8.relaxed_dot_i8x16_i7x16_s, whose encoding is FD 92 02), so each
// one is written as RELAXED(op): a marker (i64.const "RELAXED!"; drop) and
// the op, which scripts/relaxpatch rewrites after linking (the marker into
// nops, the op into its right encoding and a nop). An unpatched module
// does not validate.

#define RELAXED(op) I64Const $0x52454c4158454421; Drop; op

// RDOT16 is i16x8.relaxed_dot_i8x16_i7x16_s(a, b) on the stack (a below
// b): lane i is a[2i]·b[2i] + a[2i+1]·b[2i+1], a's bytes as int8. The
// kernels keep every byte of b in 0..127, where the op is exact and the
// same on every engine (outside it an engine may read b's bytes as signed
// or unsigned), and then the sum of a lane's two products fits in int16
// (|2·128·127| < 32768), so no engine saturates it.
//
// (i32x4.relaxed_dot_i8x16_i7x16_add_s, which also adds the pairs of
// lanes to an accumulator, is one instruction where x86 has AVX-VNNI or
// Arm has the dot product, but four with a constant to rebuild on x86
// without AVX-VNNI, where it measured slower for Q4_K than the SIMD128
// kernel: the int16 pairs are widened instead by i32x4.dot_i16x8_s with the
// sub-block's scale, which the multiplication by it needed anyway.)
#define RDOT16 RELAXED(I16x8RelaxedDotI8x16I7x16S)

// RDOTADD is i32x4.relaxed_dot_i8x16_i7x16_add_s(a, b, c) on the stack (c
// on top): lane i is c[i] plus the four products a[4i+k]·b[4i+k], a's
// bytes as int8. With every byte of b in 0..127 it is exact and the same
// on every engine (RDOT16's pairs, which then fit in int16, added to c).
#define RDOTADD RELAXED(I32x4RelaxedDotI8x16I7x16AddS)

// RMADD is f32x4.relaxed_madd(a, b, c) on the stack (c on top): a·b + c,
// rounded once where the engine fuses it (x86 with FMA3, Arm), twice where
// it does not. web/picolm.js runs the relaxed build only where its probe
// finds it fused, so the kernels use it for ggml's fused multiply-adds
// (fma32): an unfused engine takes the SIMD128 build.
#define RMADD RELAXED(F32x4RelaxedMadd)

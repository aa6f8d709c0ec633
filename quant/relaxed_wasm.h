// Macros of the relaxed-SIMD kernels (relaxed_wasm.s, the relaxedsimd build).
//
// Go 1.27's wasm assembler encodes every relaxed op wrongly (FD 93 01 02
// for the relaxed dot, whose encoding is FD 93 02), so each one is written
// as RELAXED(op): a marker (i64.const "RELAXED!"; drop) and the op, which
// scripts/relaxpatch rewrites after linking (the marker into nops, the op
// into its right encoding and a nop). An unpatched module does not
// validate.

#define RELAXED(op) I64Const $0x52454c4158454421; Drop; op

// RDOT is i32x4.relaxed_dot_i8x16_i7x16_add_s(a, b, c) on the stack (a
// below b below c): lane i of c plus Σ_k a[4i+k]·b[4i+k], a's bytes as int8.
// The kernels keep every byte of b in 0..127, where the op is exact and
// the same on every engine (outside it an engine may read b's bytes as
// signed or unsigned), and then no pair sum a·b + a'·b' leaves int16
// (|2·128·127| < 32768), so no engine's intermediate saturates.
#define RDOT RELAXED(I32x4RelaxedDotI8x16I7x16AddS)

// RDOT16 is i16x8.relaxed_dot_i8x16_i7x16_s(a, b): lane i is
// a[2i]·b[2i] + a[2i+1]·b[2i+1], with the same rule for b (and so no
// saturation).
#define RDOT16 RELAXED(I16x8RelaxedDotI8x16I7x16S)

// ZERO pushes a zero vector.
#define ZERO V128Const $0, $0

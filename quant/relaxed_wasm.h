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

// RSWIZZLE is i8x16.relaxed_swizzle(a, b) on the stack (b, the indices, on
// top): i8x16.swizzle where every index is in 0..15, as the kernels keep
// them, and one pshufb on x86 (i8x16.swizzle adds a saturating add that
// zeroes the lanes of indices of 16 or more).
#define RSWIZZLE RELAXED(I8x16RelaxedSwizzle)

// RMADD is f32x4.relaxed_madd(a, b, c) on the stack (c on top): a·b + c,
// rounded once where the engine fuses it (x86 with FMA3, Arm), which is
// fma32 lane by lane; web/picolm.js chooses the relaxed build only where
// it is fused.
#define RMADD RELAXED(F32x4RelaxedMadd)

// ABSSIGN16 prepares 16 int8 activations at R1+soff for the kernels that
// move their signs onto the weights (the relaxed dot's second operand is
// then the magnitude, in 0..127): their magnitudes at R0+moff, 0xff for
// each negative one and 0 for the others at R0+goff, and the magnitudes
// or-ed into V4 (only |-128| = -128 has its top bit set: the caller
// refuses an activation with it).
#define ABSSIGN16(soff, moff, goff) \
	Get R1; I32WrapI64; V128Load $(soff); Set V1; \
	Get V1; I8x16Abs; Set V3; \
	Get R0; I32WrapI64; Get V3; V128Store $0, $(moff); \
	Get R0; I32WrapI64; V128Const $0, $0; Get V1; I8x16GtS; V128Store $0, $(goff); \
	Get V4; Get V3; V128Or; Set V4

// ABSSIGN is the body of an activation's preparation: block (ABSSIGN16s)
// for each of the nb blocks at src (sstride bytes apart) into dst
// (dstride apart); ret reports that no activation was -128.
#define ABSSIGN(block, sstride, dstride, ret) \
	I64Load dst+0(FP); Set R0; \
	I64Load src+8(FP); Set R1; \
	I64Load nb+16(FP); Set R2; \
	V128Const $0, $0; Set V4; \
	Block; \
	Get R2; I64Eqz; BrIf $0; \
	Loop; \
		block; \
		ADD(R0, dstride); \
		ADD(R1, sstride); \
		COUNTDOWN(R2); \
	End; \
	End; \
	Get SP; Get V4; I8x16Bitmask; I32Eqz; I64ExtendI32U; I64Store8 ret

// Macros shared by the DotRows and DotRowsN kernels of Q5_0, Q5_1 and Q4_1:
// the SIMD128 ones (q5rows_wasm.s) and the relaxed-SIMD ones
// (q5rows_relaxed_wasm.s). Registers: R0 the weight block, R1 the decoded
// block (wd), R11 the prepared activation block (dy as float32 at +64, s at
// +68), R12 fp16ToFP32Table; V1, V6 decoding scratch.

// NIB, QHIDX0, QHIDX1, QHBITS and QH10 push the constants of the decoding
// (0x0f bytes; the swizzles that spread qh's bytes 0, 1 and 2, 3 over
// eight bytes each; each byte's bit; 0x10 bytes) and QHSWIZZLE is the
// swizzle: here v128.const and i8x16.swizzle, unless the including file
// defined them first (the relaxed kernels keep the constants in registers
// and take i8x16.relaxed_swizzle, exact for indices below 16).
#ifndef NIB
#define QHSWIZZLE I8x16Swizzle
#define NIB V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f
#define QHIDX0 V128Const $0x0000000000000000, $0x0101010101010101
#define QHIDX1 V128Const $0x0202020202020202, $0x0303030303030303
#define QHBITS V128Const $0x8040201008040201, $0x8040201008040201
#define QH10 V128Const $0x1010101010101010, $0x1010101010101010
#endif

// HIBITS pushes 0x10 in the bytes of the 16 weights whose 5th bit is set
// (qh splat in V1; idx QHIDX0 for weights 0..15, QHIDX1 for 16..31): qh's
// bytes spread over eight bytes each (i8x16.swizzle), each byte's own bit
// kept and compared with that bit, as ggml's bytes_from_bits_32.
#define HIBITS(idx) \
	Get V1; idx; QHSWIZZLE; QHBITS; V128And; QHBITS; I8x16Eq; QH10; V128And

// HINIB pushes the high nibbles of the bytes of v (i16x8.shr_u and a mask:
// i8x16.shr_u has no x86 instruction).
#define HINIB(v) Get v; I32Const $4; I16x8ShrU; NIB; V128And

// DEC5U(qh, qs) sets V5 and V7 to the unsigned 5-bit quants (0..31, one a
// byte) of weights 0..15 and 16..31 of the Q5_0 or Q5_1 block at R0 (its
// qh at byte qh, its nibbles at qs); DEC41 to the quants (0..15) of the
// Q4_1 block. DEC50 and DEC51 are the quants of Q5_0 (q-16, int8) and Q5_1.
#define DEC5U(qh, qs) \
	Get R0; I32WrapI64; V128Load $(qs); Set V6; \
	Get R0; I32WrapI64; I32Load $(qh); I32x4Splat; Set V1; \
	Get V6; NIB; V128And; HIBITS(QHIDX0); V128Or; Set V5; \
	HINIB(V6); HIBITS(QHIDX1); V128Or; Set V7
#define DEC50 \
	DEC5U(2, 6); \
	Get V5; I32Const $16; I8x16Splat; I8x16Sub; Set V5; \
	Get V7; I32Const $16; I8x16Splat; I8x16Sub; Set V7
#define DEC51 DEC5U(4, 8)
#define DEC41 \
	Get R0; I32WrapI64; V128Load $4; Set V6; \
	Get V6; NIB; V128And; Set V5; \
	HINIB(V6); Set V7

// TABAT pushes the float32 of the fp16 at r+off (R12 fp16ToFP32Table).
#define TABAT(r, off) Get R12; Get r; I32WrapI64; I64Load16U $(off); I64Const $2; I64Shl; I64Add; I32WrapI64; F32Load $0

// DYAT pushes the prepared activation block's dy.
#define DYAT Get R11; I32WrapI64; F32Load $64

// MINF sets F1 to fma32(m, s, F1), m pushed by m (a float32 of an fp16
// value), s the prepared block's (the float32 of an fp16 too): m·s, a
// product of two 11-bit significands within float32's range, is exact in
// float32, so the float32 sum of it is the fused multiply-add (one
// rounding), and the chain of dependent steps from block to block is one
// add. MIND takes m from the weight block at R0, MINW from the decoded
// block at R1 (+68); NOMIN (Q5_0) does nothing.
#define MINF(m) \
	m; Get R11; I32WrapI64; F32Load $68; F32Mul; \
	Get F1; F32Add; Set F1
#define MIND MINF(TABAT(R0, 2))
#define MINW MINF(Get R1; I32WrapI64; F32Load $68)
#define NOMIN

// DECM stores the float32 of the block's m at R1+68; NODECM does nothing.
#define DECM Get R1; I32WrapI64; TABAT(R0, 2); F32Store $68
#define NODECM

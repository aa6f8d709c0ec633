//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"

// The F16 DotRows and DotRowsN kernels' asm (f16rows_wasm.go). Each 16
// bytes of fp16 values are read as four int32 lanes, each holding an even
// element (bits 0..15) and the odd one after it (bits 16..31), and widened
// without unpacking: the odd ones are the lanes shifted right by 3
// (arithmetic: the sign stays in bit 31) and masked to the sign and bits
// 13..27, which then hold the fp16 exponent and mantissa, read as a
// float32 that is the value times 2^-112 exactly (a subnormal fp16 value
// becomes a subnormal float32); the even ones the same after a shift left
// by 16. Times 2^112 (exact) they are the values, except that an fp16
// infinity or NaN (exponent 31) becomes ±2^16·(1+m/1024): full widening
// (widenF16P) or-s the all-ones exponent into every result above 65504 in
// magnitude (the fp16 maximum), keeping the mantissa bits as fp16ToFP32
// does; the fused row kernel (f16RowP) only notes whether a weight has
// exponent 31 (its caller then takes the Dot).
//
// So the four even elements of 8 land in one vector and the four odd
// ones in another: the kernels keep the 32 running sums of dotF16Ref in
// that order, the permuted order (f16Perm), and the widened activations
// are laid out in it, so each sum adds the products of its own elements.
//
// register use: R0 the fp16 values, R1 the float32 values (activation),
// R2 32-element groups left, R3 the sums; V0 0x8fffe000 (sign, exponent
// and mantissa), V1 2^112, V2 0x7c00 (int16 lanes), V3 the exponent
// maximum, V4..V7 scratch, V8..V15 the sums.

// FEVEN and FODD push the even and odd elements of the 8 fp16 values in v
// as float32, times 2^112 (V1) from the masked bits.
#define FEVEN(v) Get v; I32Const $16; I32x4Shl; I32Const $3; I32x4ShrS; Get V0; V128And; Get V1; F32x4Mul
#define FODD(v) Get v; I32Const $3; I32x4ShrS; Get V0; V128And; Get V1; F32x4Mul

// FIXINF gives the pushed float32 values above 65504 in magnitude (from
// exponent 31) the all-ones exponent (V4 scratch).
#define FIXINF \
	Set V4; Get V4; F32x4Abs; V128Const $0x477fe000477fe000, $0x477fe000477fe000; F32x4Gt; \
	V128Const $0x7f8000007f800000, $0x7f8000007f800000; V128And; Get V4; V128Or

#define FCONSTS \
	V128Const $0x8fffe0008fffe000, $0x8fffe0008fffe000; Set V0; \
	V128Const $0x7780000077800000, $0x7780000077800000; Set V1

// func widenF16P(dst *float32, src *byte, n32 int)
// sets dst[0:32·n32] to the fp16 values at src widened, in the permuted
// order: of each 8 values, the four even ones, then the four odd ones.
TEXT ·widenF16P(SB), NOSPLIT, $0-24
	I64Load dst+0(FP); Set R1
	I64Load src+8(FP); Set R0
	I64Load n32+16(FP); Set R2
	FCONSTS
	Loop
		Get R0; I32WrapI64; V128Load $0; Set V5
		Get R1; I32WrapI64; FEVEN(V5); FIXINF; V128Store $0, $0
		Get R1; I32WrapI64; FODD(V5); FIXINF; V128Store $0, $16
		Get R0; I32WrapI64; V128Load $16; Set V5
		Get R1; I32WrapI64; FEVEN(V5); FIXINF; V128Store $0, $32
		Get R1; I32WrapI64; FODD(V5); FIXINF; V128Store $0, $48
		Get R0; I32WrapI64; V128Load $32; Set V5
		Get R1; I32WrapI64; FEVEN(V5); FIXINF; V128Store $0, $64
		Get R1; I32WrapI64; FODD(V5); FIXINF; V128Store $0, $80
		Get R0; I32WrapI64; V128Load $48; Set V5
		Get R1; I32WrapI64; FEVEN(V5); FIXINF; V128Store $0, $96
		Get R1; I32WrapI64; FODD(V5); FIXINF; V128Store $0, $112
		ADD(R0, 64)
		ADD(R1, 128)
		COUNTDOWN(R2)
	End
	RET

// LOADSUMS and STORESUMS move the 32 sums at R3 to V8..V15 and back.
#define LOADSUMS \
	Get R3; I32WrapI64; V128Load $0; Set V8; \
	Get R3; I32WrapI64; V128Load $16; Set V9; \
	Get R3; I32WrapI64; V128Load $32; Set V10; \
	Get R3; I32WrapI64; V128Load $48; Set V11; \
	Get R3; I32WrapI64; V128Load $64; Set V12; \
	Get R3; I32WrapI64; V128Load $80; Set V13; \
	Get R3; I32WrapI64; V128Load $96; Set V14; \
	Get R3; I32WrapI64; V128Load $112; Set V15
#define STORESUMS \
	Get R3; I32WrapI64; Get V8; V128Store $0, $0; \
	Get R3; I32WrapI64; Get V9; V128Store $0, $16; \
	Get R3; I32WrapI64; Get V10; V128Store $0, $32; \
	Get R3; I32WrapI64; Get V11; V128Store $0, $48; \
	Get R3; I32WrapI64; Get V12; V128Store $0, $64; \
	Get R3; I32WrapI64; Get V13; V128Store $0, $80; \
	Get R3; I32WrapI64; Get V14; V128Store $0, $96; \
	Get R3; I32WrapI64; Get V15; V128Store $0, $112

// MACF adds the float32 pushed times the 4 at R1+off to the sum s, and
// stores it to R3+off (the stores keep V8 from issuing all the loads of
// a group first).
#define MACF(s, off) \
	Get R1; I32WrapI64; V128Load $(off); F32x4Mul; Get s; F32x4Add; Set s; \
	Get R3; I32WrapI64; Get s; V128Store $0, $(off)

// func f16DotsP(x, y *float32, n32 int, acc *[32]float32)
// adds x[i]·y[i] for i < 32·n32 to the sums acc[i%32] (n32 ≥ 1).
TEXT ·f16DotsP(SB), NOSPLIT, $0-32
	I64Load x+0(FP); Set R0
	I64Load y+8(FP); Set R1
	I64Load n32+16(FP); Set R2
	I64Load acc+24(FP); Set R3
	LOADSUMS
	Loop
		Get R0; I32WrapI64; V128Load $0; MACF(V8, 0)
		Get R0; I32WrapI64; V128Load $16; MACF(V9, 16)
		Get R0; I32WrapI64; V128Load $32; MACF(V10, 32)
		Get R0; I32WrapI64; V128Load $48; MACF(V11, 48)
		Get R0; I32WrapI64; V128Load $64; MACF(V12, 64)
		Get R0; I32WrapI64; V128Load $80; MACF(V13, 80)
		Get R0; I32WrapI64; V128Load $96; MACF(V14, 96)
		Get R0; I32WrapI64; V128Load $112; MACF(V15, 112)
		ADD(R0, 128)
		ADD(R1, 128)
		COUNTDOWN(R2)
	End
	RET

// F16PAIR widens the 8 fp16 values at R0+off into the sums se (even) and
// so (odd), against the activations at R1+2·off (MACF), and notes their
// exponents in V3.
#define F16PAIR(off, se, so) \
	Get R0; I32WrapI64; V128Load $(off); Set V5; \
	Get V5; Get V2; V128And; Get V3; I16x8MaxU; Set V3; \
	FEVEN(V5); MACF(se, 2*(off)); \
	FODD(V5); MACF(so, 2*(off)+16)

// func f16RowP(x *byte, y *float32, n32 int, acc *[32]float32) bool
// adds the products of the 32·n32 fp16 weights at x, widened, and the
// activations at y (widenF16P's order) to the sums at acc (the permuted
// order; n32 ≥ 1); it reports false when a weight has exponent 31 (an
// infinity or NaN), and then acc is not the Dot's sums.
TEXT ·f16RowP(SB), NOSPLIT, $0-33
	I64Load x+0(FP); Set R0
	I64Load y+8(FP); Set R1
	I64Load n32+16(FP); Set R2
	I64Load acc+24(FP); Set R3
	FCONSTS
	V128Const $0x7c007c007c007c00, $0x7c007c007c007c00; Set V2
	V128Const $0, $0; Set V3
	LOADSUMS
	Loop
		F16PAIR(0, V8, V9)
		F16PAIR(16, V10, V11)
		F16PAIR(32, V12, V13)
		F16PAIR(48, V14, V15)
		ADD(R0, 64)
		ADD(R1, 128)
		COUNTDOWN(R2)
	End
	Get SP
	Get V3; Get V2; I16x8Eq; V128AnyTrue; I32Eqz
	I64ExtendI32U
	I64Store8 ret+32(FP)
	RET

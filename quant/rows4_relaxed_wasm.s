//go:build goexperiment.simd && relaxedsimd

#include "textflag.h"
#include "simd_wasm.h"
#include "relaxed_wasm.h"
#include "rows4_wasm.h"

// The relaxed-SIMD Q4_0 DotRows kernel (dotRowsQ4_0Relaxed in
// relaxed_wasm.go): q4_0Rows4 (rows4_wasm.s, whose register use it keeps)
// with each row's integer sums by the relaxed int8 dot of the Q8_0
// activation as it is (R11 its block, 34 bytes) with the nibbles (RDOT16,
// the i7 operand in 0..15), instead of the split activation. A lane of
// the two dots added is at most 2·2·128·15 in magnitude: it fits in int16.
// V12 holds 0x0f bytes (in q4_0Rows4Relaxed).

// PY pushes the 16 activation bytes at R11+off.
#define PY(off) Get R11; I32WrapI64; V128Load $(off)

// ROWQ4R sets dst to the int32 lanes of Σ q·y of the Q4_0 block at r (its
// quants 0..15; the offset of 8 is taken off with the activation's sum).
#define ROWQ4R(r, dst) \
	Get r; I32WrapI64; V128Load $2; Set V2; \
	PY(2); Get V2; Get V12; V128And; RDOT16; \
	PY(18); Get V2; I32Const $4; I16x8ShrU; Get V12; V128And; RDOT16; \
	I16x8Add; I32x4ExtaddPairwiseI16x8S; Set dst

// The relaxed-SIMD Q8_0 DotRows kernel (dotRowsQ8_0Relaxed): q8_0Rows4
// with the activation's sign moved onto the weights, so that the relaxed
// dot's second operand is the activation's magnitude, in 0..127. For each
// Q8_0 activation block absSignQ8_0 prepares 64 bytes at R11: |y| (32
// bytes), then m = 0xff where y < 0, else 0 (32 bytes). A row's weights
// x become x' = (x XOR m) - m = x·sign(y), so x'·|y| = x·y, exact unless
// x = -128 and y < 0 (x' wraps to -128): V12 keeps the minimum of the
// weight bytes, and the kernel reports when it reached -128 (its caller
// then takes the SIMD128 kernel). An activation byte of -128 (whose
// magnitude is not in 0..127) is left to the SIMD128 kernel too.

// PM pushes the 16 sign-mask bytes of the activation's bytes off..off+15.
#define PM(off) PY(32+off)

// SIGNED pushes the weights of vector v times the signs of the
// activation's bytes off..off+15.
#define SIGNED(v, off) Get v; PM(off); V128Xor; PM(off); I8x16Sub

// ROWQ8R sets dst to the int32 lanes of Σ x·y of the Q8_0 block at r: its
// signed weights against the magnitudes (each lane at most 4·128·127 in
// magnitude).
#define ROWQ8R(r, dst) \
	Get r; I32WrapI64; V128Load $2; Set V2; \
	Get r; I32WrapI64; V128Load $18; Set V3; \
	Get V12; Get V2; I8x16MinS; Get V3; I8x16MinS; Set V12; \
	SIGNED(V3, 16); PY(16); SIGNED(V2, 0); PY(0); V128Const $0, $0; RDOTADD; RDOTADD; \
	Set dst

// ABSQ8_0 prepares a Q8_0 block's 32 activations (absSignQ8_0).
#define ABSQ8_0 ABSSIGN16(2, 0, 32); ABSSIGN16(18, 16, 48)

// func q4_0Rows4Relaxed(x, yp *byte, yd *float32, ysum *int32, tab *float32, nb, rowBytes, groups int, out *float32)
// is q4_0Rows4 with yp the Q8_0 activation itself.
TEXT ·q4_0Rows4Relaxed(SB), NOSPLIT, $0-72
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f
	Set V12
	ROWS4(18, 34, ROWQ4R, BIAS8)
	RET

// func q8_0Rows4Relaxed(x, yp *byte, yd *float32, ysum *int32, tab *float32, nb, rowBytes, groups int, out *float32) bool
// is q8_0Rows4 with the activation prepared by absSignQ8_0 at yp; it
// reports false when a weight byte of the rows is -128, and then out is
// not the Dot's: the caller computes the rows again.
TEXT ·q8_0Rows4Relaxed(SB), NOSPLIT, $0-73
	V128Const $0, $0
	Set V12
	ROWS4(34, 64, ROWQ8R, NOBIAS)
	Get SP
	Get V12
	I32Const $-128
	I8x16Splat
	I8x16Eq
	V128AnyTrue
	I32Eqz
	I64ExtendI32U
	I64Store8 ret+72(FP)
	RET

// func absSignQ8_0(dst, src *byte, nb int) bool
// prepares the nb Q8_0 activation blocks at src for q8_0Rows4Relaxed, 64
// bytes each at dst: the magnitudes of the 32 int8 activations, then 0xff
// for each negative one and 0 for the others. It reports false when an
// activation is -128 (no magnitude in 0..127): dst is then not usable.
TEXT ·absSignQ8_0(SB), NOSPLIT, $0-25
	ABSSIGN(ABSQ8_0, 34, 64, ret+24(FP))
	RET

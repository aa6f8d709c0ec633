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
// V12 holds 0x0f bytes.

// PY pushes the 16 activation bytes at R11+off.
#define PY(off) Get R11; I32WrapI64; V128Load $(off)

// ROWQ4R sets dst to the int32 lanes of Σ q·y of the Q4_0 block at r (its
// quants 0..15; the offset of 8 is taken off with the activation's sum).
#define ROWQ4R(r, dst) \
	Get r; I32WrapI64; V128Load $2; Set V2; \
	PY(2); Get V2; Get V12; V128And; RDOT16; \
	PY(18); Get V2; I32Const $4; I16x8ShrU; Get V12; V128And; RDOT16; \
	I16x8Add; I32x4ExtaddPairwiseI16x8S; Set dst

// func q4_0Rows4Relaxed(x, yp *byte, yd *float32, ysum *int32, tab *float32, nb, rowBytes, groups int, out *float32)
// is q4_0Rows4 with yp the Q8_0 activation itself.
TEXT ·q4_0Rows4Relaxed(SB), NOSPLIT, $0-72
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f
	Set V12
	ROWS4(18, 34, ROWQ4R, BIAS8)
	RET

//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"
#include "kkq_wasm.h"

// The wasm SIMD128 DotRowsN kernel of Q3_K (q3_k_wasm.go; the reference is
// dotQ3_KRef): KROWSN with Q3_K's decoder (Q3BLOCKN; both in kkq_wasm.h,
// shared with the relaxed build's q3KRowsNRelaxed). A chunk t's
// weights (as q3KDotRows decodes them: the two low bits less 4 where the
// inverted high bit is set, signed bytes) times their scale (the 6-bit
// scale less 32, |q·s| ≤ 128) as int16 lanes, even then odd; the float
// part one fused multiply-add a lane and block with yd·d.
//
// decoder registers: R7, R8 the scales (plus 32, bytes), V6 0x03, V7 0x04
// bytes, V0, V1 the inverted hmask, V2, V3 32 qs bytes, V4 a scale, V5 16
// quants.

// func q3KRowsN(x *byte, nb, rows int, yp *byte, k int, yd, tab *float32, st *byte, out *float32)
TEXT ·q3KRowsN(SB), NOSPLIT, $0-72
	KROWSN(110, Q3BLOCKN, NOPRE, Q3FLOAT)
	RET

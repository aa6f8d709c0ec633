//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"
#include "kkq_wasm.h"

// The wasm SIMD128 DotRowsN kernel of Q2_K (q2_k_wasm.go; the reference is
// dotQ2_KRef): KROWSN with Q2_K's decoder (Q2BLOCKN, Q2MINS, Q2FLOAT; all
// in kkq_wasm.h, shared with the relaxed build's q2KRowsNRelaxed). A
// chunk t's quants (bits 2s, 2s+1 of the qs bytes, as q2KDotRows decodes
// them) times their scale (the low nibble of scale byte t, at most 3·15) as
// int16 lanes, even then odd; the float part per activation first the min
// lanes (lane m: i32x4.dot_i16x8_s of the mins and bsums of sub-blocks
// 2m, 2m+1) times -yd·dmin, then the lanes times yd·d, one fused
// multiply-add a lane each (KFMA2: both in one pass).
//
// decoder registers: R7, R8 the scale bytes 0..7, 8..15, V0 int16 0x00ff,
// V6 0x03 bytes, V2, V3 32 qs bytes, V4 a scale, V5 16 quants; then V6,
// V7 the mins 0..7, 8..15 as int16 lanes.

// func q2KRowsN(x *byte, nb, rows int, yp *byte, k int, yd, tab *float32, st *byte, out *float32)
TEXT ·q2KRowsN(SB), NOSPLIT, $0-72
	KROWSN(84, Q2BLOCKN, Q2MINS, Q2FLOAT)
	RET

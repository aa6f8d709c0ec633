//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"
#include "kkq_wasm.h"
#include "q5kn_wasm.h"

// The wasm SIMD128 DotRowsN kernel of Q5_K (q5_k_wasm.go; the reference
// is dotQ5_KRef, the one-activation kernel q5KDotRows in q5_k_wasm.s).
//
// q5KRowsN: rows of Q5_K blocks against k activations prepared by
// splitQ8_K (as prepareQ8_KX86 prepares them, one after the other). Each
// block's weights are decoded 64 at a time into eight int16 vectors
// (V8..V15), each quant times its sub-block's scale (i16x8.mul, at most
// 31·63), which are dotted with every activation (i32x4.dot_i16x8_s): the
// lanes of chunks 4g, 4g+2 (lanes 0..3) and 4g+1, 4g+3 (4..7) added to
// the activation's int32 lanes in st. Then, per activation, the block's
// float part as q5KDotRows's, the accumulators float64 values in st (each
// a float32's): the four f64x2 sums p+a rounded to float32 unless one is
// a midpoint (KMIDV in kkq_wasm.h: a tiny sum is exact, as q5KDotRows notes), then all
// four by FMAHALF; the min sums' chain as in q5KDotRows.
//
// st: the activations' int32 lanes (32 bytes each), at 512 their
// accumulators (64 bytes each), at 1536 their min sums (a float64 every 64
// bytes).
//
// register use: R0 weight block, R1 the prepared block j of activation
// 0, R2 blocks left, R3 activation 0's scale of block j, R4 activation
// i's, R5, R6 the strides of the prepared activations and their scales,
// R7, R8 the scales, R9 the mins (bytes), R10 activations left, R11
// activation i's prepared block, R12 its int32 lanes, R13 its
// accumulators, R14 fp16ToFP32Table, R15 rows left; F1 yd, F17..F19 the
// min sums' fused multiply-add; V0 int16 0x00ff, V6 0x0f, V7 0x10 bytes
// (while decoding), V8..V15 a group's weights, V4 a scale, V2, V3 qs, V5
// quants; the float part's in KFMAACT. (The macros are in q5kn_wasm.h,
// shared with the relaxed build's q5KRowsNRelaxed.)

// func q5KRowsN(x *byte, nb, rows int, yp *byte, k int, yd, tab *float32, st *byte, out *float32)
//
// sets out[k·r + i] to the dot of row r (nb ≥ 1 blocks at x + r·nb·176)
// with activation i < k (k ≥ 1) prepared at yp + 544·nb·i (its blocks'
// scales at yd + nb·i) for r < rows (rows ≥ 1).
TEXT ·q5KRowsN(SB), NOSPLIT, $0-72
	Q5KROWSN(KFMAACT, Q5NACC64, Q5NMIN64)
	RET

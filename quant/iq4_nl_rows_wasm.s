//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"
#include "iq4_wasm.h"

// The wasm SIMD128 IQ4_NL DotRows kernel (iq4_nl_rows_wasm.go), the
// activation split by splitQ8_0 (dotrows_wasm.s). Four rows a pass, block
// by block: each row's block decoded to its int8 levels (i8x16.swizzle of
// the nibbles in kvaluesIQ4NL), split into even and odd int16 lanes and
// dotted with the prepared activation (i32x4.dot_i16x8_s: a lane adds two
// products of at most 127·128), the four rows' int32 lanes reduced
// together to their four exact block sums (NLREDUCE4), and each row's
// term fma32(float32(Σ), float32(dx·dy), sum) computed in its lane as
// dotIQ4_NLRef does: the products and sums in float64 (the products
// exact), rounded to float32 unless a sum is a float32 midpoint or tiny,
// then all four by the exact emulation (simd_wasm.h's FMAHALF).
// (Every macro comes before the first TEXT: go vet reads the arguments a
// macro names as those of the function above it.)
//
// register use: R0, R4, R5, R6 the four rows' weight blocks (R15 =
// rowBytes apart), R11 the prepared activation block, R1 its float32
// scale, R2 blocks left, R12 groups of four rows left, R13 the fp16
// table, R14 the output; V0 the levels, V15 0x0f bytes, V4, V12, V13,
// V14 the prepared block, V1 the four rows' running sums, V5..V8 their
// int32 block lanes, then V5 the block sums,
// V6 dx·dy, V2, V3, V4, V7, V8, V12 float64 products, accumulators and
// sums; V9, V10, V11 NLREDUCE4's constants (NLCONSTS; FMAHALF's scratch
// in the exact path, which sets them again), V13, V14 scratch.

// func iq4NLRows4(x, yp *byte, yd, tab *float32, nb, rowBytes, groups int, out *float32)
// sets out[0:4·groups] to the dots of the rows at x (rowBytes apart, nb ≥
// 1 blocks each) with the activation split at yp (its blocks' scales as
// float32 at yd; tab fp16ToFP32Table), four rows a pass.
TEXT ·iq4NLRows4(SB), NOSPLIT, $0-64
	NLROWS4(NLROW, NLFMA4)
	RET

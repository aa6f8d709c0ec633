//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"
#include "kkq_wasm.h"

// The wasm SIMD128 DotRows kernel of Q5_K (q5_k_wasm.go; the reference is
// dotQ5_KRef): rows of Q5_K blocks against one activation prepared by
// splitQ8_K (its int8 values split into even and odd int16 lanes, then the
// activation's own 16 bsums, see prepareQ8_KX86).
//
// A block's 16 qs bytes at 48+32g (g < 4) hold the low nibbles of weights
// 64g+l and the high nibbles of weights 64g+32+l (l < 16; the next 16
// bytes l = 16..31), their fifth bits in bits 2g and 2g+1 of qh byte l.
// Each 16 of them t (weights 16t..16t+15) are decoded to bytes (V5), split
// into even and odd int16 lanes and dotted with the activation's
// (i32x4.dot_i16x8_s, added): int32 lane m holds weights 4m..4m+3, lanes
// 0..3 of ggml's x86 order for even t, 4..7 for odd t. Those lanes are
// multiplied by the sub-block's scale (i32x4.mul) and added up (V10, V11),
// all exact in int32: a lane of 16 weights is at most 4·31·128, times 63,
// and 8 such make a block's lane. The mins' sums, Σ m·(bsum 2s + bsum
// 2s+1), come from i32x4.dot_i16x8_s of the mins (each twice) and the 16
// bsums.
//
// The float part is the reference's, all in the kernel (the weights'
// fp16 scales by a lookup in fp16ToFP32Table): d·yd and -yd·dmin in
// float32, one fused multiply-add per lane and block (simd_wasm.h's FMA8),
// and one per block for the min sums, a float64 sum rounded to float32
// unless it is a float32 midpoint, then emulated exactly (FMAHALF); at the
// end of a row hsumX86 of the lanes, plus the min sums (kkq_wasm.h's
// Q5BLOCK and KROWSY, which the relaxed kernel shares).
//
// register use:
//	R0 weight block, R1 prepared activation block, R2 blocks left, R3 the
//	activation's scale of the block, R4..R10 SCALESMINS, R12 the output,
//	R14 fp16ToFP32Table, R15 rows left; F1 the activation's scale, F17 the
//	min sums, F18 their next sum, F19 its product;
//	V0 int16 0x00ff, V6 0x0f and V7 0x10 bytes, V1 the scales (bytes),
//	V2, V3 32 qs bytes (then FMA8's lanes), V8, V9 qh (then V8 d), V4 a
//	scale (int32 lanes), V5 16 quants (then the mins), V10, V11 the
//	block's lanes, V14, V15 the accumulators, V9..V13 FMA8's scratch

// Q5DOT(t, acc) adds the lanes of the unsigned quant bytes in V5 (weights
// 16t..) against the prepared activation at R1, times the scale in V4, to
// acc.
#define Q5DOT(t, acc) \
	Get V5; Get V0; V128And; Get R1; I32WrapI64; V128Load $(32*(t)); I32x4DotI16x8S; \
	Get V5; I32Const $8; I16x8ShrU; Get R1; I32WrapI64; V128Load $(32*(t)+16); I32x4DotI16x8S; \
	I32x4Add; Get V4; I32x4Mul; Get acc; I32x4Add; Set acc

// Q5G(g, shlo, shhi) adds the 64 weights of qs bytes 32g.. to V10, V11.
#define Q5G(g, shlo, shhi) \
	Get R0; I32WrapI64; V128Load $(48+32*(g)); Set V2; \
	Get R0; I32WrapI64; V128Load $(64+32*(g)); Set V3; \
	KSPLAT(2*(g)); \
	Q5LO(V2, V8, shlo); Set V5; Q5DOT(4*(g), V10); \
	Q5LO(V3, V9, shlo); Set V5; Q5DOT(4*(g)+1, V11); \
	KSPLAT(2*(g)+1); \
	Q5HI(V2, V8, shhi); Set V5; Q5DOT(4*(g)+2, V10); \
	Q5HI(V3, V9, shhi); Set V5; Q5DOT(4*(g)+3, V11)

// Q5GROUPS adds the block's four groups.
#define Q5GROUPS Q5G(0, SHL4, SHL3); Q5G(1, SHL2, SHL1); Q5G(2, NOSH, SHR1); Q5G(3, SHR2, SHR3)

// func q5KDotRows(x *byte, nb, rows int, yp *byte, yd, tab, out *float32)
//
// sets out[r] to the dot of row r (nb ≥ 1 blocks at x + r·nb·176) with the
// activation prepared at yp (its blocks' scales at yd) for r < rows.
TEXT ·q5KDotRows(SB), NOSPLIT, $0-56
	V128Const $0x00ff00ff00ff00ff, $0x00ff00ff00ff00ff; Set V0
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; Set V6
	V128Const $0x1010101010101010, $0x1010101010101010; Set V7
	KROWSY(176, 544, 4, Q5INIT, Q5BLOCK(Q5GROUPS, 512, FMA8, Q5MINFMA), Q5FIN)
	RET

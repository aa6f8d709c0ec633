//go:build goexperiment.simd && relaxedsimd

#include "textflag.h"
#include "simd_wasm.h"
#include "relaxed_wasm.h"
#include "quads_wasm.h"
#include "iq4_wasm.h"

// The relaxed-SIMD kernels of IQ4_XS and IQ4_NL (iq4_relaxed_wasm.go).
// Their levels (kvaluesIQ4NL, -127..113) and the int8 activations are
// both signed, and the relaxed int8 dot needs one operand in 0..127: the
// activation's signs are moved onto the levels (x' = (x XOR m) - m, m =
// 0xff where y < 0: no level is -128, so x' never wraps) and its
// magnitudes are the i7 operand (an activation of -128, which ggml's
// quantizers never write, sends the call to the SIMD128 kernel), so each
// int16 lane of the relaxed dot (RDOT16) holds two products x·y, at most
// 2·127·127 in magnitude. The levels are looked up by i8x16.relaxed_swizzle
// (RSWIZZLE: the nibbles are in 0..15). The fused multiply-adds of the
// references (fma32) are f32x4.relaxed_madd (RMADD), fused where the
// relaxed build runs (relaxed_wasm.h).
//
// IQ4_XS (Dot, DotRows): per 16 weights one relaxed dot, its int16 pairs
// widened and times the sub-block's scale-32 at once by i32x4.dot_i16x8_s,
// so int32 lane k holds the four products of bytes 4k..4k+3, ggml's x86
// lanes (dotIQ4_XSRef); the eight lanes of a block, exact, converted to
// float32 and added to eight accumulators by RMADD with d·dy. Dot takes
// the Q8_K activation as it is (signs and magnitudes per 16 bytes,
// YINLINE); DotRows prepares it once (absSignQ8_K, YPREP). DotRowsN is
// iq4XSRowsN (iq4_wasm.h) with RMADD for its float part.
//
// IQ4_NL (DotRows): iq4NLRows4 (iq4_wasm.h) with the relaxed dot against
// the activation prepared by absSignQ8_0 (rows4_relaxed_wasm.s) and RMADD
// for the float part. DotRowsN: ROWSN (quads_wasm.h) over prepQ8_0Quad's
// int16 pairs, the block's levels looked up by RSWIZZLE and the float part
// by RMADD.
//
// register use (IQ4_XS Dot, DotRows): R0 weight block, R1 Q8_K activation
// block, R11 its prepared block, R2 blocks left, R12 rows left, R13 the
// fp16 table, R14 the output; V0 0x0f bytes, V1 the levels, V2, V3 int32
// lanes 0..3, 4..7, V4 16 bytes of nibbles, V6 the scale (int16 lanes), V7
// 16 activations, V8 d·dy, V9 their signs, V10 their magnitudes or-ed
// (Dot), V12, V13 the scales (SCALES), V14, V15 accumulators 0..3, 4..7.

// SCALE16 pushes lane k of v (sub-block 4·(v is V13)+k's scale-32, int32
// lanes) in every int16 lane.
#define SCALE16(v, k) Get v; V128Const $(0x0100010001000100+0x0404040404040404*(k)), $(0x0100010001000100+0x0404040404040404*(k)); RSWIZZLE

// YPREP takes the pushed levels of activations off..off+15 of the block
// and pushes them times the activations' signs, then the magnitudes (the
// prepared block at R11: magnitudes at 0, signs at 256).
#define YPREP(off) \
	Get R11; I32WrapI64; V128Load $(256+(off)); Set V9; \
	Get V9; V128Xor; Get V9; I8x16Sub; \
	Get R11; I32WrapI64; V128Load $(off)

// YINLINE is YPREP from the Q8_K block at R1, or-ing the magnitudes into
// V10.
#define YINLINE(off) \
	Get R1; I32WrapI64; V128Load $(4+(off)); Set V7; \
	V128Const $0, $0; Get V7; I8x16GtS; Set V9; \
	Get V9; V128Xor; Get V9; I8x16Sub; \
	Get V7; I8x16Abs; Set V7; \
	Get V10; Get V7; V128Or; Set V10; \
	Get V7

// XSSUB(YS, j, v, k) adds sub-block j's lanes (scale: lane k of v) to V2
// (low nibbles, activations 32j..32j+15) and V3 (high ones).
#define XSSUB(YS, j, v, k) \
	Get R0; I32WrapI64; V128Load $(8+16*(j)); Set V4; \
	SCALE16(v, k); Set V6; \
	Get V1; Get V4; Get V0; V128And; RSWIZZLE; YS(32*(j)); RDOT16; \
	Get V6; I32x4DotI16x8S; Get V2; I32x4Add; Set V2; \
	Get V1; Get V4; I32Const $4; I16x8ShrU; Get V0; V128And; RSWIZZLE; YS(32*(j)+16); RDOT16; \
	Get V6; I32x4DotI16x8S; Get V3; I32x4Add; Set V3

// XSBLOCK adds the IQ4_XS block at R0's terms against the Q8_K block at R1
// (YS its activations) to the accumulators: fma32(dx·dy, lane, acc).
#define XSBLOCK(YS) \
	ZERO(V2); ZERO(V3); \
	SCALES; \
	XSSUB(YS, 0, V12, 0); XSSUB(YS, 1, V12, 1); XSSUB(YS, 2, V12, 2); XSSUB(YS, 3, V12, 3); \
	XSSUB(YS, 4, V13, 0); XSSUB(YS, 5, V13, 1); XSSUB(YS, 6, V13, 2); XSSUB(YS, 7, V13, 3); \
	TAB(R0); Get R1; I32WrapI64; F32Load $0; F32Mul; F32x4Splat; Set V8; \
	Get V2; F32x4ConvertI32x4S; Get V8; Get V14; RMADD; Set V14; \
	Get V3; F32x4ConvertI32x4S; Get V8; Get V15; RMADD; Set V15

// XSCONSTS sets V0, V1 and zeroes the accumulators.
#define XSCONSTS \
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; Set V0; \
	V128Const $0xf6eaddcfbfad9881, $0x7159453526190d01; Set V1; \
	ZERO(V14); ZERO(V15)

// HSUMX86 pushes hsumX86 of the accumulators V14, V15 (x86order.go).
#define HSUMX86 \
	Get V14; Get V15; F32x4Add; Set V14; \
	Get V14; Get V14; HIHALF; F32x4Add; Set V14; \
	Get V14; F32x4ExtractLane $0, $0; Get V14; F32x4ExtractLane $0, $1; F32Add

// ABSQ8K prepares a Q8_K block's 256 activations (absSignQ8_K).
#define ABSQ8K \
	ABSSIGN16(4, 0, 256); ABSSIGN16(20, 16, 272); ABSSIGN16(36, 32, 288); ABSSIGN16(52, 48, 304); \
	ABSSIGN16(68, 64, 320); ABSSIGN16(84, 80, 336); ABSSIGN16(100, 96, 352); ABSSIGN16(116, 112, 368); \
	ABSSIGN16(132, 128, 384); ABSSIGN16(148, 144, 400); ABSSIGN16(164, 160, 416); ABSSIGN16(180, 176, 432); \
	ABSSIGN16(196, 192, 448); ABSSIGN16(212, 208, 464); ABSSIGN16(228, 224, 480); ABSSIGN16(244, 240, 496)

// RFMA8D is iq4XSRowsNRelaxed's float part (IQ4XSROWSN): the lanes V2, V3
// times d·dy at R12 added to V14, V15 by RMADD.
#define RFMA8D \
	Get R12; I32WrapI64; F32Load $0; F32x4Splat; Set V8; \
	Get V2; F32x4ConvertI32x4S; Get V8; Get V14; RMADD; Set V14; \
	Get V3; F32x4ConvertI32x4S; Get V8; Get V15; RMADD; Set V15

// NLROWR is NLROW (iq4_wasm.h) against the activation prepared by
// absSignQ8_0 (V4, V12 the magnitudes of activations 0..15, 16..31; V13,
// V14 their signs): each of the two relaxed dots' int16 pairs widened
// (they cannot be added in int16).
#define NLROWR(r, dst) \
	Get r; I32WrapI64; V128Load $2; Set V2; \
	Get V0; Get V2; Get V15; V128And; RSWIZZLE; Get V13; V128Xor; Get V13; I8x16Sub; Get V4; RDOT16; I32x4ExtaddPairwiseI16x8S; \
	Get V0; Get V2; I32Const $4; I16x8ShrU; Get V15; V128And; RSWIZZLE; Get V14; V128Xor; Get V14; I8x16Sub; Get V12; RDOT16; I32x4ExtaddPairwiseI16x8S; \
	I32x4Add; Set dst; Get R14; I32WrapI64; Get dst; V128Store $0, $0

// NLRFMA4 sets V1 to fma32(float32(V5), V6, V1), lane by lane.
#define NLRFMA4 Get V5; F32x4ConvertI32x4S; Get V6; Get V1; RMADD; Set V1

// The IQ4_NL DotRowsN kernel: ROWSN over prepQ8_0Quad's blocks.
#define Q8QB 288
#define Q8DY 256
#define Q8SUM 272
#define Q8MASK V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; Set V15

// NLLEVELS16 sets V14 to the levels of the 16 nibbles of the block at R0
// pushed by nib (V15 0x0f bytes).
#define NLLEVELS16(nib) V128Const $0xf6eaddcfbfad9881, $0x7159453526190d01; Get R0; I32WrapI64; V128Load $2; nib; RSWIZZLE; Set V14
#define NIBLO Get V15; V128And
#define NIBHI I32Const $4; I16x8ShrU; Get V15; V128And

// INTNL adds the IQ4_NL block at R0's Σ level·y against the quads to
// V4..V7 (as quads_wasm.s's INTQ8 the Q8_0 block's).
#define INTNL(macs) \
	NLLEVELS16(NIBLO); \
	EVEN(V14); Set V9; LANES4(macs, 0); \
	ODD(V14); Set V9; LANES4(macs, 16); \
	NLLEVELS16(NIBHI); \
	EVEN(V14); Set V9; LANES4(macs, 128); \
	ODD(V14); Set V9; LANES4(macs, 144)

// FLTR adds fma32(float32(sums), dx·dy) of a quad (int32 sums in vi,
// prepared block at rq, dx splat in V8) to vf.
#define FLTR(vi, vf, rq) \
	Get vi; F32x4ConvertI32x4S; Get V8; Get rq; I32WrapI64; V128Load $Q8DY; F32x4Mul; Get vf; RMADD; Set vf

// func iq4XSDotRelaxed(x, y *byte, tab *float32, nb int, out *float32) bool
// sets *out to dotIQ4_XSRef of the nb ≥ 1 blocks at x and y (tab
// fp16ToFP32Table); it reports false when an activation is -128, and then
// *out is not the reference's.
TEXT ·iq4XSDotRelaxed(SB), NOSPLIT, $0-41
	I64Load x+0(FP); Set R0
	I64Load y+8(FP); Set R1
	I64Load tab+16(FP); Set R13
	I64Load nb+24(FP); Set R2
	XSCONSTS
	ZERO(V10)
	Loop
		XSBLOCK(YINLINE)
		ADD(R0, 136)
		ADD(R1, 292)
		COUNTDOWN(R2)
	End
	I64Load out+32(FP); I32WrapI64; HSUMX86; F32Store $0
	Get SP; Get V10; I8x16Bitmask; I32Eqz; I64ExtendI32U; I64Store8 ret+40(FP)
	RET

// func absSignQ8_K(dst, src *byte, nb int) bool
// prepares the nb Q8_K activation blocks at src for iq4XSRowsRelaxed, 512
// bytes each at dst: the magnitudes of the 256 int8 activations, then 0xff
// for each negative one and 0 for the others. It reports false when an
// activation is -128: dst is then not usable.
TEXT ·absSignQ8_K(SB), NOSPLIT, $0-25
	ABSSIGN(ABSQ8K, 292, 512, ret+24(FP))
	RET

// func iq4XSRowsRelaxed(x, y, yp *byte, tab *float32, nb, rows int, out *float32)
// sets out[r] to dotIQ4_XSRef of row r of the rows ≥ 0 consecutive rows
// at x (nb ≥ 1 blocks each) and the Q8_K activation at y, prepared by
// absSignQ8_K at yp; tab is fp16ToFP32Table.
TEXT ·iq4XSRowsRelaxed(SB), NOSPLIT, $0-56
	I64Load x+0(FP); Set R0
	I64Load tab+24(FP); Set R13
	I64Load rows+40(FP); Set R12
	I64Load out+48(FP); Set R14
	Block
	Get R12; I64Eqz; BrIf $0
	Loop
		I64Load y+8(FP); Set R1
		I64Load yp+16(FP); Set R11
		I64Load nb+32(FP); Set R2
		XSCONSTS
		Loop
			XSBLOCK(YPREP)
			ADD(R0, 136)
			ADD(R1, 292)
			ADD(R11, 512)
			COUNTDOWN(R2)
		End
		Get R14; I32WrapI64; HSUMX86; F32Store $0
		ADD(R14, 4)
		COUNTDOWN(R12)
	End
	End
	RET

// func iq4XSRowsNRelaxed(x *byte, nb int, yp *byte, k int, d *float32, acc *[MaxDotN][8]float32, lanes *[MaxDotN][8]int32)
// is iq4XSRowsN (iq4_xs_wasm.s) with the fused multiply-adds by RMADD.
TEXT ·iq4XSRowsNRelaxed(SB), NOSPLIT, $0-56
	IQ4XSROWSN(RFMA8D)
	RET

// func iq4NLRows4Relaxed(x, yp *byte, yd, tab *float32, nb, rowBytes, groups int, out *float32)
// is iq4NLRows4 (iq4_nl_rows_wasm.s) with the activation prepared by
// absSignQ8_0 at yp.
TEXT ·iq4NLRows4Relaxed(SB), NOSPLIT, $0-64
	NLROWS4(NLROWR, NLRFMA4)
	RET

// func iq4NLRowsNRelaxed(x, yq *byte, tab *float32, nb, rows, quads int, out *float32)
// sets out[16r+4q+l] to dotIQ4_NLRef of IQ4_NL row r (rows ≥ 1 rows of nb
// ≥ 1 blocks at x) with activation l of quad q < quads (1..4, prepared by
// prepQ8_0Quad at yq, nb quad blocks apart); tab is fp16ToFP32Table.
TEXT ·iq4NLRowsNRelaxed(SB), NOSPLIT, $0-56
	ROWSN(18, INTNL, FLTR, MACS1, MACS2, MACS3, MACS4)
	RET

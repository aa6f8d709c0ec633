//go:build goexperiment.simd && relaxedsimd

#include "textflag.h"
#include "simd_wasm.h"
#include "relaxed_wasm.h"
#include "quads_wasm.h"

// The integer and float parts of the relaxed-SIMD DotRowsN kernels of
// Q4_K and Q6_K (relaxedn_wasm.go). As the Q8_0 and Q4_0 kernels of
// quads_wasm.s, they put four activations (a quad) in the lanes of a
// vector, so that no sum is reduced across lanes: a prepared quad block
// (prepQ8_KQuad) holds, for every four consecutive int8 activations of a
// block, their bytes from each of the quad's four activations in its four
// int32 lanes (64 vectors), then each activation's int16 sums of 16
// (bsums) in pairs, 2t and 2t+1 in lane words (8 vectors), then the four
// scales (float32): 1168 bytes. The row kernels splat each four weights
// (0..15 or 0..63, in the i7 operand's range) over the lanes
// (i8x16.swizzle) and take i16x8.relaxed_dot_i8x16_i7x16_s with the
// prepared bytes: two products a lane of the activation's own int16 pair,
// added in int16 while the sum provably fits (Q4_K: eight dots of 2·15·128
// at most, a 32-weight sub-block; Q6_K: two of 2·63·128), then widened and
// multiplied by the sub-block's scale at once by i32x4.dot_i16x8_s, so the
// int32 lanes are each activation's exact block sums, as in
// q4_k_wasm.s and q6_k_wasm.s. Their float part is the reference's, four
// activations a vector, accumulated in block order into the output.

#define QB 1168
#define GOFF 1024
#define YDOFF 1152

// SPLAT16 pushes byte sh/8 of sreg in every int16 lane.
#define SPLAT16(sreg, sh) Get sreg; I64Const $(sh); I64ShrU; I64Const $0xff; I64And; I32WrapI64; I16x8Splat

// FP16AT pushes the float32 of the fp16 at byte off of the block at r
// (through fp16ToFP32Table, the kernel's tab argument).
#define FP16AT(r, off) I64Load tab+16(FP); Get r; I32WrapI64; I64Load16U $(off); I64Const $2; I64Shl; I64Add; I32WrapI64; F32Load $0

// QUADPTRS sets R11, R12, R3 to the quads 1..3 of the block R1 (R15 apart).
#define QUADPTRS Get R1; Get R15; I64Add; Set R11; Get R11; Get R15; I64Add; Set R12; Get R12; Get R15; I64Add; Set R3

// RFLTADD adds the pushed f32x4 to the quad's running sums at R14+o
// (acc + term, the reference's order).
#define RFLTADD(o) Set V14; Get R14; I32WrapI64; Get R14; I32WrapI64; V128Load $(o); Get V14; F32x4Add; V128Store $0, $(o)

// DISPATCH runs bn, the variant for n quads, where n is the quads
// argument (1..4).
#define DISPATCH(quadsarg, b1, b2, b3, b4) \
	I64Load quadsarg; I64Const $4; I64Eq; \
	If; b4; Else; \
	I64Load quadsarg; I64Const $3; I64Eq; \
	If; b3; Else; \
	I64Load quadsarg; I64Const $2; I64Eq; \
	If; b2; Else; b1; \
	End; End; End

// QB is the size of a prepared quad block, GOFF and YDOFF where its
// pairs of sums (bsums) and its scales are.

// ROWSLOOP runs block (for each weight block of bytes bytes of each row)
// with R0 the weight block, R1 its quad 0 block, R11, R12, R3 quads 1..3
// (R15 = QB·nb apart), R2 blocks left, R13 rows left, R14 the row's
// output (four float32 vectors, the quads' running sums, from zero), R4
// the scratch (scr).
#define ROWSLOOP(bytes, block) \
	I64Load x+0(FP); Set R0; \
	I64Load out+56(FP); Set R14; \
	I64Load rows+40(FP); Set R13; \
	I64Load nb+32(FP); I64Const $QB; I64Mul; Set R15; \
	MASKS; \
	Loop; \
		Get R14; I32WrapI64; V128Const $0, $0; V128Store $0, $0; \
		Get R14; I32WrapI64; V128Const $0, $0; V128Store $0, $16; \
		Get R14; I32WrapI64; V128Const $0, $0; V128Store $0, $32; \
		Get R14; I32WrapI64; V128Const $0, $0; V128Store $0, $48; \
		I64Load yq+8(FP); Set R1; \
		I64Load nb+32(FP); Set R2; \
		Loop; \
			QUADPTRS; \
			I64Load scr+24(FP); Set R4; \
			block; \
			ADD(R0, bytes); \
			ADD(R1, QB); \
			COUNTDOWN(R2); \
		End; \
		ADD(R14, 64); \
		COUNTDOWN(R13); \
	End

// RFLT4K adds float32(d·float32(is)) - float32(dmin·float32(ms)) of the
// quad (int32 Σ scale·q·y in vi, prepared at rq, output at R14+o) to its
// running sums: d, dmin are dx·yd, dmin_x·yd (dx, dmin_x splat in V8, V9).
#define RFLT4K(vi, rq, o) \
	SUMM(rq); \
	Get V8; Get rq; I32WrapI64; V128Load $YDOFF; F32x4Mul; Get vi; F32x4ConvertI32x4S; F32x4Mul; \
	Get V9; Get rq; I32WrapI64; V128Load $YDOFF; F32x4Mul; Get V14; F32x4ConvertI32x4S; F32x4Mul; \
	F32x4Sub; RFLTADD(o)
#define RFLT4KS1 RFLT4K(V4, R1, 0)
#define RFLT4KS2 RFLT4KS1; RFLT4K(V5, R11, 16)
#define RFLT4KS3 RFLT4KS2; RFLT4K(V6, R12, 32)
#define RFLT4KS4 RFLT4KS3; RFLT4K(V7, R3, 48)

// RFLT6K takes 32·Σ scale·bsum (the pairs of sums of 16 times the scale
// pairs at R4) off the quad's sums vi and adds (dx·yd)·float32(vi) to its
// running sums (dx splat in V8).
#define RFLT6K(vi, rq, o) \
	Get vi; \
	SUMMT(rq, 0); SUMMT(rq, 1); I32x4Add; SUMMT(rq, 2); I32x4Add; SUMMT(rq, 3); I32x4Add; \
	SUMMT(rq, 4); I32x4Add; SUMMT(rq, 5); I32x4Add; SUMMT(rq, 6); I32x4Add; SUMMT(rq, 7); I32x4Add; \
	I32Const $5; I32x4Shl; I32x4Sub; Set vi; \
	Get V8; Get rq; I32WrapI64; V128Load $YDOFF; F32x4Mul; Get vi; F32x4ConvertI32x4S; F32x4Mul; \
	RFLTADD(o)
#define RFLT6KS1 RFLT6K(V4, R1, 0)
#define RFLT6KS2 RFLT6KS1; RFLT6K(V5, R11, 16)
#define RFLT6KS3 RFLT6KS2; RFLT6K(V6, R12, 32)
#define RFLT6KS4 RFLT6KS3; RFLT6K(V7, R3, 48)

// Q4KSETUP unpacks the scales and mins of the Q4_K block at R0 (SCALESMINS)
// and stores its eight mins as int16 pairs at R4 (MSPLAT).
#define Q4KSETUP \
	SCALESMINS; \
	I64Load scr+24(FP); Set R4; \
	MSPLAT(R9, 0, 0); MSPLAT(R9, 8, 1); MSPLAT(R9, 16, 2); MSPLAT(R9, 24, 3); \
	MSPLAT(R10, 0, 4); MSPLAT(R10, 8, 5); MSPLAT(R10, 16, 6); MSPLAT(R10, 24, 7)

// SCPAIR stores the int16 scales 2t, 2t+1 (int32 lane m of V9) in every
// lane at R4+16t.
#define SCPAIR(mask, t) Get R4; I32WrapI64; Get V9; Get mask; I8x16Swizzle; V128Store $0, $(16*(t))

// Q6KSETUP stores the 16 int8 scales of the Q6_K block at R0 as int16
// pairs at R4 (SCPAIR).
#define Q6KSETUP \
	Get R0; I32WrapI64; V128Load $192; I16x8ExtendLowI8x16S; Set V9; \
	SCPAIR(V10, 0); SCPAIR(V11, 1); SCPAIR(V12, 2); SCPAIR(V13, 3); \
	Get R0; I32WrapI64; V128Load $192; I16x8ExtendHighI8x16S; Set V9; \
	SCPAIR(V10, 4); SCPAIR(V11, 5); SCPAIR(V12, 6); SCPAIR(V13, 7)

// MSPLAT stores min t (byte sh/8 of sreg) as an int16 pair in every lane
// at R4+16t.
#define MSPLAT(sreg, sh, t) \
	Get R4; I32WrapI64; \
	Get sreg; I64Const $(sh); I64ShrU; I64Const $0xff; I64And; I32WrapI64; I32Const $0x10001; I32Mul; I32x4Splat; \
	V128Store $0, $(16*(t))

// SUMM sets V14 to the quad's (prepared at rq) Σ min·bsum: the pairs of
// sums of 16 times their sub-block's min pair (R4).
#define SUMMT(rq, t) Get R4; I32WrapI64; V128Load $(16*(t)); Get rq; I32WrapI64; V128Load $(GOFF+16*(t)); I32x4DotI16x8S
#define SUMM(rq) \
	SUMMT(rq, 0); SUMMT(rq, 1); I32x4Add; SUMMT(rq, 2); I32x4Add; SUMMT(rq, 3); I32x4Add; \
	SUMMT(rq, 4); I32x4Add; SUMMT(rq, 5); I32x4Add; SUMMT(rq, 6); I32x4Add; SUMMT(rq, 7); I32x4Add; \
	Set V14


// Q6A, Q6B, Q6C and Q6D set V9 to 16 quants (0..63, the offset of 32 taken off later): the
// low nibbles or high nibbles (hi4) of the ql bytes at R0+lo, or-ed with
// the two bits of the qh bytes at R0+qh moved to bits 4, 5 (V14 0x0f
// bytes, V15 0x30 bytes).
#define Q6A(lo, qh) \
	Get R0; I32WrapI64; V128Load $(lo); Get V14; V128And; \
	Get R0; I32WrapI64; V128Load $(qh); I32Const $4; I16x8Shl; Get V15; V128And; V128Or; Set V9
#define Q6B(lo, qh) \
	Get R0; I32WrapI64; V128Load $(lo); Get V14; V128And; \
	Get R0; I32WrapI64; V128Load $(qh); I32Const $2; I16x8Shl; Get V15; V128And; V128Or; Set V9
#define Q6C(lo, qh) \
	Get R0; I32WrapI64; V128Load $(lo); I32Const $4; I8x16ShrU; \
	Get R0; I32WrapI64; V128Load $(qh); Get V15; V128And; V128Or; Set V9
#define Q6D(lo, qh) \
	Get R0; I32WrapI64; V128Load $(lo); I32Const $4; I8x16ShrU; \
	Get R0; I32WrapI64; V128Load $(qh); I32Const $2; I16x8ShrU; Get V15; V128And; V128Or; Set V9

// G stores the gathered words at byte off of the blocks at R0+d.
#define G(off, d) GATHER(off); Get R0; I32WrapI64; Get V1; V128Store $0, $(d)
#define G4(v) G(4+4*(v), 16*(v)); G(8+4*(v), 16*(v)+16); G(12+4*(v), 16*(v)+32); G(16+4*(v), 16*(v)+48)
#define G16(v) G4(v); G4(v+4); G4(v+8); G4(v+12)


// register use (q4KRowsNRelaxed, q6KRowsNRelaxed): R0 weight block, R1
// its quad 0 block, R11, R12, R3 quads 1..3 (R15 apart), R2 blocks left,
// R13 rows left, R14 the row's output (four float32 vectors, the quads'
// running sums), R4 the scratch of splat pairs (scr), R7..R10 Q4_K's
// scales and mins (SCALESMINS); V0..V3 the quads' int16 partial sums,
// V4..V7 their int32 block sums, V8 four splat weights (or a scale), V9
// decoded weights, V10..V13 the splat masks, V14, V15 masks.

// RMAC adds the relaxed dot of the prepared bytes at rq+off with the splat
// weights V8 to the int16 lanes of vp.
#define RMAC(vp, rq, off) Get rq; I32WrapI64; V128Load $(off); Get V8; RDOT16; Get vp; I16x8Add; Set vp
#define RMACS1(off) RMAC(V0, R1, off)
#define RMACS2(off) RMACS1(off); RMAC(V1, R11, off)
#define RMACS3(off) RMACS2(off); RMAC(V2, R12, off)
#define RMACS4(off) RMACS3(off); RMAC(V3, R3, off)

// RSCALE adds the int16 pairs of vp times the splat scale V8 to vi.
#define RSCALE(vp, vi) Get vp; Get V8; I32x4DotI16x8S; Get vi; I32x4Add; Set vi
#define RSCALES1 RSCALE(V0, V4)
#define RSCALES2 RSCALES1; RSCALE(V1, V5)
#define RSCALES3 RSCALES2; RSCALE(V2, V6)
#define RSCALES4 RSCALES3; RSCALE(V3, V7)

#define RZEROS1 ZERO(V0)
#define RZEROS2 RZEROS1; ZERO(V1)
#define RZEROS3 RZEROS2; ZERO(V2)
#define RZEROS4 RZEROS3; ZERO(V3)

// RLANE2 runs int32 lanes (mask1, mask2) of V9 against the prepared
// words at byte off, off+16.
#define RLANE2(macs, off, mask1, mask2) SPL(mask1); macs(off); SPL(mask2); macs(off+16)

// RLANES runs the four int32 lanes of V9 (four weights each) through
// macs against the prepared vectors v..v+3.
#define RLANES(macs, v) RLANE2(macs, 16*(v), V10, V11); RLANE2(macs, 16*(v)+32, V12, V13)

// ---- Q4_K ----

// NIBLO and NIBHI set V9 to the low or high nibbles of the 16 quant bytes
// at R0+qoff (V15 holds 0x0f bytes).
#define NIBLO(qoff) Get R0; I32WrapI64; V128Load $(qoff); Get V15; V128And; Set V9
#define NIBHI(qoff) Get R0; I32WrapI64; V128Load $(qoff); I32Const $4; I8x16ShrU; Set V9

// RSUB4K adds a 32-weight sub-block (the nibbles nib of quant bytes
// qoff..qoff+31, prepared vectors v..v+7, scale byte sh/8 of sreg) to the
// quads' sums (zeros, macs, scales: the variants for their number).
#define RSUB4K(zeros, macs, scales, nib, qoff, v, sreg, sh) \
	zeros; \
	nib(qoff); RLANES(macs, v); \
	nib(qoff+16); RLANES(macs, v+4); \
	SPLAT16(sreg, sh); Set V8; scales

// RBLOCK4K runs the Q4_K block at R0 against the quads.
#define RBLOCK4K(zeros, macs, scales, flts) \
	ZERO(V4); ZERO(V5); ZERO(V6); ZERO(V7); \
	RSUB4K(zeros, macs, scales, NIBLO, 16, 0, R7, 0); \
	RSUB4K(zeros, macs, scales, NIBHI, 16, 8, R7, 8); \
	RSUB4K(zeros, macs, scales, NIBLO, 48, 16, R7, 16); \
	RSUB4K(zeros, macs, scales, NIBHI, 48, 24, R7, 24); \
	RSUB4K(zeros, macs, scales, NIBLO, 80, 32, R8, 0); \
	RSUB4K(zeros, macs, scales, NIBHI, 80, 40, R8, 8); \
	RSUB4K(zeros, macs, scales, NIBLO, 112, 48, R8, 16); \
	RSUB4K(zeros, macs, scales, NIBHI, 112, 56, R8, 24); \
	FP16AT(R0, 0); F32x4Splat; Set V8; FP16AT(R0, 2); F32x4Splat; Set V9; \
	flts

#define Q4KBLOCKN \
	Q4KSETUP; \
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; Set V15; \
	DISPATCH(quads+48(FP), RBLOCK4K(RZEROS1, RMACS1, RSCALES1, RFLT4KS1), RBLOCK4K(RZEROS2, RMACS2, RSCALES2, RFLT4KS2), RBLOCK4K(RZEROS3, RMACS3, RSCALES3, RFLT4KS3), RBLOCK4K(RZEROS4, RMACS4, RSCALES4, RFLT4KS4))


// ---- Q6_K ----

// RSUB6K adds a 16-weight sub-block (the quants q(lo, qh), prepared
// vectors v..v+3, int8 scale at R0+sc) to the quads' sums: two dots a
// time in int16, at most 2·2·63·128 in magnitude a lane.
#define RSUB6K(zeros, macs, scales, q, lo, qh, v, sc) \
	q(lo, qh); \
	Get R0; I32WrapI64; I32Load8S $(sc); I16x8Splat; Set V14; \
	zeros; RLANE2(macs, 16*(v), V10, V11); Get V14; Set V8; scales; \
	zeros; RLANE2(macs, 16*(v)+32, V12, V13); Get V14; Set V8; scales; \
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; Set V14

// RQUARTER6K adds the four sub-blocks of a quarter (as q6_k_wasm.s: ql
// bytes lo and hi, qh bytes qh, activations from v, scales from sc).
#define RQUARTER6K(zeros, macs, scales, lo, hi, qh, v, sc) \
	RSUB6K(zeros, macs, scales, Q6A, lo, qh, v, sc); \
	RSUB6K(zeros, macs, scales, Q6B, hi, qh, v+8, sc+2); \
	RSUB6K(zeros, macs, scales, Q6C, lo, qh, v+16, sc+4); \
	RSUB6K(zeros, macs, scales, Q6D, hi, qh, v+24, sc+6)

// RBLOCK6K runs the Q6_K block at R0 against the quads.
#define RBLOCK6K(zeros, macs, scales, flts) \
	ZERO(V4); ZERO(V5); ZERO(V6); ZERO(V7); \
	RQUARTER6K(zeros, macs, scales, 0, 32, 128, 0, 192); \
	RQUARTER6K(zeros, macs, scales, 16, 48, 144, 4, 193); \
	RQUARTER6K(zeros, macs, scales, 64, 96, 160, 32, 200); \
	RQUARTER6K(zeros, macs, scales, 80, 112, 176, 36, 201); \
	FP16AT(R0, 208); F32x4Splat; Set V8; \
	flts

#define Q6KBLOCKN \
	Q6KSETUP; \
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; Set V14; \
	V128Const $0x3030303030303030, $0x3030303030303030; Set V15; \
	DISPATCH(quads+48(FP), RBLOCK6K(RZEROS1, RMACS1, RSCALES1, RFLT6KS1), RBLOCK6K(RZEROS2, RMACS2, RSCALES2, RFLT6KS2), RBLOCK6K(RZEROS3, RMACS3, RSCALES3, RFLT6KS3), RBLOCK6K(RZEROS4, RMACS4, RSCALES4, RFLT6KS4))

// ---- Q4_0 ----
// A prepared quad block of Q8_0 activations (prepQ8_0QuadRelaxed) is 160
// bytes: for m = 0..7, the activations' bytes 4m..4m+3 in each lane; their
// scales (float32) at 128, their sums at 144. The row kernel is the
// SIMD128 one's (ROWSN) with relaxed dots of each four nibbles (splat)
// against them, added in int16 (eight dots of at most 2·15·128 a lane)
// and then pairwise into the int32 lanes.

#define Q8QB 160
#define Q8DY 128
#define Q8SUM 144
#define Q8MASK V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; Set V15

// RG stores the gathered bytes 4m..4m+3 of the Q8_0 blocks at R0+16m and
// adds them in pairs to the int16 sums in V3.
#define RG(m) \
	GATHER(2+4*(m)); Get R0; I32WrapI64; Get V1; V128Store $0, $(16*(m)); \
	Get V3; Get V1; I16x8ExtaddPairwiseI8x16S; I16x8Add; Set V3

// RQMAC adds the relaxed dot of the prepared bytes at rq+off with the
// splat nibbles V8 to the int16 lanes of vi.
#define RQMAC(vi, rq, off) Get rq; I32WrapI64; V128Load $(off); Get V8; RDOT16; Get vi; I16x8Add; Set vi
#define RQMACS1(off) RQMAC(V4, R1, off)
#define RQMACS2(off) RQMACS1(off); RQMAC(V5, R7, off)
#define RQMACS3(off) RQMACS2(off); RQMAC(V6, R8, off)
#define RQMACS4(off) RQMACS3(off); RQMAC(V7, R9, off)

// RLANES4 runs the four int32 lanes of V9 (four nibbles each) against the
// prepared words at off, off+16, off+32, off+48.
#define RLANES4(macs, off) SPL(V10); macs(off); SPL(V11); macs(off+16); SPL(V12); macs(off+32); SPL(V13); macs(off+48)

// RINTQ4 adds the Q4_0 block at R0's Σ q·y (quants 0..15) against the
// quads to V4..V7 (int32).
#define RINTQ4(macs) \
	Get R0; I32WrapI64; V128Load $2; Get V15; V128And; Set V9; RLANES4(macs, 0); \
	Get R0; I32WrapI64; V128Load $2; I32Const $4; I8x16ShrU; Set V9; RLANES4(macs, 64); \
	Get V4; I32x4ExtaddPairwiseI16x8S; Set V4; Get V5; I32x4ExtaddPairwiseI16x8S; Set V5; \
	Get V6; I32x4ExtaddPairwiseI16x8S; Set V6; Get V7; I32x4ExtaddPairwiseI16x8S; Set V7

// func prepQ8_KQuad(dst *byte, ys *[4]*byte, nb int)
// prepares the nb blocks of the four Q8_K activations at ys[0..3] into nb
// quad blocks of 1168 bytes at dst.
TEXT ·prepQ8_KQuad(SB), NOSPLIT, $0-24
	I64Load dst+0(FP); Set R0
	I64Load ys+8(FP); Set R1
	Get R1; I32WrapI64; I64Load $0; Set R4
	Get R1; I32WrapI64; I64Load $8; Set R5
	Get R1; I32WrapI64; I64Load $16; Set R6
	Get R1; I32WrapI64; I64Load $24; Set R7
	I64Load nb+16(FP); Set R2
	Block
	Get R2
	I64Eqz
	BrIf $0
	Loop
		G16(0); G16(16); G16(32); G16(48)
		G(260, 1024); G(264, 1040); G(268, 1056); G(272, 1072)
		G(276, 1088); G(280, 1104); G(284, 1120); G(288, 1136)
		Get R0; I32WrapI64
		Get R4; I32WrapI64; F32Load $0; F32x4Splat
		Get R5; I32WrapI64; F32Load $0; F32x4ReplaceLane $0, $1
		Get R6; I32WrapI64; F32Load $0; F32x4ReplaceLane $0, $2
		Get R7; I32WrapI64; F32Load $0; F32x4ReplaceLane $0, $3
		V128Store $0, $1152
		ADD(R0, 1168)
		ADD(R4, 292); ADD(R5, 292); ADD(R6, 292); ADD(R7, 292)
		COUNTDOWN(R2)
	End
	End
	RET

// func q4KRowsNRelaxed(x, yq *byte, tab *float32, scr *byte, nb, rows, quads int, out *float32)
// sets out[16r+4q+l] to the dot of Q4_K row r (rows ≥ 1 rows of nb ≥ 1
// blocks at x) with activation l of quad q < quads (1..4, prepared by
// prepQ8_KQuad at yq, nb quad blocks apart), as dotQ4_KRef computes it;
// tab is fp16ToFP32Table, scr 128 bytes of scratch.
TEXT ·q4KRowsNRelaxed(SB), NOSPLIT, $0-64
	ROWSLOOP(144, Q4KBLOCKN)
	RET

// func q6KRowsNRelaxed(x, yq *byte, tab *float32, scr *byte, nb, rows, quads int, out *float32)
// is q4KRowsNRelaxed for Q6_K rows (dotQ6_KRef).
TEXT ·q6KRowsNRelaxed(SB), NOSPLIT, $0-64
	ROWSLOOP(210, Q6KBLOCKN)
	RET


// func prepQ8_0QuadRelaxed(dst *byte, ys *[4]*byte, tab *float32, nb int)
// prepares the nb blocks of the four Q8_0 activations at ys[0..3] into
// nb quad blocks of 160 bytes at dst; tab is fp16ToFP32Table.
TEXT ·prepQ8_0QuadRelaxed(SB), NOSPLIT, $0-32
	I64Load dst+0(FP); Set R0
	I64Load ys+8(FP); Set R1
	Get R1; I32WrapI64; I64Load $0; Set R4
	Get R1; I32WrapI64; I64Load $8; Set R5
	Get R1; I32WrapI64; I64Load $16; Set R6
	Get R1; I32WrapI64; I64Load $24; Set R7
	I64Load tab+16(FP); Set R13
	I64Load nb+24(FP); Set R2
	Block
	Get R2
	I64Eqz
	BrIf $0
	Loop
		ZERO(V3)
		RG(0); RG(1); RG(2); RG(3); RG(4); RG(5); RG(6); RG(7)
		// each int16 lane of V3 adds 16 int8: no overflow
		Get R0; I32WrapI64
		TAB(R4); F32x4Splat; TAB(R5); F32x4ReplaceLane $0, $1; TAB(R6); F32x4ReplaceLane $0, $2; TAB(R7); F32x4ReplaceLane $0, $3
		V128Store $0, $Q8DY
		Get R0; I32WrapI64; Get V3; I32x4ExtaddPairwiseI16x8S; V128Store $0, $Q8SUM
		ADD(R0, Q8QB)
		ADD(R4, 34); ADD(R5, 34); ADD(R6, 34); ADD(R7, 34)
		COUNTDOWN(R2)
	End
	End
	RET

// func q4_0RowsNRelaxed(x, yq *byte, tab *float32, nb, rows, quads int, out *float32)
// is q4_0RowsN (quads_wasm.s) with the relaxed dot, the activations
// prepared by prepQ8_0QuadRelaxed.
TEXT ·q4_0RowsNRelaxed(SB), NOSPLIT, $0-56
	ROWSN(18, RINTQ4, FLT4, RQMACS1, RQMACS2, RQMACS3, RQMACS4)
	RET

// Macros of the wasm SIMD128 K-quant kernels of q5_k_wasm.s (besides
// simd_wasm.h's).

// The shifts of the int16 lanes the decoders move bits with (NOSH: none).
#define SHL4 I32Const $4; I16x8Shl
#define SHL3 I32Const $3; I16x8Shl
#define SHL2 I32Const $2; I16x8Shl
#define SHL1 I32Const $1; I16x8Shl
#define SHR1 I32Const $1; I16x8ShrU
#define SHR2 I32Const $2; I16x8ShrU
#define SHR3 I32Const $3; I16x8ShrU
#define SHR4 I32Const $4; I16x8ShrU
#define SHR5 I32Const $5; I16x8ShrU
#define SHR6 I32Const $6; I16x8ShrU
#define NOSH

// SCALES3(tmp) sets R7 and R8 to the 16 Q3_K scales of the block at R0
// (plus 32), a byte each, as q3KScalesVec computes them (R4, tmp
// scratch).
#define SCALES3(tmp) \
	Get R0; I32WrapI64; I64Load $96; Set R4; \
	Get R0; I32WrapI64; I64Load32U $104; Set tmp; \
	Get R4; I64Const $0x0f0f0f0f0f0f0f0f; I64And; \
	Get tmp; Get tmp; I64Const $2; I64ShrU; I64Const $32; I64Shl; I64Or; \
	I64Const $0x0303030303030303; I64And; I64Const $4; I64Shl; \
	I64Or; Set R7; \
	Get R4; I64Const $4; I64ShrU; I64Const $0x0f0f0f0f0f0f0f0f; I64And; \
	Get tmp; I64Const $4; I64ShrU; Get tmp; I64Const $6; I64ShrU; I64Const $32; I64Shl; I64Or; \
	I64Const $0x0303030303030303; I64And; I64Const $4; I64Shl; \
	I64Or; Set R8

// S16(sv, i) pushes int16 lane i of sv in every int16 lane.
#define S16(sv, i) \
	Get sv; V128Const $((((2*(i)+1)<<8)|(2*(i)))*0x0001000100010001), $((((2*(i)+1)<<8)|(2*(i)))*0x0001000100010001); I8x16Swizzle

// KTAB(r, off) pushes the float32 value of the fp16 at r+off, looked up
// in the table at R14 (fp16ToFP32Table).
#define KTAB(r, off) \
	Get r; I32WrapI64; I32Load16U $(off); I32Const $2; I32Shl; Get R14; I32WrapI64; I32Add; F32Load $0

// KSPLAT(k) sets V4 to byte k of V1 in every int32 lane (i8x16.swizzle:
// an index of 0x80 gives zero).
#define KSPLAT(k) \
	Get V1; V128Const $(0x8080800080808000|(k)|((k)<<32)), $(0x8080800080808000|(k)|((k)<<32)); I8x16Swizzle; Set V4

// KROWS(size, body) runs body (one block at R0, its prepared activation
// at R1, the activation's scale at R3) over the rows of a DotRows kernel
// taking (x *byte, nb, rows int, yp *byte, yd, tab, out *float32): each
// row's accumulators V14, V15 zeroed, its nb blocks of size bytes, then
// hsumX86 of its accumulators stored at out. R2 counts the blocks, R12
// walks out, R14 holds tab, R15 counts the rows.
#define KROWS(size, body) KROWSY(size, 544, 4, KNONE, body, KNONE)
#define KNONE

// KROWSY(size, ystride, ydstride, init, body, fin) is KROWS with the
// activation's blocks ystride bytes apart and their scales (from the yd
// argument) ydstride bytes apart, init run at the start of each row and
// fin at its end, which adds to the pushed float32 result (the relaxed
// kernels take the Q8_K activation as it is: yp and yd both its first
// block, both strides 292).
#define KROWSY(size, ystride, ydstride, init, body, fin) \
	I64Load x+0(FP); Set R0; \
	I64Load tab+40(FP); Set R14; \
	I64Load out+48(FP); Set R12; \
	I64Load rows+16(FP); Set R15; \
	Block; \
	Get R15; I64Eqz; BrIf $0; \
	Loop; \
		I64Load yp+24(FP); Set R1; \
		I64Load yd+32(FP); Set R3; \
		I64Load nb+8(FP); Set R2; \
		V128Const $0, $0; Set V14; \
		V128Const $0, $0; Set V15; \
		init; \
		Loop; \
			body; \
			ADD(R0, size); \
			ADD(R1, ystride); \
			ADD(R3, ydstride); \
			COUNTDOWN(R2); \
		End; \
		Get R12; I32WrapI64; KHSUM8; fin; F32Store $0; \
		ADD(R12, 4); \
		COUNTDOWN(R15); \
	End; \
	End

// KHSUM8 pushes hsumX86 of the accumulators V14, V15 (V4 scratch).
#define KHSUM8 \
	Get V14; Get V15; F32x4Add; Set V4; \
	Get V4; F32x4ExtractLane $0, $0; Get V4; F32x4ExtractLane $0, $2; F32Add; \
	Get V4; F32x4ExtractLane $0, $1; Get V4; F32x4ExtractLane $0, $3; F32Add; \
	F32Add

// KD(off) sets V8 to the f64x2 splat of yd·d, d the fp16 at R0+off and yd
// the float32 at R3 (the block's fused multiply-add's factor).
#define KD(off) \
	Get R3; I32WrapI64; F32Load $0; KTAB(R0, off); F32Mul; F64PromoteF32; F64x2Splat; Set V8

// The DotRowsN kernels' skeleton (KROWSN; q5KRowsN has its own): rows of
// K-quant blocks against k activations prepared by splitQ8_K, one after
// the other. Each block's weights are decoded 64 at a time (a group: the
// chunks of 16 weights 4g..4g+3) into eight int16 vectors, V8, V9 (chunk
// 4g's even and odd weights), V10, V11 (4g+1), V12, V13 (4g+2), V14, V15
// (4g+3), each times its scale, and dotted with every activation
// (i32x4.dot_i16x8_s): even chunks give ggml's x86 lanes 0..3, odd ones
// 4..7, added to the activation's int32 lanes in st. Then, per activation,
// the block's fused multiply-adds (KFMAL), the accumulators float64 values
// in st (each a float32's), each f64x2 sum p+a rounded to float32 unless
// one of the four is a float32 midpoint (its 29 low bits 1<<28; a tiny
// sum is exact, as every term is a multiple of 2^-149), then all four by
// FMAHALF.
//
// st: per activation i, at 64i its int32 lanes (32 bytes, then 32 more
// for the kernel's use), at 1024+64i its accumulators.
//
// The kernels take (x *byte, nb, rows int, yp *byte, k int, yd, tab
// *float32, st *byte, out *float32) and set out[k·r + i] to the dot of
// row r (nb ≥ 1 blocks at x + r·nb·size) with activation i < k (k ≥ 1)
// prepared at yp + 544·nb·i (its blocks' scales at yd + nb·i) for r < rows
// (rows ≥ 1).
//
// register use: R0 weight block, R1 the prepared block j of activation
// 0, R2 blocks left, R3 activation 0's scale of block j, R4 activation
// i's, R5, R6 the strides of the prepared activations and their scales,
// R7..R9 the kernel's, R10 activations left, R11 activation i's prepared
// block, R12 its int32 lanes, R13 its accumulators, R14 fp16ToFP32Table,
// R15 rows left; F1 yd; V8..V15 a group's weights, V0..V7 the decoder's;
// in the float part V1..V5, V8..V15 KFMAL's.

// KPA(t, odd) pushes the prepared activation's even (odd 0) or odd (16)
// int16 lanes of chunk t at R11.
#define KPA(t, odd) Get R11; I32WrapI64; V128Load $(32*(t)+(odd))

// KACTS(g, OP, stride) adds (OP KADDLANES) or stores (KSTORELANES) group
// g's lanes against each activation to (as) its int32 lanes at R12, the
// activations' lanes stride bytes apart.
#define KACTS(g, OP, stride) \
	Get R1; Set R11; \
	I64Load st+56(FP); Set R12; \
	I64Load k+32(FP); Set R10; \
	Loop; \
		Get R12; I32WrapI64; \
		Get V8; KPA(4*(g), 0); I32x4DotI16x8S; Get V9; KPA(4*(g), 16); I32x4DotI16x8S; I32x4Add; \
		Get V12; KPA(4*(g)+2, 0); I32x4DotI16x8S; I32x4Add; Get V13; KPA(4*(g)+2, 16); I32x4DotI16x8S; I32x4Add; \
		OP(0); \
		Get R12; I32WrapI64; \
		Get V10; KPA(4*(g)+1, 0); I32x4DotI16x8S; Get V11; KPA(4*(g)+1, 16); I32x4DotI16x8S; I32x4Add; \
		Get V14; KPA(4*(g)+3, 0); I32x4DotI16x8S; I32x4Add; Get V15; KPA(4*(g)+3, 16); I32x4DotI16x8S; I32x4Add; \
		OP(16); \
		Get R11; Get R5; I64Add; Set R11; \
		ADD(R12, stride); \
		COUNTDOWN(R10); \
	End
#define KSTORELANES(off) V128Store $0, $(off)
#define KADDLANES(off) Get R12; I32WrapI64; V128Load $(off); I32x4Add; V128Store $0, $(off)

// KMIDV(s) or-s into V13 the f64x2 lanes of s that are float32 rounding
// midpoints.
#define KMIDV(s) \
	Get s; V128Const $0x1fffffff, $0x1fffffff; V128And; V128Const $0x10000000, $0x10000000; I64x2Eq; \
	Get V13; V128Or; Set V13

// KPL(loff, half, p) sets p to the f64x2 products d·lanes of the int32
// lanes at R12+loff (half: HIHALF for lanes 2, 3, or KNOHALF), d in V8.
#define KPL(loff, half, p) Get R12; I32WrapI64; V128Load $(loff); half; F64x2ConvertLowI32x4S; Get V8; F64x2Mul; Set p
#define KNOHALF

// KRND(s, off) stores the f64x2 sums s rounded to float32 as the
// accumulators at R13+off.
#define KRND(s, off) \
	Get R13; I32WrapI64; Get s; F32x4DemoteF64x2Zero; F64x2PromoteLowF32x4; V128Store $0, $(off)

// KEXA(loff, half, off) sets the accumulators at R13+off to fma32 of d,
// the lanes and themselves (FMAHALF).
#define KEXA(loff, half, off) \
	KPL(loff, half, V9); \
	Get R13; I32WrapI64; V128Load $(off); Set V10; \
	Get R13; I32WrapI64; FMAHALF; F64x2PromoteLowF32x4; V128Store $0, $(off)

// KFMAL(dpush, loff) adds d times the int32 lanes at R12+loff to the
// activation's accumulators at R13, one fused multiply-add a lane, d the
// float32 pushed by dpush.
#define KFMAL(dpush, loff) \
	dpush; F64PromoteF32; F64x2Splat; Set V8; \
	V128Const $0, $0; Set V13; \
	KPL(loff, KNOHALF, V1); Get V1; Get R13; I32WrapI64; V128Load $0; F64x2Add; Set V2; KMIDV(V2); \
	KPL(loff, HIHALF, V3); Get V3; Get R13; I32WrapI64; V128Load $16; F64x2Add; Set V4; KMIDV(V4); \
	KPL(loff+16, KNOHALF, V5); Get V5; Get R13; I32WrapI64; V128Load $32; F64x2Add; Set V14; KMIDV(V14); \
	KPL(loff+16, HIHALF, V15); Get V15; Get R13; I32WrapI64; V128Load $48; F64x2Add; Set V12; KMIDV(V12); \
	Get V13; V128AnyTrue; \
	If; \
		KEXA(loff, KNOHALF, 0); \
		KEXA(loff, HIHALF, 16); \
		KEXA(loff+16, KNOHALF, 32); \
		KEXA(loff+16, HIHALF, 48); \
	Else; \
		KRND(V2, 0); KRND(V4, 16); KRND(V14, 32); KRND(V12, 48); \
	End

// KROWSN(size, block, prefloat, float) runs the rows: per block, block
// (the decoder: the groups and their KACTS), prefloat, then float per
// activation (R4 its scale, R11 its prepared block, R12 its lanes, R13
// its accumulators); at the end of a row hsumX86 of each activation's
// accumulators to out.
#define KROWSN(size, block, prefloat, float) KROWSNA(size, block, prefloat, float, KACC64)

// KROWSNA(size, block, prefloat, float, accload) is KROWSN with accload
// setting V14, V15 to an activation's accumulators at R13 as float32 at
// the end of a row (KACC64: float64 values, KFMAL's; KACC32: float32
// ones, the relaxed build's).
#define KROWSNA(size, block, prefloat, float, accload) \
	I64Load x+0(FP); Set R0; \
	I64Load tab+48(FP); Set R14; \
	I64Load rows+16(FP); Set R15; \
	Loop; \
		I64Load st+56(FP); Set R13; \
		I64Load k+32(FP); Set R10; \
		Loop; \
			Get R13; I32WrapI64; V128Const $0, $0; V128Store $0, $1024; \
			Get R13; I32WrapI64; V128Const $0, $0; V128Store $0, $1040; \
			Get R13; I32WrapI64; V128Const $0, $0; V128Store $0, $1056; \
			Get R13; I32WrapI64; V128Const $0, $0; V128Store $0, $1072; \
			ADD(R13, 64); \
			COUNTDOWN(R10); \
		End; \
		I64Load yp+24(FP); Set R1; \
		I64Load yd+40(FP); Set R3; \
		I64Load nb+8(FP); Set R2; \
		Loop; \
			I64Load nb+8(FP); I64Const $544; I64Mul; Set R5; \
			I64Load nb+8(FP); I64Const $4; I64Mul; Set R6; \
			block; \
			prefloat; \
			Get R1; Set R11; \
			Get R3; Set R4; \
			I64Load st+56(FP); Set R12; \
			I64Load st+56(FP); I64Const $1024; I64Add; Set R13; \
			I64Load k+32(FP); Set R10; \
			Loop; \
				float; \
				Get R11; Get R5; I64Add; Set R11; \
				Get R4; Get R6; I64Add; Set R4; \
				ADD(R12, 64); \
				ADD(R13, 64); \
				COUNTDOWN(R10); \
			End; \
			ADD(R0, size); \
			ADD(R1, 544); \
			ADD(R3, 4); \
			COUNTDOWN(R2); \
		End; \
		I64Load st+56(FP); I64Const $1024; I64Add; Set R13; \
		I64Load out+64(FP); I64Load rows+16(FP); Get R15; I64Sub; I64Load k+32(FP); I64Mul; I64Const $2; I64Shl; I64Add; Set R12; \
		I64Load k+32(FP); Set R10; \
		Loop; \
			accload; \
			Get R12; I32WrapI64; KHSUM8; F32Store $0; \
			ADD(R12, 4); \
			ADD(R13, 64); \
			COUNTDOWN(R10); \
		End; \
		COUNTDOWN(R15); \
	End

#define KACC64 \
	Get R13; I32WrapI64; V128Load $0; F32x4DemoteF64x2Zero; \
	Get R13; I32WrapI64; V128Load $16; F32x4DemoteF64x2Zero; TOHIGH; V128Or; Set V14; \
	Get R13; I32WrapI64; V128Load $32; F32x4DemoteF64x2Zero; \
	Get R13; I32WrapI64; V128Load $48; F32x4DemoteF64x2Zero; TOHIGH; V128Or; Set V15
#define KACC32 Get R13; I32WrapI64; V128Load $0; Set V14; Get R13; I32WrapI64; V128Load $16; Set V15

// KYD pushes activation i's scale of the block (at R4).
#define KYD Get R4; I32WrapI64; F32Load $0

// KFMA2(dpush1, loff1, dpush2, loff2) is KFMAL(dpush1, loff1) then
// KFMAL(dpush2, loff2) in one pass: each f64x2 pair's first sum rounded
// to float32, its second sum from that, both tested; if a test fails, both
// fused multiply-adds of all four pairs by FMAHALF from the accumulators
// in memory (not yet written). V0 holds the second d.
#define KFMA2(dpush1, loff1, dpush2, loff2) \
	dpush1; F64PromoteF32; F64x2Splat; Set V8; \
	dpush2; F64PromoteF32; F64x2Splat; Set V0; \
	V128Const $0, $0; Set V13; \
	KPAIR2(loff1, loff2, KNOHALF, 0, V2); \
	KPAIR2(loff1, loff2, HIHALF, 16, V4); \
	KPAIR2(loff1+16, loff2+16, KNOHALF, 32, V14); \
	KPAIR2(loff1+16, loff2+16, HIHALF, 48, V12); \
	Get V13; V128AnyTrue; \
	If; \
		KEXA(loff1, KNOHALF, 0); \
		KEXA(loff1, HIHALF, 16); \
		KEXA(loff1+16, KNOHALF, 32); \
		KEXA(loff1+16, HIHALF, 48); \
		dpush2; F64PromoteF32; F64x2Splat; Set V8; \
		KEXA(loff2, KNOHALF, 0); \
		KEXA(loff2, HIHALF, 16); \
		KEXA(loff2+16, KNOHALF, 32); \
		KEXA(loff2+16, HIHALF, 48); \
	Else; \
		KST(V2, 0); KST(V4, 16); KST(V14, 32); KST(V12, 48); \
	End

// KPAIR2(l1, l2, half, off, r) sets r to the pair of accumulators at
// R13+off after both fused multiply-adds (d1 in V8 times the lanes at
// R12+l1, d2 in V0 times those at R12+l2), each sum rounded to float32
// and tested (KMIDV); V1, V3 scratch.
#define KPAIR2(l1, l2, half, off, r) \
	KPL(l1, half, V1); Get V1; Get R13; I32WrapI64; V128Load $(off); F64x2Add; Set V3; KMIDV(V3); \
	Get V3; F32x4DemoteF64x2Zero; F64x2PromoteLowF32x4; Set V3; \
	Get R12; I32WrapI64; V128Load $(l2); half; F64x2ConvertLowI32x4S; Get V0; F64x2Mul; Get V3; F64x2Add; Set r; KMIDV(r); \
	Get r; F32x4DemoteF64x2Zero; F64x2PromoteLowF32x4; Set r

// KST(r, off) stores the accumulators r at R13+off.
#define KST(r, off) Get R13; I32WrapI64; Get r; V128Store $0, $(off)

// ---- Q5_K (the DotRows kernels: q5_k_wasm.s, relaxedkx_wasm.s) ----

// Q5LO(qv, hv, sh) pushes the low nibbles of qv with their fifth bits
// from hv moved to bit 4 by sh (a shift of the int16 lanes, or nothing;
// V6 holds 0x0f bytes, V7 0x10 bytes).
#define Q5LO(qv, hv, sh) \
	Get qv; Get V6; V128And; Get hv; sh; Get V7; V128And; V128Or

// Q5HI(qv, hv, sh) is Q5LO for the high nibbles.
#define Q5HI(qv, hv, sh) \
	Get qv; I32Const $4; I16x8ShrU; Get V6; V128And; Get hv; sh; Get V7; V128And; V128Or

// Q5MINSLO, Q5MINSHI push the mins splat in V5 (bytes 0..7: m0..m7) as
// the int16 lanes m0 m0 m1 m1 … m3 m3 and m4 m4 … m7 m7.
#define Q5MINSLO Get V5; V128Const $0x8001800180008000, $0x8003800380028002; I8x16Swizzle
#define Q5MINSHI Get V5; V128Const $0x8005800580048004, $0x8007800780068006; I8x16Swizzle

// Q5MINFMA adds -yd·dmin (F1 yd, dmin the fp16 at R0+2) times the block's
// Σ min·bsum (the int32 lanes of V5) to the min sums F17 by one fused
// multiply-add: a float64 sum rounded to float32 unless it is a float32
// rounding midpoint (its 29 low bits 1<<28), then by FMAHALF. (Below
// float32's normal range the float64 sum is exact: every term is a
// multiple of 2^-149, a float32's or one's times an integer.) F18, F19
// hold the next sum and the product.
#define Q5MINFMA \
	Get F1; F32Neg; KTAB(R0, 2); F32Mul; F64PromoteF32; \
	HSUM(V5); F64ConvertI32S; F64Mul; Set F19; \
	Get F19; Get F17; F64Add; Set F18; \
	Get F18; I64ReinterpretF64; I64Const $0x1fffffff; I64And; I64Const $0x10000000; I64Eq; \
	If; \
		Get F19; F64x2Splat; Set V9; \
		Get F17; F64x2Splat; Set V10; \
		FMAHALF; F32x4ExtractLane $0, $0; F64PromoteF32; Set F17; \
	Else; \
		Get F18; F32DemoteF64; F64PromoteF32; Set F17; \
	End

// Q5INIT clears a row's min sums (F17); Q5FIN adds them to its result.
#define Q5INIT F64Const $0.0; Set F17
#define Q5FIN Get F17; F32DemoteF64; F32Add

// Q5BLOCK(groups, bsumoff, fma, minfma) adds the Q5_K block at R0
// against the Q8_K activation block at R1 (its scale at R3, its bsums at
// R1+bsumoff) to the accumulators V14, V15 and the min sums. groups adds
// the block's int32 lanes (x86 order) to V10, V11, with its scales as
// bytes in V1 and its qh bytes in V8, V9. The float part is the
// reference's: d·yd and -yd·dmin in float32, one fused multiply-add per
// lane (fma: FMA8, or the relaxed build's FMA8R, the lanes in V2, V3 and
// d in V8) and one for the min sums (minfma: Q5MINFMA, or Q5MINFMAR). F1
// holds yd, V5 the mins' lanes.
#define Q5BLOCK(groups, bsumoff, fma, minfma) \
	SCALESMINS; \
	Get R8; I64Const $32; I64Shl; Get R7; I64Or; I64x2Splat; Set V1; \
	Get R0; I32WrapI64; V128Load $16; Set V8; \
	Get R0; I32WrapI64; V128Load $32; Set V9; \
	V128Const $0, $0; Set V10; \
	V128Const $0, $0; Set V11; \
	groups; \
	Get R10; I64Const $32; I64Shl; Get R9; I64Or; I64x2Splat; Set V5; \
	Q5MINSLO; Get R1; I32WrapI64; V128Load $(bsumoff); I32x4DotI16x8S; \
	Q5MINSHI; Get R1; I32WrapI64; V128Load $(bsumoff+16); I32x4DotI16x8S; \
	I32x4Add; Set V5; \
	Get R3; I32WrapI64; F32Load $0; Set F1; \
	Get F1; KTAB(R0, 0); F32Mul; F64PromoteF32; F64x2Splat; Set V8; \
	Get V10; Set V2; \
	Get V11; Set V3; \
	fma; \
	minfma

// ---- Q3_K (the DotRows kernels: q3_k_wasm.s, relaxedkx_wasm.s) ----

// Q3BLOCK(hop, field) adds the Q3_K block at R0 against the activation
// block at R1 (its scale at R3) to the accumulators V14, V15: its scales
// (less 32) as int16 lanes in V12 (0..7), V13 (8..15), its hmask bytes
// through hop (V128Not, or nothing) in V8, V9, its qs bytes of each half in
// V2, V3, then field(h, s, qsh, hsh, sv) adds field s of half h (the low
// bits moved to bits 0, 1 by qsh, the high bit to bit 2 by hsh, scales
// from sv) to the int32 lanes V10 (0..3), V11 (4..7); then yd·d in
// float32 and one fused multiply-add a lane (fma: FMA8, or FMA8R).
#define Q3BLOCK(hop, field, fma) \
	SCALES3(R5); \
	Get R7; I64x2Splat; Get R8; I64x2ReplaceLane $0, $1; V128Const $0x2020202020202020, $0x2020202020202020; I8x16Sub; Set V5; \
	Get V5; I16x8ExtendLowI8x16S; Set V12; \
	Get V5; I16x8ExtendHighI8x16S; Set V13; \
	Get R0; I32WrapI64; V128Load $0; hop; Set V8; \
	Get R0; I32WrapI64; V128Load $16; hop; Set V9; \
	Get R0; I32WrapI64; V128Load $32; Set V2; \
	Get R0; I32WrapI64; V128Load $48; Set V3; \
	V128Const $0, $0; Set V10; \
	V128Const $0, $0; Set V11; \
	field(0, 0, NOSH, SHL2, V12); field(0, 1, SHR2, SHL1, V12); \
	field(0, 2, SHR4, NOSH, V12); field(0, 3, SHR6, SHR1, V12); \
	Get R0; I32WrapI64; V128Load $64; Set V2; \
	Get R0; I32WrapI64; V128Load $80; Set V3; \
	field(1, 0, NOSH, SHR2, V13); field(1, 1, SHR2, SHR3, V13); \
	field(1, 2, SHR4, SHR4, V13); field(1, 3, SHR6, SHR5, V13); \
	KD(108); \
	Get V10; Set V2; \
	Get V11; Set V3; \
	fma

// ---- Q2_K (the DotRows kernels: q2_k_wasm.s, relaxedkx_wasm.s) ----

// Q2BLOCK(field, bsumoff) adds the Q2_K block at R0 against the activation
// block at R1 (its scale at R3, its bsums at R1+bsumoff) to the
// accumulators V14, V15: its scales (low nibbles) as bytes in V1, its
// mins (high nibbles) in V12, its qs bytes of each half in V2, V3, then
// field(h, s, sh) adds field s of half h (the quants moved to bits 0, 1 by
// sh) to the int32 lanes V10 (0..3), V11 (4..7); the min lanes (lane m:
// i32x4.dot_i16x8_s of the mins and bsums of sub-blocks 2m, 2m+1). Then
// the float part, the reference's: the min lanes times -yd·dmin, then the
// lanes times yd·d, one fused multiply-add a lane each (fma: FMA8, or
// FMA8R). V7 holds
// 0x0f bytes.
#define Q2BLOCK(field, bsumoff, fma) \
	Get R0; I32WrapI64; V128Load $0; Set V5; \
	Get V5; Get V7; V128And; Set V1; \
	Get V5; I32Const $4; I16x8ShrU; Get V7; V128And; Set V12; \
	Get R0; I32WrapI64; V128Load $16; Set V2; \
	Get R0; I32WrapI64; V128Load $32; Set V3; \
	V128Const $0, $0; Set V10; \
	V128Const $0, $0; Set V11; \
	field(0, 0, NOSH); field(0, 1, SHR2); field(0, 2, SHR4); field(0, 3, SHR6); \
	Get R0; I32WrapI64; V128Load $48; Set V2; \
	Get R0; I32WrapI64; V128Load $64; Set V3; \
	field(1, 0, NOSH); field(1, 1, SHR2); field(1, 2, SHR4); field(1, 3, SHR6); \
	Get V12; I16x8ExtendLowI8x16U; Get R1; I32WrapI64; V128Load $(bsumoff); I32x4DotI16x8S; Set V2; \
	Get V12; I16x8ExtendHighI8x16U; Get R1; I32WrapI64; V128Load $(bsumoff+16); I32x4DotI16x8S; Set V3; \
	Get V10; Set V1; \
	Get V11; Set V5; \
	Get R3; I32WrapI64; F32Load $0; F32Neg; KTAB(R0, 82); F32Mul; F64PromoteF32; F64x2Splat; Set V8; \
	fma; \
	KD(80); \
	Get V1; Set V2; \
	Get V5; Set V3; \
	fma

// FMA8R sets the accumulators V14, V15 to fma(d, lanes, acc) of the int32
// lanes in V2, V3 (d the f64x2 splat in V8, a float32's), lane by lane,
// with f32x4.relaxed_madd (the relaxed build, which runs only where it is
// fused: relaxed_wasm.h's RMADD): float32(lane) is exact, every lane of
// the x86-order kernels being below 2^24 in magnitude. V9 the d splat.
#define FMA8R \
	Get V8; F64x2ExtractLane $0, $0; F32DemoteF64; F32x4Splat; Set V9; \
	Get V2; F32x4ConvertI32x4S; Get V9; Get V14; RMADD; Set V14; \
	Get V3; F32x4ConvertI32x4S; Get V9; Get V15; RMADD; Set V15

// ---- Q3_K and Q2_K DotRowsN (q3_k_rowsn_wasm.s, q2_k_rowsn_wasm.s and
// the relaxed build's relaxedkx_wasm.s: KROWSN's block, prefloat and
// float) ----

// Q3S(sreg, sh) sets V4 to the scale in byte sh/8 of sreg, less 32, in
// every int16 lane.
#define Q3S(sreg, sh) \
	Get sreg; I64Const $(sh); I64ShrU; I64Const $0xff; I64And; I32WrapI64; I32Const $32; I32Sub; I16x8Splat; Set V4

// Q3C(qv, nv, qsh, nsh, sreg, sh, ev, od) sets ev, od to a chunk's even
// and odd weights times their scale.
#define Q3C(qv, nv, qsh, nsh, sreg, sh, ev, od) \
	Get qv; qsh; Get V6; V128And; Get nv; nsh; Get V7; V128And; I8x16Sub; Set V5; \
	Q3S(sreg, sh); \
	EVEN(V5); Get V4; I16x8Mul; Set ev; \
	ODD(V5); Get V4; I16x8Mul; Set od

// Q3G(g, qoff, sreg, s, qsh0, nsh0, qsh1, nsh1) decodes group g: fields s
// and s+1 of the half with qs at qoff (chunks 4g, 4g+1 and 4g+2, 4g+3),
// their scales bytes 2s.. of sreg (within the half).
#define Q3G(g, qoff, sreg, s, qsh0, nsh0, qsh1, nsh1) \
	Get R0; I32WrapI64; V128Load $(qoff); Set V2; \
	Get R0; I32WrapI64; V128Load $(qoff+16); Set V3; \
	Q3C(V2, V0, qsh0, nsh0, sreg, 16*(s), V8, V9); \
	Q3C(V3, V1, qsh0, nsh0, sreg, 16*(s)+8, V10, V11); \
	Q3C(V2, V0, qsh1, nsh1, sreg, 16*(s)+16, V12, V13); \
	Q3C(V3, V1, qsh1, nsh1, sreg, 16*(s)+24, V14, V15)

#define Q3BLOCKN \
	SCALES3(R9); \
	V128Const $0x0303030303030303, $0x0303030303030303; Set V6; \
	V128Const $0x0404040404040404, $0x0404040404040404; Set V7; \
	Get R0; I32WrapI64; V128Load $0; V128Not; Set V0; \
	Get R0; I32WrapI64; V128Load $16; V128Not; Set V1; \
	Q3G(0, 32, R7, 0, NOSH, SHL2, SHR2, SHL1); \
	KACTS(0, KSTORELANES, 64); \
	Q3G(1, 32, R7, 2, SHR4, NOSH, SHR6, SHR1); \
	KACTS(1, KADDLANES, 64); \
	Q3G(2, 64, R8, 0, NOSH, SHR2, SHR2, SHR3); \
	KACTS(2, KADDLANES, 64); \
	Q3G(3, 64, R8, 2, SHR4, SHR4, SHR6, SHR5); \
	KACTS(3, KADDLANES, 64)

#define Q3D KYD; KTAB(R0, 108); F32Mul
#define Q3FLOAT KFMAL(Q3D, 0)
#define NOPRE

// Q2C(qv, sh, sreg, b, ev, od) sets ev, od to a chunk's even and odd
// quants (in qv, moved to bits 0, 1 by sh) times their scale (the low
// nibble of byte b of sreg).
#define Q2C(qv, sh, sreg, b, ev, od) \
	Get qv; sh; Get V6; V128And; Set V5; \
	Get sreg; I64Const $(8*(b)); I64ShrU; I64Const $0x0f; I64And; I32WrapI64; I16x8Splat; Set V4; \
	Get V5; Get V0; V128And; Get V4; I16x8Mul; Set ev; \
	Get V5; I32Const $8; I16x8ShrU; Get V4; I16x8Mul; Set od

// Q2G(g, qoff, sreg, b, sh0, sh1) decodes group g: fields with shifts sh0
// (chunks 4g, 4g+1) and sh1 (4g+2, 4g+3) of the qs at qoff, their scales
// bytes b.. of sreg.
#define Q2G(g, qoff, sreg, b, sh0, sh1) \
	Get R0; I32WrapI64; V128Load $(qoff); Set V2; \
	Get R0; I32WrapI64; V128Load $(qoff+16); Set V3; \
	Q2C(V2, sh0, sreg, b, V8, V9); \
	Q2C(V3, sh0, sreg, (b)+1, V10, V11); \
	Q2C(V2, sh1, sreg, (b)+2, V12, V13); \
	Q2C(V3, sh1, sreg, (b)+3, V14, V15)

#define Q2BLOCKN \
	Get R0; I32WrapI64; I64Load $0; Set R7; \
	Get R0; I32WrapI64; I64Load $8; Set R8; \
	V128Const $0x00ff00ff00ff00ff, $0x00ff00ff00ff00ff; Set V0; \
	V128Const $0x0303030303030303, $0x0303030303030303; Set V6; \
	Q2G(0, 16, R7, 0, NOSH, SHR2); \
	KACTS(0, KSTORELANES, 64); \
	Q2G(1, 16, R7, 4, SHR4, SHR6); \
	KACTS(1, KADDLANES, 64); \
	Q2G(2, 48, R8, 0, NOSH, SHR2); \
	KACTS(2, KADDLANES, 64); \
	Q2G(3, 48, R8, 4, SHR4, SHR6); \
	KACTS(3, KADDLANES, 64)

// Q2MINS sets V6, V7 to the block's mins as int16 lanes.
#define Q2MINS \
	Get R0; I32WrapI64; V128Load $0; I32Const $4; I16x8ShrU; V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; V128And; Set V5; \
	Get V5; I16x8ExtendLowI8x16U; Set V6; \
	Get V5; I16x8ExtendHighI8x16U; Set V7

#define Q2DMIN KYD; F32Neg; KTAB(R0, 82); F32Mul
#define Q2D KYD; KTAB(R0, 80); F32Mul
#define Q2FLOAT Q2MINLANES; KFMA2(Q2DMIN, 32, Q2D, 0)

// Q2MINLANES stores the activation's min lanes (the mins in V6, V7 dotted
// with its bsums) at R12+32.
#define Q2MINLANES \
	Get R12; I32WrapI64; Get V6; Get R11; I32WrapI64; V128Load $512; I32x4DotI16x8S; V128Store $0, $32; \
	Get R12; I32WrapI64; Get V7; Get R11; I32WrapI64; V128Load $528; I32x4DotI16x8S; V128Store $0, $48


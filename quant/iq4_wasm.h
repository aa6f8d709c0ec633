// Macros of the IQ4_XS kernels: the SIMD128 ones (iq4_xs_wasm.s) and the
// relaxed-SIMD ones (iq4_relaxed_wasm.s, the relaxedsimd build).

// SCALES sets V12 to the scale-32 of sub-blocks 0..3 and V13 to those of
// 4..7 (int32 lanes), from the block's bytes 2..7 (SCALES4).
#define SCALES \
	Get R0; I32WrapI64; V128Load $0; Set V13; \
	SCALES4(V13, $0x1010100410101004, $0x1010100510101005, $0x1010100210101002); Set V12; \
	SCALES4(V13, $0x1010100610101006, $0x1010100710101007, $0x1010100310101003); Set V13

// SCALES4 pushes four sub-blocks' scale-32 from the block's bytes in src:
// each lane's byte of scales_l (swizzle indices llo, lhi) and of scales_h
// (hidx) put in its low byte (indices of 16 or more give zero), times 16
// or 1, and 64, 16, 4 or 1 (i32x4.mul), to bring the lane's nibble and bit
// pair to one place, shifted and masked.
#define SCALES4(src, llo, lhi, hidx) \
	Get src; V128Const llo, lhi; I8x16Swizzle; V128Const $0x0000000100000010, $0x0000000100000010; I32x4Mul; \
	I32Const $4; I32x4ShrU; V128Const $0x0000000f0000000f, $0x0000000f0000000f; V128And; \
	Get src; V128Const hidx, hidx; I8x16Swizzle; V128Const $0x0000001000000040, $0x0000000100000004; I32x4Mul; \
	I32Const $6; I32x4ShrU; V128Const $0x0000000300000003, $0x0000000300000003; V128And; I32Const $4; I32x4Shl; \
	V128Or; V128Const $0x0000002000000020, $0x0000002000000020; I32x4Sub

// ---- DotRowsN: one row against a batch ----
// iq4XSRowsN decodes each 64 weights of a block once, into eight vectors
// that stay in registers: the levels times their sub-block's scale-32 as
// int16 lanes (|level·(scale-32)| ≤ 127·32), the even weights' then the
// odd ones' of each 16 (the prepared activations' layout); each
// activation then takes eight loads and eight i32x4.dot_i16x8_s, whose
// int32 lanes are added to its block lanes in lanes (0..3 from the low
// nibbles, 4..7 from the high ones: the sums of dotIQ4_XSRef, exact, as
// the scale multiplies every product of the sub-block). The stores to
// lanes order each activation's loads after the previous one's
// arithmetic (see BARRIER). After the block, each activation's lanes are
// added to its accumulators with the fused multiply-adds (FMA8).
//
// register use (iq4XSRowsN): R0 weight block, R1 block j of activation
// 0's prepared blocks, R2 blocks left, R3 an activation's lanes, R4 d of
// block j of activation 0, R5 the prepared activations' stride, R6 d's
// stride, R7 scales_l, R8 scales_h, R9 activations left, R10 an
// activation's accumulators, R11 its prepared block, R12 its d, R13 the
// activations, R14 lanes; V0 0x0f bytes, V1 the levels, V2, V3 nibbles and levels,
// V4 a scale (int16 lanes), V8..V15 64 decoded weights (then FMA8's).

// NSCALE sets V4 to sub-block s's scale-32 in every int16 lane.
#define NSCALE(s) \
	Get R7; I64Const $(4*(s)); I64ShrU; I64Const $15; I64And; \
	Get R8; I64Const $(2*(s)); I64ShrU; I64Const $3; I64And; I64Const $4; I64Shl; I64Or; \
	I32WrapI64; I32Const $32; I32Sub; I16x8Splat; Set V4

// NDECODE(s, le, lo, he, ho) sets le, lo to sub-block s's low nibbles'
// 16 weights (even, odd) times its scale-32 and he, ho to its high ones'.
#define NDECODE(s, le, lo, he, ho) \
	NSCALE(s); \
	Get R0; I32WrapI64; V128Load $(8+16*(s)); Set V2; \
	Get V1; Get V2; Get V0; V128And; I8x16Swizzle; Set V3; \
	EVEN(V3); Get V4; I16x8Mul; Set le; \
	ODD(V3); Get V4; I16x8Mul; Set lo; \
	Get V1; Get V2; I32Const $4; I16x8ShrU; Get V0; V128And; I8x16Swizzle; Set V3; \
	EVEN(V3); Get V4; I16x8Mul; Set he; \
	ODD(V3); Get V4; I16x8Mul; Set ho

// NPY pushes the 8 prepared int16 activations at R11+off.
#define NPY(off) Get R11; I32WrapI64; V128Load $(off)

// NDOT4(a, b, c, d, p0, p1, p2, p3) pushes Σ of the four weight vectors
// dotted with the prepared activations at R11+p0..p3.
#define NDOT4(a, b, c, d, p0, p1, p2, p3) \
	Get a; NPY(p0); I32x4DotI16x8S; \
	Get b; NPY(p1); I32x4DotI16x8S; I32x4Add; \
	Get c; NPY(p2); I32x4DotI16x8S; I32x4Add; \
	Get d; NPY(p3); I32x4DotI16x8S; I32x4Add

// NFIRST and NADD store the pushed lanes at R3+off (the chunk's first
// lanes of the block) or add them to those there.
#define NFIRST(off) Set V2; Get R3; I32WrapI64; Get V2; V128Store $0, $(off)
#define NADD(off) Get R3; I32WrapI64; V128Load $(off); I32x4Add; Set V2; Get R3; I32WrapI64; Get V2; V128Store $0, $(off)

// NCHUNK(c, KEEP) decodes sub-blocks 2c and 2c+1 and dots them with every
// activation, KEEP (NFIRST or NADD) putting the lanes in lanes.
#define NCHUNK(c, KEEP) \
	NDECODE(2*(c), V8, V9, V10, V11); \
	NDECODE(2*(c)+1, V12, V13, V14, V15); \
	Get R1; Set R11; Get R14; Set R3; Get R13; Set R9; \
	Loop; \
		NDOT4(V8, V9, V12, V13, 128*c, 128*c+16, 128*c+64, 128*c+80); KEEP(0); \
		NDOT4(V10, V11, V14, V15, 128*c+32, 128*c+48, 128*c+96, 128*c+112); KEEP(16); \
		Get R11; Get R5; I64Add; Set R11; ADD(R3, 32); \
		COUNTDOWN(R9); \
	End

// IQ4XSROWSN is the body of iq4XSRowsN (and of iq4XSRowsNRelaxed, with
// its arguments), FLT the float part of each activation and block: it adds
// the activation's lanes in V2, V3 times its d·dy (at R12) to its
// accumulators in V14, V15. V1 is kvaluesIQ4NL.
#define IQ4XSROWSN(FLT) \
	I64Load x+0(FP); Set R0; \
	I64Load nb+8(FP); Tee R2; \
	I64Const $544; I64Mul; Set R5; \
	I64Load nb+8(FP); I64Const $4; I64Mul; Set R6; \
	I64Load yp+16(FP); Set R1; \
	I64Load k+24(FP); Set R13; \
	I64Load d+32(FP); Set R4; \
	I64Load lanes+48(FP); Set R14; \
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; \
	Set V0; \
	V128Const $0xf6eaddcfbfad9881, $0x7159453526190d01; \
	Set V1; \
	Loop; \
		Get R0; I32WrapI64; I64Load32U $4; Set R7; \
		Get R0; I32WrapI64; I64Load16U $2; Set R8; \
		NCHUNK(0, NFIRST); \
		NCHUNK(1, NADD); \
		NCHUNK(2, NADD); \
		NCHUNK(3, NADD); \
		Get R4; Set R12; I64Load acc+40(FP); Set R10; Get R14; Set R3; Get R13; Set R9; \
		Loop; \
			Get R3; I32WrapI64; V128Load $0; Set V2; \
			Get R3; I32WrapI64; V128Load $16; Set V3; \
			Get R10; I32WrapI64; V128Load $0; Set V14; \
			Get R10; I32WrapI64; V128Load $16; Set V15; \
			FLT; \
			Get R10; I32WrapI64; Get V14; V128Store $0, $0; \
			Get R10; I32WrapI64; Get V15; V128Store $0, $16; \
			ADD(R3, 32); \
			ADD(R10, 32); \
			Get R12; Get R6; I64Add; Set R12; \
			COUNTDOWN(R9); \
		End; \
		ADD(R0, 136); \
		ADD(R1, 544); \
		ADD(R4, 4); \
		COUNTDOWN(R2); \
	End

// ---- IQ4_NL DotRows: four rows a pass (iq4_nl_rows_wasm.s, iq4_relaxed_wasm.s) ----

// NLYLOAD loads the prepared activation block at R11 into V4, V12, V13,
// V14 (even and odd int16 lanes of activations 0..15, then 16..31).
#define NLYLOAD \
	Get R11; I32WrapI64; V128Load $0; Set V4; \
	Get R11; I32WrapI64; V128Load $16; Set V12; \
	Get R11; I32WrapI64; V128Load $32; Set V13; \
	Get R11; I32WrapI64; V128Load $48; Set V14

// NLROW sets dst to the int32 lanes of Σ level·y of the block at r (V2,
// V3 scratch) and stores them at the output (R14), which the group's
// results overwrite: the stores keep V8 (TurboFan) from issuing the loads
// of all four rows first and spilling.
#define NLROW(r, dst) \
	Get r; I32WrapI64; V128Load $2; Set V2; \
	Get V0; Get V2; Get V15; V128And; I8x16Swizzle; Set V3; \
	EVEN(V3); Get V4; I32x4DotI16x8S; \
	ODD(V3); Get V12; I32x4DotI16x8S; I32x4Add; \
	Get V0; Get V2; I32Const $4; I16x8ShrU; Get V15; V128And; I8x16Swizzle; Set V3; \
	EVEN(V3); Get V13; I32x4DotI16x8S; I32x4Add; \
	ODD(V3); Get V14; I32x4DotI16x8S; I32x4Add; \
	Set dst; Get R14; I32WrapI64; Get dst; V128Store $0, $0

// NLCONSTS sets NLREDUCE4's constants: V9 the low int32 of each int64
// lane, V10 the low int64 lane, V11 the swizzle that swaps the int64
// lanes.
#define NLCONSTS \
	V128Const $0x00000000ffffffff, $0x00000000ffffffff; Set V9; \
	V128Const $-1, $0; Set V10; \
	V128Const $0x0f0e0d0c0b0a0908, $0x0706050403020100; Set V11

// NLPAIRS4 sets a to [a0+a1, b0+b1, a2+a3, b2+b3].
#define NLPAIRS4(a, b) \
	Get a; Get a; I32Const $32; I64x2ShrU; I32x4Add; \
	Get b; Get b; I32Const $32; I64x2Shl; I32x4Add; \
	Get V9; V128Bitselect; Set a

// NLREDUCE4 pushes [ΣV5, ΣV6, ΣV7, ΣV8] (exact: each below 2^20).
#define NLREDUCE4 \
	NLPAIRS4(V5, V6); NLPAIRS4(V7, V8); \
	Get V5; Get V5; Get V11; I8x16Swizzle; I32x4Add; \
	Get V7; Get V7; Get V11; I8x16Swizzle; I32x4Add; \
	Get V10; V128Bitselect

// NLDX pushes the float32 of the fp16 scale at the start of the block at
// r (through fp16ToFP32Table at R13).
#define NLDX(r) Get R13; Get r; I32WrapI64; I64Load16U $0; I64Const $2; I64Shl; I64Add; I32WrapI64; F32Load $0

// NLCHECK pushes the lanes of the float64 sums s that are float32
// midpoints (their 29 low bits 1<<28) or below float32's normal range:
// only there can rounding s differ from rounding the exact sum.
#define NLCHECK(s) \
	Get s; V128Const $0x1fffffff, $0x1fffffff; V128And; V128Const $0x10000000, $0x10000000; I64x2Eq; \
	Get s; F64x2Abs; V128Const $0x3810000000000000, $0x3810000000000000; F64x2Lt; V128Or

// NLFMA4 sets V1 to fma32(float32(V5), V6, V1), lane by lane.
#define NLFMA4 \
	Get V5; F64x2ConvertLowI32x4S; Get V6; F64x2PromoteLowF32x4; F64x2Mul; Set V2; \
	Get V1; F64x2PromoteLowF32x4; Set V3; \
	Get V2; Get V3; F64x2Add; Set V4; \
	Get V5; HIHALF; F64x2ConvertLowI32x4S; Get V6; HIHALF; F64x2PromoteLowF32x4; F64x2Mul; Set V7; \
	Get V1; HIHALF; F64x2PromoteLowF32x4; Set V8; \
	Get V7; Get V8; F64x2Add; Set V12; \
	NLCHECK(V4); NLCHECK(V12); V128Or; V128AnyTrue; \
	If; \
		Get V2; Set V9; Get V3; Set V10; FMAHALF; Set V14; \
		Get V7; Set V9; Get V8; Set V10; FMAHALF; TOHIGH; Get V14; V128Or; Set V1; \
		NLCONSTS; \
	Else; \
		Get V4; F32x4DemoteF64x2Zero; \
		Get V12; F32x4DemoteF64x2Zero; TOHIGH; V128Or; Set V1; \
	End

// NLROWS4 is the body of iq4NLRows4 (and of iq4NLRows4Relaxed, with its
// arguments): ROW sets a row's int32 block lanes from the prepared block
// in V4, V12, V13, V14, FMA4 adds the four rows' terms (int32 block sums
// in V5, dx·dy in V6) to V1. V0 is kvaluesIQ4NL.
#define NLROWS4(ROW, FMA4) \
	I64Load x+0(FP); Set R0; \
	I64Load rowBytes+40(FP); Set R15; \
	I64Load groups+48(FP); Set R12; \
	I64Load tab+24(FP); Set R13; \
	I64Load out+56(FP); Set R14; \
	V128Const $0xf6eaddcfbfad9881, $0x7159453526190d01; \
	Set V0; \
	V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; \
	Set V15; \
	NLCONSTS; \
	Block; \
	Get R12; I64Eqz; BrIf $0; \
	Loop; \
		Get R0; Get R15; I64Add; Set R4; \
		Get R4; Get R15; I64Add; Set R5; \
		Get R5; Get R15; I64Add; Set R6; \
		I64Load yp+8(FP); Set R11; \
		I64Load yd+16(FP); Set R1; \
		I64Load nb+32(FP); Set R2; \
		V128Const $0, $0; Set V1; \
		Loop; \
			NLYLOAD; \
			ROW(R0, V5); ROW(R4, V6); ROW(R5, V7); ROW(R6, V8); \
			NLREDUCE4; Set V5; \
			NLDX(R0); F32x4Splat; NLDX(R4); F32x4ReplaceLane $0, $1; NLDX(R5); F32x4ReplaceLane $0, $2; NLDX(R6); F32x4ReplaceLane $0, $3; \
			Get R1; I32WrapI64; F32Load $0; F32x4Splat; F32x4Mul; Set V6; \
			FMA4; \
			ADD(R0, 18); ADD(R4, 18); ADD(R5, 18); ADD(R6, 18); \
			ADD(R11, 64); ADD(R1, 4); \
			COUNTDOWN(R2); \
		End; \
		Get R14; I32WrapI64; Get V1; V128Store $0, $0; \
		ADD(R14, 16); \
		Get R6; Set R0; \
		COUNTDOWN(R12); \
	End; \
	End

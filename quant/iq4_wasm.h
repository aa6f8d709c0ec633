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

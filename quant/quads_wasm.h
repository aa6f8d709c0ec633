// Macros shared by the DotRowsN kernels that put four activations (a
// quad) in the four int32 lanes of every vector, so that no sum is reduced
// across lanes: quads_wasm.s (Q8_0, Q4_0), q32rows_wasm.s (IQ4_NL),
// relaxedn_wasm.s (Q4_K, Q6_K, Q4_0) and iq4_relaxed_wasm.s (IQ4_NL).

// GATHER sets V1 to the int32 at byte off of each activation block R4..R7.
#define GATHER(off) \
	Get R4; I32WrapI64; I32Load $(off); I32x4Splat; \
	Get R5; I32WrapI64; I32Load $(off); I32x4ReplaceLane $0, $1; \
	Get R6; I32WrapI64; I32Load $(off); I32x4ReplaceLane $0, $2; \
	Get R7; I32WrapI64; I32Load $(off); I32x4ReplaceLane $0, $3; \
	Set V1

// ZERO sets v to zero.
#define ZERO(v) V128Const $0, $0; Set v

// SPL sets V8 to int32 lane m of V9 in every lane (mask V10+m).
#define SPL(mask) Get V9; Get mask; I8x16Swizzle; Set V8

// MASKS sets V10..V13 to the i8x16.swizzle masks that splat int32 lane
// 0..3 over a vector (SPL).
#define MASKS \
	V128Const $0x0302010003020100, $0x0302010003020100; Set V10; \
	V128Const $0x0706050407060504, $0x0706050407060504; Set V11; \
	V128Const $0x0b0a09080b0a0908, $0x0b0a09080b0a0908; Set V12; \
	V128Const $0x0f0e0d0c0f0e0d0c, $0x0f0e0d0c0f0e0d0c; Set V13

// ---- row kernels: Q8_0, Q4_0 (quads_wasm.s, relaxedn_wasm.s), IQ4_NL
// (q32rows_wasm.s, iq4_relaxed_wasm.s) ----

// MAC adds the splat weights V8 dotted with the prepared pairs at rq+off
// to v.
#define MAC(v, rq, off) Get V8; Get rq; I32WrapI64; V128Load $(off); I32x4DotI16x8S; Get v; I32x4Add; Set v
#define MACS1(off) MAC(V4, R1, off)
#define MACS2(off) MACS1(off); MAC(V5, R7, off)
#define MACS3(off) MACS2(off); MAC(V6, R8, off)
#define MACS4(off) MACS3(off); MAC(V7, R9, off)

// LANES4 runs the four int32 lanes (weight pairs) of V9 through macs,
// against the prepared pairs at off, off+32, off+64, off+96.
#define LANES4(macs, off) SPL(V10); macs(off); SPL(V11); macs(off+32); SPL(V12); macs(off+64); SPL(V13); macs(off+96)


// TAB pushes the float32 of the fp16 bits at the address in r (R13 the
// fp16 table, fp16ToFP32Table).
#define TAB(r) Get R13; Get r; I32WrapI64; I64Load16U $0; I64Const $2; I64Shl; I64Add; I32WrapI64; F32Load $0

// FLT8 adds float32(sums)·float32(dx·dy) of a quad (int32 sums in vi,
// prepared block at rq, dx splat in V8) to vf; FLT4 takes 8·Σy off the
// sums first.
#define FLT8(vi, vf, rq) \
	Get vi; F32x4ConvertI32x4S; Get V8; Get rq; I32WrapI64; V128Load $Q8DY; F32x4Mul; F32x4Mul; \
	Get vf; F32x4Add; Set vf
#define FLT4(vi, vf, rq) \
	Get vi; Get rq; I32WrapI64; V128Load $Q8SUM; I32Const $3; I32x4Shl; I32x4Sub; Set vi; FLT8(vi, vf, rq)

#define FLTS1(flt) flt(V4, V0, R1)
#define FLTS2(flt) FLTS1(flt); flt(V5, V1, R7)
#define FLTS3(flt) FLTS2(flt); flt(V6, V2, R8)
#define FLTS4(flt) FLTS3(flt); flt(V7, V3, R9)

// BLOCKQ runs the block at R0 for nq quads (the int part intq, the float
// part flt).
#define BLOCKQ(intq, macs, flts, flt) intq(macs); TAB(R0); F32x4Splat; Set V8; flts(flt)

// ROWSN is the body of a Q8_0/Q4_0 row kernel: for each row and block,
// the block in the variant for R5's number of quads (intq with macs1..4,
// flt); per row the four quads' float32 sums stored at R14 (64 bytes a
// row). The file defines Q8QB, the size of a prepared quad block, Q8DY and
// Q8SUM where its scales and sums are, and Q8MASK, which sets V15.
#define ROWSN(xsize, intq, flt, macs1, macs2, macs3, macs4) \
	I64Load x+0(FP); Set R0; \
	I64Load out+48(FP); Set R14; \
	I64Load rows+32(FP); Set R6; \
	I64Load nb+24(FP); I64Const $Q8QB; I64Mul; Set R15; \
	I64Load tab+16(FP); Set R13; \
	I64Load quads+40(FP); Set R5; \
	MASKS; \
	Q8MASK; \
	Loop; \
		ZERO(V0); ZERO(V1); ZERO(V2); ZERO(V3); \
		I64Load yq+8(FP); Set R1; \
		I64Load nb+24(FP); Set R2; \
		Loop; \
			Get R1; Get R15; I64Add; Set R7; Get R7; Get R15; I64Add; Set R8; Get R8; Get R15; I64Add; Set R9; \
			ZERO(V4); ZERO(V5); ZERO(V6); ZERO(V7); \
			Get R5; I64Const $4; I64Eq; \
			If; BLOCKQ(intq, macs4, FLTS4, flt); Else; \
			Get R5; I64Const $3; I64Eq; \
			If; BLOCKQ(intq, macs3, FLTS3, flt); Else; \
			Get R5; I64Const $2; I64Eq; \
			If; BLOCKQ(intq, macs2, FLTS2, flt); Else; \
			BLOCKQ(intq, macs1, FLTS1, flt); \
			End; End; End; \
			ADD(R0, xsize); \
			ADD(R1, Q8QB); \
			COUNTDOWN(R2); \
		End; \
		Get R14; I32WrapI64; Get V0; V128Store $0, $0; \
		Get R14; I32WrapI64; Get V1; V128Store $0, $16; \
		Get R14; I32WrapI64; Get V2; V128Store $0, $32; \
		Get R14; I32WrapI64; Get V3; V128Store $0, $48; \
		ADD(R14, 64); \
		COUNTDOWN(R6); \
	End


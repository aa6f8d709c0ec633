// Macros of the wasm DotRowsN kernels of Q5_K (q5_k_rowsn_wasm.s, the
// SIMD128 build's q5KRowsN, and relaxedkx_wasm.s's q5KRowsNRelaxed),
// besides kkq_wasm.h's.

// Q5W(qv, q5op, hoff, sh, ev, od) sets ev and od to the even and odd
// quants (q5op: Q5LOM the low nibbles of qv, Q5HIM the high ones; fifth
// bits from the qh bytes at R0+hoff moved by sh) times the scale in V4, as
// int16 lanes.
#define Q5W(qv, q5op, hoff, sh, ev, od) \
	q5op(qv, hoff, sh); Set V5; \
	Get V5; Get V0; V128And; Get V4; I16x8Mul; Set ev; \
	Get V5; I32Const $8; I16x8ShrU; Get V4; I16x8Mul; Set od
#define Q5LOM(qv, hoff, sh) \
	Get qv; Get V6; V128And; Get R0; I32WrapI64; V128Load $(hoff); sh; Get V7; V128And; V128Or
#define Q5HIM(qv, hoff, sh) \
	Get qv; I32Const $4; I16x8ShrU; Get V6; V128And; Get R0; I32WrapI64; V128Load $(hoff); sh; Get V7; V128And; V128Or

// Q5SPLAT(sreg, sh) sets V4 to byte sh/8 of sreg in every int16 lane.
#define Q5SPLAT(sreg, sh) \
	Get sreg; I64Const $(sh); I64ShrU; I64Const $0xff; I64And; I32WrapI64; I16x8Splat; Set V4

// Q5WG(g, sreg, sh1, sh2, shlo, shhi) decodes group g into V8..V15.
#define Q5WG(g, sreg, sh1, sh2, shlo, shhi) \
	Get R0; I32WrapI64; V128Load $(48+32*(g)); Set V2; \
	Get R0; I32WrapI64; V128Load $(64+32*(g)); Set V3; \
	Q5SPLAT(sreg, sh1); \
	Q5W(V2, Q5LOM, 16, shlo, V8, V9); \
	Q5W(V3, Q5LOM, 32, shlo, V10, V11); \
	Q5SPLAT(sreg, sh2); \
	Q5W(V2, Q5HIM, 16, shhi, V12, V13); \
	Q5W(V3, Q5HIM, 32, shhi, V14, V15)

// LANESLO and LANESHI push an activation's int32 lanes 0..3 and 4..7 (at
// R12; the relaxed build's KFMAACTR reads them).
#define LANESLO Get R12; I32WrapI64; V128Load $0
#define LANESHI Get R12; I32WrapI64; V128Load $16

// Q5D pushes the block's d (KTAB(R0, 0)) times the activation's scale (F1).
#define Q5D Get F1; KTAB(R0, 0); F32Mul

// KFMAACT does the block's float part for the activation at R4 (scale),
// R11 (prepared block), R12 (int32 lanes), R13 (accumulators), with the
// mins in V0; scratch V1..V5, V8..V15.
#define KFMAACT \
	Get R4; I32WrapI64; F32Load $0; Set F1; \
	KFMAL(Q5D, 0); \
	Get V0; Q5MINSLOV; Get R11; I32WrapI64; V128Load $512; I32x4DotI16x8S; \
	Get V0; Q5MINSHIV; Get R11; I32WrapI64; V128Load $528; I32x4DotI16x8S; \
	I32x4Add; Set V5; \
	Get F1; F32Neg; KTAB(R0, 2); F32Mul; F64PromoteF32; \
	HSUM(V5); F64ConvertI32S; F64Mul; Set F19; \
	Get F19; Get R13; I32WrapI64; F64Load $(1536-512); F64Add; Set F18; \
	Get F18; I64ReinterpretF64; I64Const $0x1fffffff; I64And; I64Const $0x10000000; I64Eq; \
	If; \
		Get F19; F64x2Splat; Set V9; \
		Get R13; I32WrapI64; F64Load $(1536-512); F64x2Splat; Set V10; \
		FMAHALF; F32x4ExtractLane $0, $0; F64PromoteF32; Set F17; \
	Else; \
		Get F18; F32DemoteF64; F64PromoteF32; Set F17; \
	End; \
	Get R13; I32WrapI64; Get F17; F64Store $(1536-512)

#define Q5MINSLOV V128Const $0x8001800180008000, $0x8003800380028002; I8x16Swizzle
#define Q5MINSHIV V128Const $0x8005800580048004, $0x8007800780068006; I8x16Swizzle

// Q5KROWSN(float, accload, minload) is the kernel (q5KRowsN's arguments):
// per block the decoder and its lanes against every activation, then float
// per activation (KFMAACT, the accumulators float64 values of float32s, or
// the relaxed build's KFMAACTR, float32 ones); at the end of a row accload
// sets V14, V15 to an activation's accumulators (at R13) as float32 and
// minload pushes its min sums as a float32.
#define Q5KROWSN(float, accload, minload) \
	I64Load x+0(FP); Set R0; \
	I64Load tab+48(FP); Set R14; \
	I64Load rows+16(FP); Set R15; \
	Loop; \
		I64Load st+56(FP); Set R13; \
		I64Load k+32(FP); Set R10; \
		Loop; \
			Get R13; I32WrapI64; V128Const $0, $0; V128Store $0, $512; \
			Get R13; I32WrapI64; V128Const $0, $0; V128Store $0, $528; \
			Get R13; I32WrapI64; V128Const $0, $0; V128Store $0, $544; \
			Get R13; I32WrapI64; V128Const $0, $0; V128Store $0, $560; \
			ADD(R13, 64); \
			COUNTDOWN(R10); \
		End; \
		I64Load st+56(FP); Set R13; \
		I64Load k+32(FP); Set R10; \
		Loop; \
			Get R13; I32WrapI64; I64Const $0; I64Store $1536; \
			ADD(R13, 64); \
			COUNTDOWN(R10); \
		End; \
		I64Load yp+24(FP); Set R1; \
		I64Load yd+40(FP); Set R3; \
		I64Load nb+8(FP); Set R2; \
		Loop; \
			SCALESMINS; \
			Get R10; I64Const $32; I64Shl; Get R9; I64Or; Set R9; \
			I64Load nb+8(FP); I64Const $544; I64Mul; Set R5; \
			I64Load nb+8(FP); I64Const $4; I64Mul; Set R6; \
			V128Const $0x00ff00ff00ff00ff, $0x00ff00ff00ff00ff; Set V0; \
			V128Const $0x0f0f0f0f0f0f0f0f, $0x0f0f0f0f0f0f0f0f; Set V6; \
			V128Const $0x1010101010101010, $0x1010101010101010; Set V7; \
			Q5WG(0, R7, 0, 8, SHL4, SHL3); \
			KACTS(0, KSTORELANES, 32); \
			Q5WG(1, R7, 16, 24, SHL2, SHL1); \
			KACTS(1, KADDLANES, 32); \
			Q5WG(2, R8, 0, 8, NOSH, SHR1); \
			KACTS(2, KADDLANES, 32); \
			Q5WG(3, R8, 16, 24, SHR2, SHR3); \
			KACTS(3, KADDLANES, 32); \
			Get R9; I64x2Splat; Set V0; \
			Get R1; Set R11; \
			Get R3; Set R4; \
			I64Load st+56(FP); Set R12; \
			I64Load st+56(FP); I64Const $512; I64Add; Set R13; \
			I64Load k+32(FP); Set R10; \
			Loop; \
				float; \
				Get R11; Get R5; I64Add; Set R11; \
				Get R4; Get R6; I64Add; Set R4; \
				ADD(R12, 32); \
				ADD(R13, 64); \
				COUNTDOWN(R10); \
			End; \
			ADD(R0, 176); \
			ADD(R1, 544); \
			ADD(R3, 4); \
			COUNTDOWN(R2); \
		End; \
		I64Load st+56(FP); I64Const $512; I64Add; Set R13; \
		I64Load out+64(FP); I64Load rows+16(FP); Get R15; I64Sub; I64Load k+32(FP); I64Mul; I64Const $2; I64Shl; I64Add; Set R12; \
		I64Load k+32(FP); Set R10; \
		Loop; \
			accload; \
			Get R12; I32WrapI64; \
			KHSUM8; \
			minload; F32Add; \
			F32Store $0; \
			ADD(R12, 4); \
			ADD(R13, 64); \
			COUNTDOWN(R10); \
		End; \
		COUNTDOWN(R15); \
	End

// Q5NACC64 and Q5NMIN64 load KFMAACT's accumulators and min sums.
#define Q5NACC64 \
	Get R13; I32WrapI64; V128Load $0; F32x4DemoteF64x2Zero; \
	Get R13; I32WrapI64; V128Load $16; F32x4DemoteF64x2Zero; TOHIGH; V128Or; Set V14; \
	Get R13; I32WrapI64; V128Load $32; F32x4DemoteF64x2Zero; \
	Get R13; I32WrapI64; V128Load $48; F32x4DemoteF64x2Zero; TOHIGH; V128Or; Set V15
#define Q5NMIN64 Get R13; I32WrapI64; F64Load $(1536-512); F32DemoteF64

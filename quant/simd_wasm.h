// Macros shared by the hand-written wasm SIMD128 kernels (*_wasm.s).

// EVEN and ODD push the even and odd int8 bytes of v as int16 lanes.
#define EVEN(v) Get v; I32Const $8; I16x8Shl; I32Const $8; I16x8ShrS
#define ODD(v) Get v; I32Const $8; I16x8ShrS

// HSUM pushes the sum of the four int32 lanes of v.
#define HSUM(v) \
	Get v; I32x4ExtractLane $0, $0; Get v; I32x4ExtractLane $0, $1; I32Add; \
	Get v; I32x4ExtractLane $0, $2; I32Add; Get v; I32x4ExtractLane $0, $3; I32Add

// ADD adds the constant n to the int64 register r.
#define ADD(r, n) Get r; I64Const $(n); I64Add; Set r

// COUNTDOWN takes one from r and branches back to the enclosing Loop while
// r is not zero.
#define COUNTDOWN(r) Get r; I64Const $1; I64Sub; Tee r; I64Eqz; I32Eqz; BrIf $0

// SCALESMINS unpacks the 6-bit scales and mins of the Q4_K block at R0
// (scalesMinsK4), four to a word: scales 0..3 in R7, 4..7 in R8, mins
// 0..3 in R9, 4..7 in R10 (R4..R6 the packed words).
#define SCALESMINS \
	Get R0; I32WrapI64; I64Load32U $4; Set R4; \
	Get R0; I32WrapI64; I64Load32U $8; Set R5; \
	Get R0; I32WrapI64; I64Load32U $12; Set R6; \
	Get R4; I64Const $0x3f3f3f3f; I64And; Set R7; \
	Get R6; I64Const $0x0f0f0f0f; I64And; \
	Get R4; I64Const $6; I64ShrU; I64Const $0x03030303; I64And; I64Const $4; I64Shl; \
	I64Or; Set R8; \
	Get R5; I64Const $0x3f3f3f3f; I64And; Set R9; \
	Get R6; I64Const $4; I64ShrU; I64Const $0x0f0f0f0f; I64And; \
	Get R5; I64Const $6; I64ShrU; I64Const $0x03030303; I64And; I64Const $4; I64Shl; \
	I64Or; Set R10

// The fused multiply-adds of ggml's x86 order (x86order.go), emulated
// exactly as fma32 does, two lanes at a time in f64x2: the product d·lane
// (exact), the sum, its error (TwoSum), the sum rounded to odd with it
// (one step of its bit pattern toward the error when it is even and
// inexact) and rounded to float32 (f32x4.demote_f64x2_zero). They use V4
// and V9..V13 as scratch and V8 as d (an f64x2 splat).

// FMAHALF pushes the f32x4 [fma(p0), fma(p1), 0, 0] of the exact products
// p in V9 and the accumulators a in V10 (float32 values as f64x2): s = p+a
// (V11), its error e (V12), then s's bits stepped toward e if e ≠ 0 and s
// is even (lt, gt: e < 0, e > 0; sneg: s < 0; even: s's low bit clear),
// demoted to float32.
#define FMAHALF \
	Get V9; Get V10; F64x2Add; Set V11; \
	Get V11; Get V9; F64x2Sub; Set V12; \
	Get V9; Get V11; Get V12; F64x2Sub; F64x2Sub; \
	Get V10; Get V12; F64x2Sub; F64x2Add; Set V12; \
	Get V12; V128Const $0, $0; F64x2Lt; Set V13; \
	Get V12; V128Const $0, $0; F64x2Gt; Set V12; \
	Get V11; V128Const $1, $1; V128And; V128Const $0, $0; I64x2Eq; Set V9; \
	Get V11; I32Const $63; I64x2ShrS; Set V10; \
	Get V11; \
	Get V13; Get V12; Get V10; V128Bitselect; Get V9; V128And; I64x2Sub; \
	Get V12; Get V13; Get V10; V128Bitselect; Get V9; V128And; I64x2Add; \
	F32x4DemoteF64x2Zero

// HIHALF moves the high 8 bytes of the pushed vector to its low 8.
#define HIHALF V128Const $0x0f0e0d0c0b0a0908, $0x0706050403020100; I8x16Swizzle
// TOHIGH moves the low 8 bytes of the pushed vector to its high 8 (and
// zeroes the low 8: swizzle indices of 16 or more give zero).
#define TOHIGH V128Const $0x1010101010101010, $0x0706050403020100; I8x16Swizzle

// FMA4 sets the accumulators in acc to fma(d·dy, lanes, acc), lane by lane.
#define FMA4(lanes, acc) \
	Get lanes; F64x2ConvertLowI32x4S; Get V8; F64x2Mul; Set V9; \
	Get acc; F64x2PromoteLowF32x4; Set V10; \
	FMAHALF; Set V4; \
	Get lanes; HIHALF; F64x2ConvertLowI32x4S; Get V8; F64x2Mul; Set V9; \
	Get acc; HIHALF; F64x2PromoteLowF32x4; Set V10; \
	FMAHALF; TOHIGH; Get V4; V128Or; Set acc


// FASTSUM sets V11 to the f64x2 sums p+a of the lanes (from the pushed
// int32 lanes times V8, and the pushed float32 accumulators), and or-s
// into V13 where a sum is a float32 midpoint (its 29 low bits 1<<28) or
// below float32's normal range: only there can rounding the sum to
// float32 differ from rounding the exact p+a (rounding is monotonic, so
// elsewhere the two lie between the same midpoints).
#define FASTSUM \
	F64x2PromoteLowF32x4; Set V11; \
	F64x2ConvertLowI32x4S; Get V8; F64x2Mul; Get V11; F64x2Add; Set V11; \
	Get V11; V128Const $0x1fffffff, $0x1fffffff; V128And; V128Const $0x10000000, $0x10000000; I64x2Eq; \
	Get V11; F64x2Abs; V128Const $0x3810000000000000, $0x3810000000000000; F64x2Lt; V128Or; \
	Get V13; V128Or; Set V13

// FAST4 sets out to the four lanes' float32 sums (FASTSUM).
#define FAST4(lanes, acc, out) \
	Get lanes; Get acc; FASTSUM; Get V11; F32x4DemoteF64x2Zero; Set V4; \
	Get lanes; HIHALF; Get acc; HIHALF; FASTSUM; Get V11; F32x4DemoteF64x2Zero; TOHIGH; Get V4; V128Or; Set out

// FMA8 sets the accumulators V14, V15 to fma(d, lanes, acc) of the int32
// lanes in V2, V3, lane by lane: rounded sums (FAST4) unless one is a
// midpoint (or tiny), then FMA4's exact emulation.
#define FMA8 \
	V128Const $0, $0; Set V13; \
	FAST4(V2, V14, V9); \
	FAST4(V3, V15, V10); \
	Get V13; V128AnyTrue; \
	If; \
		FMA4(V2, V14); \
		FMA4(V3, V15); \
	Else; \
		Get V9; Set V14; \
		Get V10; Set V15; \
	End

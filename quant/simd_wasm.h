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

// FMA2 sets the f64x2 register acc, whose lanes hold float32 values, to
// fmaf(p, acc) lane by lane, where the f64x2 p holds exact products (of a
// float32 and an int32 below 2^24): the sum s = p + acc rounded to odd
// (its error e by TwoSum; where e is not zero and s finite, s becomes
// (s - 1 ulp)|1 if e points towards zero, s|1 if away), then rounded to
// float32 (fmaf in kx86.go). s, z, e are scratch registers.
#define FMA2(p, acc, s, z, e) \
	Get p; Get acc; F64x2Add; Set s; \
	Get s; Get p; F64x2Sub; Set z; \
	Get p; Get s; Get z; F64x2Sub; F64x2Sub; Get acc; Get z; F64x2Sub; F64x2Add; Set e; \
	Get s; Get s; Get e; V128Xor; I32Const $63; I64x2ShrS; I64x2Add; V128Const $1, $1; V128Or; \
	Get s; \
	Get e; V128Const $0, $0; F64x2Ne; Get s; Get s; F64x2Sub; V128Const $0, $0; F64x2Eq; V128And; \
	V128Bitselect; F32x4DemoteF64x2Zero; F64x2PromoteLowF32x4; Set acc

// LOADACC sets V11..V14 to the eight float32 lanes at R3 (as f64x2
// pairs) and V15 to the float32 at R3+32, twice.
#define LOADACC \
	Get R3; I32WrapI64; V128Load $0; F64x2PromoteLowF32x4; Set V11; \
	Get R3; I32WrapI64; V128Load $8; F64x2PromoteLowF32x4; Set V12; \
	Get R3; I32WrapI64; V128Load $16; F64x2PromoteLowF32x4; Set V13; \
	Get R3; I32WrapI64; V128Load $24; F64x2PromoteLowF32x4; Set V14; \
	Get R3; I32WrapI64; F32Load $32; F64PromoteF32; F64x2Splat; Set V15

// STOREACC stores V11..V14 and lane 0 of V15 back (LOADACC's layout).
#define STOREACC \
	Get R3; I32WrapI64; Get V11; F32x4DemoteF64x2Zero; I64x2ExtractLane $0, $0; I64Store $0; \
	Get R3; I32WrapI64; Get V12; F32x4DemoteF64x2Zero; I64x2ExtractLane $0, $0; I64Store $8; \
	Get R3; I32WrapI64; Get V13; F32x4DemoteF64x2Zero; I64x2ExtractLane $0, $0; I64Store $16; \
	Get R3; I32WrapI64; Get V14; F32x4DemoteF64x2Zero; I64x2ExtractLane $0, $0; I64Store $24; \
	Get R3; I32WrapI64; Get V15; F64x2ExtractLane $0, $0; F32DemoteF64; F32Store $32

// LANES8 accumulates the int32 lanes 0..3 in lo and 4..7 in hi, times the
// f64x2 d, into V11..V14 (FMA2, scratch V2, V3, V4, V8).
#define LANES8(lo, hi, d) \
	Get lo; F64x2ConvertLowI32x4S; Get d; F64x2Mul; Set V2; FMA2(V2, V11, V3, V4, V8); \
	Get lo; I64x2ExtractLane $0, $1; I64x2Splat; F64x2ConvertLowI32x4S; Get d; F64x2Mul; Set V2; FMA2(V2, V12, V3, V4, V8); \
	Get hi; F64x2ConvertLowI32x4S; Get d; F64x2Mul; Set V2; FMA2(V2, V13, V3, V4, V8); \
	Get hi; I64x2ExtractLane $0, $1; I64x2Splat; F64x2ConvertLowI32x4S; Get d; F64x2Mul; Set V2; FMA2(V2, V14, V3, V4, V8)

// DOT16P pushes the int32 lanes of Σ q·y over 16 weights (lane m: weights
// 4m..4m+3): the quants 0..255 in the bytes of V5 (V0 the int16 mask
// 0x00ff) against the activations prepared by splitQ8_K at R12+p (their
// even and odd bytes as int16 lanes, dotrows_wasm.s).
#define DOT16P(p) \
	Get V5; Get V0; V128And; Get R12; I32WrapI64; V128Load $(p); I32x4DotI16x8S; \
	Get V5; I32Const $8; I16x8ShrU; Get R12; I32WrapI64; V128Load $(p+16); I32x4DotI16x8S; \
	I32x4Add

// DOT16SP is DOT16P for int8 quants.
#define DOT16SP(p) \
	EVEN(V5); Get R12; I32WrapI64; V128Load $(p); I32x4DotI16x8S; \
	ODD(V5); Get R12; I32WrapI64; V128Load $(p+16); I32x4DotI16x8S; \
	I32x4Add

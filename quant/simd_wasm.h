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

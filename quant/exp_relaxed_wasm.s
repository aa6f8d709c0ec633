//go:build goexperiment.simd && relaxedsimd

#include "textflag.h"
#include "simd_wasm.h"
#include "relaxed_wasm.h"

// The exponentials of SwiGLU and softmax in the relaxedsimd build
// (exp_relaxed_wasm.go): expfV, ggml_v_expf's lane, four lanes at a time
// with f32x4.relaxed_madd for its fused multiply-adds. web/picolm.js runs
// this build only where relaxed_madd is fused (its probe), and there each
// lane is expfV's bits: the same operations in the same order, each fused
// multiply-add rounded once. (The SIMD128 build emulates them exactly in
// f64x2, two lanes at a time: vec_wasm.go.) A group of four whose n is
// beyond ±126 in some lane (e^x near or past the ends of float32, or a NaN)
// stops the kernel before it is stored; the caller computes that group by
// expfV and calls again after it.

#define SPLAT(c) V128Const $(c), $(c)

// EXPV sets V13 to expfV of the lanes of V12 where |n| ≤ 126 (then 2^n is a
// float32 normal, built from z's bits as ggml's AVX2 form does, and j·2^n
// rounds once, as VSCALEFPS) and V11 to n; V10 and V14 are scratch.
//   z = fma(x, log2e, 1.5·2^23); n = z − 1.5·2^23
//   b = fma(−n, ln2lo, fma(−n, ln2hi, x)); u = b·b
//   j = fma(fma(fma(c5, b, c4), u, fma(c3, b, c2)), u, fma(c1, b, 1))
#define EXPV \
	Get V12; SPLAT(0x3fb8aa3b3fb8aa3b); SPLAT(0x4b4000004b400000); RMADD; Set V10; \
	Get V10; SPLAT(0x4b4000004b400000); F32x4Sub; Set V11; \
	Get V11; F32x4Neg; SPLAT(0x3f3172003f317200); Get V12; RMADD; Set V13; \
	Get V11; F32x4Neg; SPLAT(0x35bfbe8e35bfbe8e); Get V13; RMADD; Set V13; \
	Get V13; Get V13; F32x4Mul; Set V14; \
	SPLAT(0x3c0720103c072010); Get V13; SPLAT(0x3d2b9f173d2b9f17); RMADD; \
	Get V14; \
	SPLAT(0x3e2aaf333e2aaf33); Get V13; SPLAT(0x3efffedb3efffedb); RMADD; \
	RMADD; \
	Get V14; \
	SPLAT(0x3f7ffff63f7ffff6); Get V13; SPLAT(0x3f8000003f800000); RMADD; \
	RMADD; \
	Get V10; I32Const $23; I32x4Shl; SPLAT(0x3f8000003f800000); I32x4Add; \
	F32x4Mul; Set V13

// INRANGE pushes whether |n| ≤ 126 in every lane of V11 (false for a NaN).
#define INRANGE Get V11; F32x4Abs; SPLAT(0x42fc000042fc0000); F32x4Le; I32x4AllTrue

// func swigluRelaxed4(gate, up *float32, n int) int
// sets gate[i] = gate[i]/(1+expfV(0−gate[i]))·up[i] four at a time for
// i < n (a multiple of 4) up to the first group with a lane out of range;
// returns the elements done.
TEXT ·swigluRelaxed4(SB), NOSPLIT, $0-32
	I64Load gate+0(FP); Set R0
	I64Load up+8(FP); Set R1
	I64Load n+16(FP); I64Const $2; I64ShrU; Set R2
	I64Const $0; Set R3
	Block
	Get R2
	I64Eqz
	BrIf $0
	Loop
		Get R0; I32WrapI64; V128Load $0; Set V15
		V128Const $0, $0; Get V15; F32x4Sub; Set V12
		EXPV
		INRANGE; I32Eqz; BrIf $1
		Get R0; I32WrapI64
		Get V15; SPLAT(0x3f8000003f800000); Get V13; F32x4Add; F32x4Div
		Get R1; I32WrapI64; V128Load $0; F32x4Mul
		V128Store $0, $0
		ADD(R0, 16)
		ADD(R1, 16)
		ADD(R3, 4)
		COUNTDOWN(R2)
	End
	End
	Get SP
	Get R3
	I64Store ret+24(FP)
	RET

// EXPQ sets vector vr to expfV(x[off..off+3] − m) (V9 holds m), and
// leaves the kernel's Block when a lane is out of range.
#define EXPQ(off, vr) \
	Get R0; I32WrapI64; V128Load $(off); Get V9; F32x4Sub; Set V12; \
	EXPV; \
	INRANGE; I32Eqz; BrIf $1; \
	Get V13; Set vr

// func expShiftRelaxed16(x *float32, m float32, blocks int, sum float64) (done int, s float64)
// sets x[i] = expfV(x[i]−m) and adds each block of 16's reduce16 to sum,
// as expShiftRef does, for the blocks of x up to the first with a lane out
// of range (left as it was); returns the blocks done and the sum.
TEXT ·expShiftRelaxed16(SB), NOSPLIT, $0-48
	I64Load x+0(FP); Set R0
	F32Load m+8(FP); F32x4Splat; Set V9
	I64Load blocks+16(FP); Set R2
	F64Load sum+24(FP); Set F16
	I64Const $0; Set R3
	Block
	Get R2
	I64Eqz
	BrIf $0
	Loop
		EXPQ(0, V0)
		EXPQ(16, V1)
		EXPQ(32, V2)
		EXPQ(48, V3)
		Get R0; I32WrapI64; Get V0; V128Store $0, $0
		Get R0; I32WrapI64; Get V1; V128Store $0, $16
		Get R0; I32WrapI64; Get V2; V128Store $0, $32
		Get R0; I32WrapI64; Get V3; V128Store $0, $48
		// reduce16: q = (v[0:4]+v[8:12]) + (v[4:8]+v[12:16]), then
		// (q0+q2) + (q1+q3), added to the sum in float64
		Get V0; Get V2; F32x4Add; Get V1; Get V3; F32x4Add; F32x4Add; Set V4
		Get V4; F32x4ExtractLane $0, $0; Get V4; F32x4ExtractLane $0, $2; F32Add
		Get V4; F32x4ExtractLane $0, $1; Get V4; F32x4ExtractLane $0, $3; F32Add
		F32Add
		F64PromoteF32
		Get F16; F64Add; Set F16
		ADD(R0, 64)
		ADD(R3, 1)
		COUNTDOWN(R2)
	End
	End
	Get SP
	Get R3
	I64Store done+32(FP)
	Get SP
	Get F16
	F64Store s+40(FP)
	RET

//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"
#include "kkq_wasm.h"

// The wasm SIMD128 DotRowsN kernel of Q3_K (q3_k_wasm.go; the reference is
// dotQ3_KRef): KROWSN (kkq_wasm.h) with Q3_K's decoder. A chunk t's
// weights (as q3KDotRows decodes them: the two low bits less 4 where the
// inverted high bit is set, signed bytes) times their scale (the 6-bit
// scale less 32, |q·s| ≤ 128) as int16 lanes, even then odd; the float
// part one fused multiply-add a lane and block with yd·d.
//
// decoder registers: R7, R8 the scales (plus 32, bytes), V6 0x03, V7 0x04
// bytes, V0, V1 the inverted hmask, V2, V3 32 qs bytes, V4 a scale, V5 16
// quants.

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
	KACTS(0, KSTORELANES); \
	Q3G(1, 32, R7, 2, SHR4, NOSH, SHR6, SHR1); \
	KACTS(1, KADDLANES); \
	Q3G(2, 64, R8, 0, NOSH, SHR2, SHR2, SHR3); \
	KACTS(2, KADDLANES); \
	Q3G(3, 64, R8, 2, SHR4, SHR4, SHR6, SHR5); \
	KACTS(3, KADDLANES)

#define Q3D KYD; KTAB(R0, 108); F32Mul
#define Q3FLOAT KFMAL(Q3D, 0)
#define NOPRE

// func q3KRowsN(x *byte, nb, rows int, yp *byte, k int, yd, tab *float32, st *byte, out *float32)
TEXT ·q3KRowsN(SB), NOSPLIT, $0-72
	KROWSN(110, Q3BLOCKN, NOPRE, Q3FLOAT)
	RET

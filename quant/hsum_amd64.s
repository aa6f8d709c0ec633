//go:build goexperiment.simd

#include "textflag.h"

// func hsumX86Asm(v *[8]float32) float32
//
// hsumX86 of v's lanes: t_k = v_k + v_{k+4}, then (t0+t2) + (t1+t3), as
// ggml's hsum_float_8. It ends with VZEROUPPER: Go compiles its scalar
// float32 maths to legacy-SSE instructions, and each of them that runs with
// the upper halves of the vector registers in use costs hundreds of cycles
// on Intel cores; code compiled from archsimd never clears them itself, and
// archsimd.ClearAVXUpperBits is scheduled freely among the scalar extracts.
TEXT ·hsumX86Asm(SB), NOSPLIT, $0-12
	MOVQ v+0(FP), AX
	VMOVUPS (AX), Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0     // t
	VPERMILPS $0x0e, X0, X1 // t2, t3 in lanes 0, 1
	VADDPS X1, X0, X0     // t0+t2, t1+t3
	VMOVSHDUP X0, X1
	VADDSS X1, X0, X0
	VZEROUPPER
	VMOVSS X0, ret+8(FP)
	RET

//go:build goexperiment.simd

#include "textflag.h"
#include "simd_wasm.h"

// The integer part of the wasm SIMD128 Q8_0 dot (dotQ8_0SIMD128 in
// q8_0_wasm.go), written by hand like q4_k_wasm.s (see there for the
// two-operand lane instructions). The quants and the int8 activations are
// split into their even and odd bytes as int16 lanes and multiplied and
// added in pairs by i32x4.dot_i16x8_s: a product is at most 16384 in
// magnitude ((-128)²), a block's lane at most 8 of them, so the lane sums
// are the exact integer sums of the reference. (The same for Q4_0 was no
// faster under Node than q4_0_wasm.go's archsimd code.)

// register use:
//	R0 weight block, R1 activation block, R2 blocks left, R3 output
//	V2 weights, V3 activations, V5 the block's sum

// STORESUM stores the sum of the lanes of V5 at R3 and moves R0, R1, R2
// and R3 on by one block, looping while blocks are left.
#define STORESUM(xsize) \
	Get R3; I32WrapI64; HSUM(V5); I32Store $0; \
	ADD(R0, xsize); \
	ADD(R1, 34); \
	ADD(R3, 4); \
	COUNTDOWN(R2)

#define ARGS \
	I64Load x+0(FP); Set R0; \
	I64Load y+8(FP); Set R1; \
	I64Load nb+16(FP); Set R2; \
	I64Load out+24(FP); Set R3

// func q8_0IntSums(x, y *byte, nb int, out *[q8_0Chunk]int32)
TEXT ·q8_0IntSums(SB), NOSPLIT, $0-32
	ARGS
	Block
	Get R2
	I64Eqz
	BrIf $0
	Loop
		Get R0; I32WrapI64; V128Load $2; Set V2
		Get R1; I32WrapI64; V128Load $2; Set V3
		EVEN(V2); EVEN(V3); I32x4DotI16x8S
		ODD(V2); ODD(V3); I32x4DotI16x8S; I32x4Add
		Get R0; I32WrapI64; V128Load $18; Set V2
		Get R1; I32WrapI64; V128Load $18; Set V3
		EVEN(V2); EVEN(V3); I32x4DotI16x8S; I32x4Add
		ODD(V2); ODD(V3); I32x4DotI16x8S; I32x4Add
		Set V5
		STORESUM(34)
	End
	End
	RET

//go:build goexperiment.simd

#include "go_asm.h"
#include "textflag.h"

// The AVX-512 VNNI DotRowsN kernel of IQ4_XS (dotRowsNIQ4_XSVNNI in
// iq4_xs_vnni_amd64.go; the reference is dotIQ4_XSRef, in ggml's x86
// order). A block's weights, level·(scale-32) (|·| ≤ 127·32), are int16,
// and so are the activations (iq4XSPrepVNNI widens them); VPMADDWD and
// VPDPWSSD (exact int32, no saturation) then add the products of a block
// with one activation in eight vectors. The weights and the activations
// are in the same order, chosen so that dword d of every vector holds
// products of the reference's lane d%8 only: vector 2p+t, dword d holds
// weights 32j+4(d%8)+2t and the next, j = 2p+d/8. The two halves added,
// a vector's dwords are the block's eight int32 lanes; converted and
// multiplied by d = float32(dx·yd) they go into the activation's eight
// float32 running sums by VFMADD (fma32), as the reference does.

// func iq4XSPrepVNNI(y *byte, dst *[8][32]int16, k *iq4VConsts)
TEXT ·iq4XSPrepVNNI(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), SI
	MOVQ dst+8(FP), DI
	MOVQ k+16(FP), AX
	VMOVDQU64 iq4VConsts_act0(AX), Z28
	VMOVDQU64 iq4VConsts_act1(AX), Z29
#define PREP(p) \
	VPMOVSXBW (4+64*p)(SI), Z1; \
	VPMOVSXBW (36+64*p)(SI), Z2; \
	VMOVDQA64 Z1, Z3; \
	VPERMT2W Z2, Z28, Z1; \
	VPERMT2W Z2, Z29, Z3; \
	VMOVDQU64 Z1, (128*p)(DI); \
	VMOVDQU64 Z3, (128*p+64)(DI)
	PREP(0)
	PREP(1)
	PREP(2)
	PREP(3)
	VZEROUPPER
	RET

// LEVELS(p, s, w0, w1) decodes the weights of sub-blocks 2p and 2p+1 into
// w0, w1 (vectors 2p, 2p+1), s their scales' vector: the 32 nibble bytes,
// low nibbles then high, looked up (VPSHUFB), put in vector order (VPERMB),
// widened and multiplied by the scales.
#define LEVELS(p, s, w0, w1) \
	VMOVDQU (8+32*p)(SI), Y1; \
	VPSRLW $4, Y1, Y2; \
	VINSERTI64X4 $1, Y2, Z1, Z1; \
	VPANDD Z26, Z1, Z1; \
	VPSHUFB Z1, Z24, Z1; \
	VPERMB Z1, Z25, Z1; \
	VPMOVSXBW Y1, Z2; \
	VEXTRACTI64X4 $1, Z1, Y3; \
	VPMOVSXBW Y3, Z3; \
	VPMULLW s, Z2, w0; \
	VPMULLW s, Z3, w1

// func iq4XSBlockVNNI(x *byte, b *iq4Batch, acc *archsimd.Float32x8, na int, k *iq4VConsts)
TEXT ·iq4XSBlockVNNI(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ acc+16(FP), R10
	MOVQ na+24(FP), CX
	MOVQ k+32(FP), AX
	LEAQ iq4Batch_yd(DI), R8
	VMOVDQU64 iq4VConsts_lev(AX), Z24
	VMOVDQU64 iq4VConsts_permB(AX), Z25
	MOVL $0x0f0f0f0f, BX
	VPBROADCASTD BX, Z26
	VMOVDQU64 (iq4VConsts_sidx+0)(AX), Z28
	VMOVDQU64 (iq4VConsts_sidx+64)(AX), Z29
	VMOVDQU64 (iq4VConsts_sidx+128)(AX), Z30
	VMOVDQU64 (iq4VConsts_sidx+192)(AX), Z31
	// the scales minus 32, words 0..7 of Z0
	VPBROADCASTD 4(SI), Y0
	VPSRLVD iq4VConsts_shl(AX), Y0, Y0
	VPANDD iq4VConsts_m0f(AX), Y0, Y0
	MOVWLZX 2(SI), BX
	VPBROADCASTD BX, Y1
	VPSRLVD iq4VConsts_shh(AX), Y1, Y1
	VPANDD iq4VConsts_m3(AX), Y1, Y1
	VPSLLD $4, Y1, Y1
	VPORD Y1, Y0, Y0
	VPSUBD iq4VConsts_c32(AX), Y0, Y0
	VPMOVDW Y0, X0
	VPERMW Z0, Z28, Z4
	VPERMW Z0, Z29, Z5
	VPERMW Z0, Z30, Z6
	VPERMW Z0, Z31, Z7
	LEVELS(0, Z4, Z16, Z17)
	LEVELS(1, Z5, Z18, Z19)
	LEVELS(2, Z6, Z20, Z21)
	LEVELS(3, Z7, Z22, Z23)
	// dx in every lane of Y27
	VPBROADCASTW 0(SI), X5
	VCVTPH2PS X5, Y27
	TESTQ CX, CX
	JZ iq4done
iq4act:
	VPMADDWD 0(DI), Z16, Z0
	VPMADDWD 64(DI), Z17, Z1
	VPDPWSSD 128(DI), Z18, Z0
	VPDPWSSD 192(DI), Z19, Z1
	VPDPWSSD 256(DI), Z20, Z0
	VPDPWSSD 320(DI), Z21, Z1
	VPDPWSSD 384(DI), Z22, Z0
	VPDPWSSD 448(DI), Z23, Z1
	VPADDD Z1, Z0, Z0
	VEXTRACTI64X4 $1, Z0, Y1
	VPADDD Y1, Y0, Y0
	VCVTDQ2PS Y0, Y0
	VBROADCASTSS (R8), Y2
	VMULPS Y2, Y27, Y2
	VMOVUPS (R10), Y3
	VFMADD231PS Y0, Y2, Y3
	VMOVUPS Y3, (R10)
	ADDQ $512, DI
	ADDQ $4, R8
	ADDQ $32, R10
	DECQ CX
	JNZ iq4act
iq4done:
	VZEROUPPER
	RET

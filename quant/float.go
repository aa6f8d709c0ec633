package quant

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// The unquantised formats, one element per "block":
//
//	F32:  float32 little-endian, 4 bytes, 32 bits per weight
//	F16:  IEEE binary16 little-endian, 2 bytes, 16 bits per weight
//	BF16: bfloat16 (top half of a binary32) little-endian, 2 bytes, 16 bits per weight
//
// Their dots take activations in the same format and sum in the order of
// ggml's x86 AVX2 build (ggml_vec_dot_f32, _f16 and _bf16 with
// GGML_F32_STEP = GGML_F16_STEP = 32 and eight-lane vectors): the elements
// below np = n - n%32 go to 32 float32 running sums, sum k over the
// products k, k+32, k+64, …, reduced as laneSum32 (F32, F16) or
// laneSum32BF16 (BF16) says; the last n%32 products are added after,
// one by one. This is the order llama.cpp runs for these weights in decode
// (one activation; its prefill takes llamafile's tinyBLAS, another order),
// and the one every kernel here computes, bit for bit, so that the SIMD
// kernels (four or eight lanes wide) need no float64 and agree with the
// portable ones.
//
// An F16 or BF16 product is exact in float32 (two 11- or 8-bit
// significands), so fused and unfused multiply-adds give the same bits.
// An F32 product is not: ggml's FMA builds fuse it, its AVX builds without
// FMA do not. Ours do not (WebAssembly SIMD has no deterministic fused
// multiply-add): the F32 dot is the AVX build's.

func dequantizeF32(dst []float32, src []byte) {
	src = src[:4*len(dst)]
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

func fromFloatF32(dst []byte, src []float32) {
	dst = dst[:4*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}

// dotF32Ref is ggml_vec_dot_f32 of the AVX build (no FMA): 32 running
// sums of the rounded products, laneSum32, then the last n%32 products
// added one by one, in float32.
func dotF32Ref(n int, w, act []byte) float32 {
	w, act = w[:4*n], act[:4*n]
	var s [32]float32
	np := n &^ 31
	for i := 0; i < np; i += 32 {
		for k := range s {
			s[k] += float32(f32At(w[4*(i+k):]) * f32At(act[4*(i+k):])) // rounded: not fused
		}
	}
	sum := laneSum32(&s)
	for i := np; i < n; i++ {
		sum += float32(f32At(w[4*i:]) * f32At(act[4*i:]))
	}
	return sum
}

// laneSum32 reduces 32 running sums as GGML_F32x8_REDUCE does for four
// eight-lane vectors v0..v3 holding sums 0-7, 8-15, 16-23, 24-31:
// (v0+v2) + (v1+v3), the halves of that added (laneHalves32), then
// (t0+t1) + (t2+t3) (two horizontal adds).
func laneSum32(s *[32]float32) float32 {
	t := laneHalves32(s)
	return (t[0] + t[1]) + (t[2] + t[3])
}

// laneSum32BF16 reduces 32 running sums as ggml_vec_dot_bf16's AVX2 path
// does: t as in laneSum32, then (t0+t2) + (t1+t3).
func laneSum32BF16(s *[32]float32) float32 {
	t := laneHalves32(s)
	return (t[0] + t[2]) + (t[1] + t[3])
}

// laneHalves32 returns t[l] = v[l] + v[l+4] for l < 4, where v[j] =
// (s[j] + s[16+j]) + (s[8+j] + s[24+j]).
func laneHalves32(s *[32]float32) (t [4]float32) {
	for l := range t {
		t[l] = ((s[l] + s[16+l]) + (s[8+l] + s[24+l])) + ((s[4+l] + s[20+l]) + (s[12+l] + s[28+l]))
	}
	return t
}

func dequantizeF16(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = FP16ToFP32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

func fromFloatF16(dst []byte, src []float32) {
	dst = dst[:2*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], FP32ToFP16(v))
	}
}

// dotF16Ref is ggml_vec_dot_f16 of the AVX2 build: 32 running sums,
// laneSum32, widened to float64, then the last n%32 products added in
// float64, and the sum rounded to float32.
func dotF16Ref(n int, w, act []byte) float32 {
	w, act = w[:2*n], act[:2*n]
	var s [32]float32
	np := n &^ 31
	for i := 0; i < np; i += 32 {
		for k := range s {
			s[k] += fp16At(w[2*(i+k):]) * fp16At(act[2*(i+k):]) // exact product
		}
	}
	sum := float64(laneSum32(&s))
	for i := np; i < n; i++ {
		sum += float64(fp16At(w[2*i:]) * fp16At(act[2*i:]))
	}
	return float32(sum)
}

func dequantizeBF16(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = BF16ToFP32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

func fromFloatBF16(dst []byte, src []float32) {
	dst = dst[:2*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], FP32ToBF16(v))
	}
}

// dotBF16Ref is ggml_vec_dot_bf16 of the AVX2 build: 32 running sums,
// laneSum32BF16, widened to float64, then the last n%32 products added in
// float64, and the sum rounded to float32.
func dotBF16Ref(n int, w, act []byte) float32 {
	w, act = w[:2*n], act[:2*n]
	var s [32]float32
	np := n &^ 31
	for i := 0; i < np; i += 32 {
		for k := range s {
			s[k] += bf16At(w[2*(i+k):]) * bf16At(act[2*(i+k):]) // exact product
		}
	}
	sum := float64(laneSum32BF16(&s))
	for i := np; i < n; i++ {
		sum += float64(bf16At(w[2*i:]) * bf16At(act[2*i:]))
	}
	return float32(sum)
}

// bf16At reads the bfloat16 value at b[0:2] as a float32.
func bf16At(b []byte) float32 { return BF16ToFP32(binary.LittleEndian.Uint16(b)) }

// F32Bytes returns the bytes of v, its F32 encoding (Go's wasm and amd64
// and arm64 targets are little-endian), without copying: the activation of
// an F32 dot, or a float32 buffer to hand on as bytes.
func F32Bytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*4)
}

// fp16At reads the binary16 value at b[0:2] as a float32.
func fp16At(b []byte) float32 { return FP16ToFP32(binary.LittleEndian.Uint16(b)) }

// f32At reads the little-endian float32 at b[0:4].
func f32At(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

// putFP16 stores f at b[0:2] as binary16.
func putFP16(b []byte, f float32) { binary.LittleEndian.PutUint16(b, FP32ToFP16(f)) }

// absf is fabsf.
func absf(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// roundf rounds half away from zero, like C's roundf.
func roundf(x float32) float32 { return float32(math.Round(float64(x))) }

// laneSum8 reduces eight running sums as ggml's hsum_float_8 does: the
// halves of the vector added, t = s[0:4]+s[4:8], then (t0+t2) + (t1+t3).
func laneSum8(s *[8]float32) float32 {
	return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))
}

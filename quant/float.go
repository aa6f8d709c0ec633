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
// Their dots take activations in the same format and, like ggml's scalar
// code, accumulate the float32 products in float64.

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

func dotF32(n int, w, act []byte) float32 {
	w, act = w[:4*n], act[:4*n]
	var sum float64
	for i := 0; i < 4*n; i += 4 {
		x := math.Float32frombits(binary.LittleEndian.Uint32(w[i:]))
		y := math.Float32frombits(binary.LittleEndian.Uint32(act[i:]))
		sum += float64(x * y)
	}
	return float32(sum)
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

// dotF16Ref is ggml_vec_dot_f16 without SIMD.
func dotF16Ref(n int, w, act []byte) float32 {
	w, act = w[:2*n], act[:2*n]
	var sum float64
	for i := 0; i < 2*n; i += 2 {
		x := FP16ToFP32(binary.LittleEndian.Uint16(w[i:]))
		y := FP16ToFP32(binary.LittleEndian.Uint16(act[i:]))
		sum += float64(x * y) // exact: two 11-bit significands
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

func dotBF16(n int, w, act []byte) float32 {
	w, act = w[:2*n], act[:2*n]
	var sum float64
	for i := 0; i < 2*n; i += 2 {
		x := BF16ToFP32(binary.LittleEndian.Uint16(w[i:]))
		y := BF16ToFP32(binary.LittleEndian.Uint16(act[i:]))
		sum += float64(x * y) // exact: two 8-bit significands
	}
	return float32(sum)
}

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

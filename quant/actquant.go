package quant

import "math"

// The activation quantizers that ggml's CPU backend runs on x86 (the AVX2
// quantize_row_q8_0 / quantize_row_q8_1 and the repacked Q4_0 path's
// quantize_mat_q8_0), which the llama.cpp references were made with. They
// differ from ggml's scalar reference quantizers (FromFloat of Q8_0 and
// Q8_1) in two ways:
//
//   - the inverse scale is 127/amax, not 1/(amax/127): the two can differ in
//     the last bit, and so can x·id;
//   - x·id is rounded half to even (_mm256_round_ps), not half away from zero.
//
// Either way a few values per million land one step apart. In a quantized
// model that one step grows through the layers (every later activation is
// quantized again) into logit differences of ~0.1, enough to change greedy
// tokens, so the engine quantizes its activations as the references did.

// QuantizeActQ8_0 quantizes src (a whole number of 32-blocks) into Q8_0
// blocks in dst, as ggml's x86 CPU backend quantizes activations.
func QuantizeActQ8_0(dst []byte, src []float32) { table.vec.quantizeAct(dst, src, q8_0Bytes) }

// QuantizeActQ8_1 quantizes src (a whole number of 32-blocks) into Q8_1
// blocks in dst, as ggml's x86 CPU backend quantizes activations.
func QuantizeActQ8_1(dst []byte, src []float32) { table.vec.quantizeAct(dst, src, q8_1Bytes) }

// q8MaxLevel is the largest quant of the activation formats.
const q8MaxLevel = 127

// quantizeActGo is the portable activation quantizer: the blocks of size
// bytes (Q8_0 or Q8_1) of dst from src, one by one by quantizeActBlockRef.
func quantizeActGo(dst []byte, src []float32, size int) {
	for b := range len(src) / qk {
		quantizeActBlockRef(dst[b*size:(b+1)*size], src[b*qk:(b+1)*qk])
	}
}

// quantizeActBlockRef quantizes the 32 values of x into the Q8_0 or Q8_1
// block blk (by its size): round_half_even(x·127/amax) into its quants,
// the scale amax/127 and, for Q8_1, the scale times the sum of the quants,
// both rounded to fp16. It returns the scale and the sum unrounded.
func quantizeActBlockRef(blk []byte, x []float32) (d float32, sum int32) {
	qs, x := blk[len(blk)-qk:], x[:qk]
	var amax float32
	for _, v := range x {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	d = amax / q8MaxLevel
	var id float32
	if amax != 0 {
		id = q8MaxLevel / amax
	}
	for j, v := range x {
		q := math.RoundToEven(float64(v * id))
		q = max(-128, min(127, q)) // the SIMD code packs with saturation
		if q != q {
			q = 0 // NaN input: keep the block decodable
		}
		qs[j] = byte(int8(q))
		sum += int32(int8(q))
	}
	putActScales(blk, d, sum)
	return d, sum
}

// putActScales stores the scale d of a Q8_0 or Q8_1 block blk (by its
// size) and, for Q8_1, d·sum.
func putActScales(blk []byte, d float32, sum int32) {
	putFP16(blk, d)
	if len(blk) == q8_1Bytes {
		putFP16(blk[2:], d*float32(sum))
	}
}

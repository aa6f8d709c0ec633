package engine

import (
	"encoding/binary"
	"math"

	"github.com/picolm/picolm-wasm/quant"
)

// The activation quantizers that ggml's CPU backend runs on x86 (the AVX2
// quantize_row_q8_0 / quantize_row_q8_1 and the repacked Q4_0 path's
// quantize_mat_q8_0), which the llama.cpp references were made with. They
// differ from ggml's scalar reference quantizers (quant's FromFloat for Q8_0
// and Q8_1) in two ways:
//
//   - the inverse scale is 127/amax, not 1/(amax/127): the two can differ in
//     the last bit, and so can x·id;
//   - x·id is rounded half to even (_mm256_round_ps), not half away from zero.
//
// Either way a few values per million land one step apart. In a quantized
// model that one step grows through the layers (every later activation is
// quantized again) into logit differences of ~0.1, enough to change greedy
// tokens, so the engine quantizes its activations as the references did.
//
// Block layouts (see quant): Q8_0 is fp16 d, 32 × int8; Q8_1 is fp16 d,
// fp16 s = d·Σq, 32 × int8.

const (
	actBlock   = 32
	q8_0Bytes  = 2 + actBlock
	q8_1Bytes  = 4 + actBlock
	q8MaxLevel = 127
)

// quantizeQ8_0CPU quantizes src (a whole number of 32-blocks) into Q8_0
// blocks in dst.
func quantizeQ8_0CPU(dst []byte, src []float32) {
	for b := 0; b < len(src)/actBlock; b++ {
		blk := dst[b*q8_0Bytes : (b+1)*q8_0Bytes]
		d, _ := quantizeBlockVec(blk[2:], src[b*actBlock:(b+1)*actBlock])
		binary.LittleEndian.PutUint16(blk, quant.FP32ToFP16(d))
	}
}

// quantizeQ8_1CPU quantizes src (a whole number of 32-blocks) into Q8_1
// blocks in dst.
func quantizeQ8_1CPU(dst []byte, src []float32) {
	for b := 0; b < len(src)/actBlock; b++ {
		blk := dst[b*q8_1Bytes : (b+1)*q8_1Bytes]
		d, sum := quantizeBlockVec(blk[4:], src[b*actBlock:(b+1)*actBlock])
		binary.LittleEndian.PutUint16(blk, quant.FP32ToFP16(d))
		binary.LittleEndian.PutUint16(blk[2:], quant.FP32ToFP16(d*float32(sum)))
	}
}

// quantizeBlockCPU writes round_half_even(x·127/amax) for the 32 values of x
// into qs and returns the scale amax/127 and the sum of the quants.
func quantizeBlockCPU(qs []byte, x []float32) (d float32, sum int32) {
	qs, x = qs[:actBlock], x[:actBlock]
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
	return d, sum
}

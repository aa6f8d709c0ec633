package quant

import (
	"encoding/binary"
	"math"
)

// The codebook formats' references (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS,
// IQ3_S) sum in the order of ggml's AVX2 kernels, which llama.cpp runs on
// x86 (see iq3Lanes in iq3_xxs.go): per block eight exact int32 lane sums,
// each scaled and added to its own float32 running sum (iqAccumulate), the
// eight sums reduced at the end as hsum_float_8 (laneSum8).
//
// The scaling is a product and a sum, each rounded (VMULPS, VADDPS: ggml's
// AVX kernels), not the fused multiply-add of its AVX2 kernels
// (VFMADD231PS). The llama.cpp references (node-llama-cpp 3.21.1 on an AMD
// EPYC Zen 4, engine/testdata/format-refs.jsonl) agree with the unfused
// sums on every IQ2_S and IQ3_S prompt and diverge from the fused ones
// (IQ2_S at a margin of 0.12); which build variant they ran is not
// recorded.

// iqAccumulate adds float32(d·lanes[k]) to acc[k], the product and the sum
// each rounded to float32.
func iqAccumulate(acc *[8]float32, d float32, lanes *[8]int32) {
	for k := range acc {
		acc[k] += float32(d * float32(lanes[k]))
	}
}

// q8KView returns the scale and quants of Q8_K block b of act.
func q8KView(act []byte, b int) (float32, *[qkK]byte) {
	yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
	return math.Float32frombits(binary.LittleEndian.Uint32(yb[:])), (*[qkK]byte)(yb[4:])
}

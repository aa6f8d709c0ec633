package quant

import (
	"encoding/binary"
	"math"
)

// The codebook formats' references (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS,
// IQ3_S) sum in the order of ggml's AVX2 kernels, which llama.cpp runs on
// x86 (see iq3Lanes in iq3_xxs.go): per block eight exact int32 lane sums,
// each scaled and added to its own float32 running sum with one fused
// multiply-add (iqAccumulate), the eight sums reduced at the end as
// hsum_float_8 (laneSum8).

// iqAccumulate adds d·lanes[k] to acc[k] with one rounding each, as
// VFMADD231PS does: acc = fma(d, float32(lanes), acc).
func iqAccumulate(acc *[8]float32, d float32, lanes *[8]int32) {
	for k := range acc {
		acc[k] = fma32(d, float32(lanes[k]), acc[k])
	}
}

// q8KView returns the scale and quants of Q8_K block b of act.
func q8KView(act []byte, b int) (float32, *[qkK]byte) {
	yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
	return math.Float32frombits(binary.LittleEndian.Uint32(yb[:])), (*[qkK]byte)(yb[4:])
}

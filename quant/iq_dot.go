package quant

import (
	"encoding/binary"
	"math"
	"unsafe"
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

// iqDeltaSum returns IQ1_S's Σ_ib c[ib]·(bsum 2ib + bsum 2ib+1) of the
// Q8_K block y (c: the sub-blocks' delta factors (2s+1)·(±1)).
func iqDeltaSum(c *[8]int32, y *[q8_KBytes]byte) int32 {
	var s int32
	for ib, f := range c {
		s += f * (bsum(y[4+qkK:], 2*ib) + bsum(y[4+qkK:], 2*ib+1))
	}
	return s
}

// iq1sGridBytes returns the eight int8 values of an IQ1_S grid point as
// bytes (two's complement), for word loads.
func iq1sGridBytes(g *[8]int8) *[8]byte { return (*[8]byte)(unsafe.Pointer(g)) }

// iqSize returns the block size in bytes of the codebook format t (the
// SIMD kernels' dispatch; reading the traits table there would be an
// initialisation cycle).
func iqSize(t Type) int {
	switch t {
	case IQ3_S:
		return iq3_SBytes
	case IQ3_XXS:
		return iq3_XXSBytes
	case IQ2_XXS:
		return iq2_XXSBytes
	case IQ2_XS:
		return iq2_XSBytes
	case IQ2_S:
		return iq2_SBytes
	case IQ1_S:
		return iq1_SBytes
	}
	return iq1_MBytes
}

//go:build goexperiment.simd && (wasm || amd64)

package quant

import (
	"simd/archsimd"
	"unsafe"
)

// Helpers of the codebook and ternary formats' platform kernels
// (iqk_amd64.go, iqk_wasm.go, tq1_0_amd64.go, tq1_0_wasm.go).

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

// tq1High returns the 16 bytes whose byte 4n+j is byte j of TQ1_0's qh
// (the little-endian word v) times 3ⁿ, modulo 256: trit n of it is the
// trit of weight 240+4n+j.
func tq1High(v uint32) archsimd.Uint8x16 {
	q := archsimd.BroadcastUint32x4(v).ReshapeToUint8s()
	q3 := q.Add(q).Add(q)
	q9 := q3.Add(q3).Add(q3)
	q27 := q9.Add(q9).Add(q9)
	word := func(v archsimd.Uint8x16, k uint8) uint32 { return v.ReshapeToUint32s().GetElem(k) }
	return q.ReshapeToUint32s().SetElem(1, word(q3, 1)).SetElem(2, word(q9, 2)).SetElem(3, word(q27, 3)).ReshapeToUint8s()
}

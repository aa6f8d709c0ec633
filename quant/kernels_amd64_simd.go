//go:build goexperiment.simd && amd64

package quant

import "simd/archsimd"

// Helpers of the native amd64 kernels (the *_amd64_simd.go files, AVX2 with
// GOEXPERIMENT=simd). Each kernel falls back to the readable reference on
// CPUs without AVX2, and computes the same as the portable twin in the
// matching *_scalar.go file; simd_test.go checks them against each other.
// Unlike wasm SIMD128, AVX2 has the widening dot products VPMADDUBSW
// (uint8×int8 pairs, DotProductPairsSaturated) and VPMADDWD (int16 pairs,
// DotProductPairs); every use below stays clear of VPMADDUBSW's saturation.

var hasAVX2 = archsimd.X86.AVX2() // fixed at start-up, never written again

// hsum8 returns the sum of the eight lanes of v (wrapping, like int32 adds).
func hsum8(v archsimd.Int32x8) int32 {
	s := v.GetLo().Add(v.GetHi())
	return s.GetElem(0) + s.GetElem(1) + s.GetElem(2) + s.GetElem(3)
}

// load32 loads 32 bytes as uint8 lanes.
func load32(b *[32]byte) archsimd.Uint8x32 { return archsimd.LoadUint8x32Array(b) }

// load16 loads 16 bytes as uint8 lanes.
func load16(b *[16]byte) archsimd.Uint8x16 { return archsimd.LoadUint8x16Array(b) }

// nibbles splits 32 bytes into their low and high nibbles.
func nibbles(q archsimd.Uint8x32) (lo, hi archsimd.Uint8x32) {
	m4 := archsimd.BroadcastUint8x32(0x0f)
	return q.And(m4), q.ReshapeToUint16s().ShiftAllRight(4).AsUint8x32().And(m4)
}

//go:build goexperiment.simd

package quant

import (
	"simd/archsimd"
)

// The wasm SIMD128 DotN kernels (the DotRowsN kernels, dotrowsn_wasm.go,
// run these for rows too long for their buffers). Q4_0's decodes each
// weight block once (nibbles split, offsets taken off) and then dots it
// with every activation exactly as dotQ4_0SIMD128 does. Q8_0, Q4_K and
// Q6_K call their dot once per activation: their hand-written wasm dots
// (the *_wasm.s files) are faster under Node than decoding once in
// archsimd code, and a row stays in the L1 cache between the calls.

func dotNQ8_0SIMD128(n int, w []byte, acts [][]byte, out []float32) {
	dotEach(dotQ8_0SIMD128, n, w, acts, out)
}

func dotNQ4_KSIMD128(n int, w []byte, acts [][]byte, out []float32) {
	dotEach(dotQ4_KSIMD128, n, w, acts, out)
}

func dotNQ6_KSIMD128(n int, w []byte, acts [][]byte, out []float32) {
	dotEach(dotQ6_KSIMD128, n, w, acts, out)
}

// dotNQ4_0SIMD128 is dotQ4_0SIMD128 for several activations: four blocks'
// quants are decoded (nibbles split, 8 taken off) and their scales
// converted once.
func dotNQ4_0SIMD128(n int, w []byte, acts [][]byte, out []float32) {
	nb := n / qk
	w = w[:nb*q4_0Bytes]
	out = out[:len(acts)]
	clear(out)
	m4 := archsimd.BroadcastUint8x16(0x0f)
	eight := archsimd.BroadcastInt8x16(8)
	b := 0
	for ; b+4 <= nb; b += 4 {
		x := (*[4 * q4_0Bytes]byte)(w[b*q4_0Bytes:])
		var lo, hi [4]archsimd.Int8x16
		for j := range 4 {
			q := loadU8((*[16]byte)(x[j*q4_0Bytes+2:]))
			lo[j] = q.And(m4).BitsToInt8().Sub(eight)
			hi[j] = q.ShiftAllRight(4).BitsToInt8().Sub(eight)
		}
		dx := fp16x4At(x[:], q4_0Bytes)
		for i, a := range acts {
			y := (*[4 * q8_0Bytes]byte)(a[b*q8_0Bytes:])
			blk := func(j int) archsimd.Int32x4 {
				yj := (*[q8_0Bytes]byte)(y[j*q8_0Bytes:])
				return widen(dot8(lo[j], loadI8((*[16]byte)(yj[2:]))).Add(dot8(hi[j], loadI8((*[16]byte)(yj[18:])))))
			}
			s := hsum4(blk(0), blk(1), blk(2), blk(3))
			out[i] = addLanes(out[i], s.ConvertToFloat32().Mul(dx.Mul(fp16x4At(y[:], q8_0Bytes))))
		}
	}
	for ; b < nb; b++ {
		x := (*[q4_0Bytes]byte)(w[b*q4_0Bytes:])
		for i, a := range acts {
			y := (*[q8_0Bytes]byte)(a[b*q8_0Bytes:])
			out[i] += float32(hsum(q4_0Sums(x, y))) * float32(fp16At(x[:])*fp16At(y[:]))
		}
	}
}

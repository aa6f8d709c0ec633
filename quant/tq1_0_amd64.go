//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"simd/archsimd"
)

// The AVX2 kernel of TQ1_0 (kernels_amd64.go); dotTQ1_0Ref is its portable
// twin, in ggml's AVX2 order (that of TQ2_0): a block is eight runs of 32
// weights, each met by VPMADDUBSW with the 32 activations of its weight
// indices in order, so byte m of a run is weight index m modulo 32.
//
//   - qs[0..31], trit n (n < 5): weights 32n+m, one run each;
//   - qs[32..47], trits 0 and 1: weights 160+m and 176+m, one run; trits
//     2 and 3 the next; trit 4 (weights 224+m) with the 16 trits of qh
//     (weight 240+4n+j at byte 16+4n+j) the last.
//
// A trit of a byte q is (uint8(q·3ⁿ)·3)>>8, which is 0, 1 or 2 as
// uint8(q·3ⁿ) is at most 85, at most 170, or more: two signed compares of
// q·3ⁿ with the sign bit flipped. q·3ⁿ⁺¹ = q·3ⁿ + q·3ⁿ + q·3ⁿ in wrapping
// byte adds. t·y pair sums are at most 512 in magnitude, eight runs of
// them at most 4096, and a block sum (at most 2048) taken off: no
// saturation or wrap in int16.

func dotTQ1_0AVX2(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*tq1_0Bytes], act[:nb*q8_KBytes]
	ones := archsimd.BroadcastInt16x16(1)
	var acc archsimd.Float32x8
	for b := range nb {
		x := (*[tq1_0Bytes]byte)(w[b*tq1_0Bytes:])
		y := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		var s archsimd.Int16x16
		q := load32((*[32]byte)(x[:32]))
		for t := range 5 {
			s = s.Add(tq1Run(q, (*[32]byte)(y[4+32*t:])))
			q = q.Add(q).Add(q)
		}
		h := load16((*[16]byte)(x[32:48]))
		h3 := h.Add(h).Add(h)
		h9 := h3.Add(h3).Add(h3)
		h27 := h9.Add(h9).Add(h9)
		h81 := h27.Add(h27).Add(h27)
		s = s.Add(tq1Run(q.SetLo(h).SetHi(h3), (*[32]byte)(y[4+160:])))
		s = s.Add(tq1Run(q.SetLo(h9).SetHi(h27), (*[32]byte)(y[4+192:])))
		s = s.Add(tq1Run(q.SetLo(h81).SetHi(tq1High(binary.LittleEndian.Uint32(x[48:]))), (*[32]byte)(y[4+224:])))
		bs := load32((*[32]byte)(y[4+qkK:])).AsInt16x16()
		lanes := s.Sub(bs).DotProductPairs(ones)
		d := archsimd.BroadcastFloat32x8(f32At(y[:]) * fp16At(x[52:]))
		acc = lanes.ConvertToFloat32().Mul(d).Add(acc)
	}
	return laneSum8x8(acc)
}

// tq1Run returns the t·y pair sums of the 32 trits of q (its bytes
// already multiplied by their 3ⁿ) and the activations y.
func tq1Run(q archsimd.Uint8x32, y *[32]byte) archsimd.Int16x16 {
	a := q.AsInt8x32().Xor(archsimd.BroadcastInt8x32(-128))
	var t archsimd.Int8x32
	t = t.Sub(a.Greater(archsimd.BroadcastInt8x32(85 - 128)).ToInt8x32())
	t = t.Sub(a.Greater(archsimd.BroadcastInt8x32(170 - 128)).ToInt8x32())
	return t.AsUint8x32().DotProductPairsSaturated(load32(y).BitsToInt8())
}

func dotNTQ1_0AVX2(n int, w []byte, acts [][]byte, out []float32) {
	dotEach(dotTQ1_0AVX2, n, w, acts, out)
}

func dotRowsNTQ1_0AVX2(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	eachRow(dotNTQ1_0AVX2, n/qkK*tq1_0Bytes, n, w, acts, outs, at)
}

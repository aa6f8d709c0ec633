//go:build goexperiment.simd

package quant

import "simd/archsimd"

// The AVX2 kernel of TQ2_0 (kernels_amd64.go); dotTQ2_0Ref is its portable
// twin: ggml's AVX2 kernel, whose order the reference spells out. t·y
// pair sums (t ≤ 3, the 2-bit field) are at most 768 in magnitude, and
// eight runs of them with a block sum taken off at most 8192: no
// saturation or wrap in int16.

func dotTQ2_0AVX2(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*tq2_0Bytes], act[:nb*q8_KBytes]
	m3 := archsimd.BroadcastUint8x32(3)
	ones := archsimd.BroadcastInt16x16(1)
	var acc archsimd.Float32x8
	for b := range nb {
		x := (*[tq2_0Bytes]byte)(w[b*tq2_0Bytes:])
		y := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		var s0, s1 archsimd.Int16x16
		for h := range 2 {
			q := load32((*[32]byte)(x[32*h:]))
			p := func(l int) archsimd.Int16x16 {
				t := q.ReshapeToUint16s().ShiftAllRight(uint64(2 * l)).AsUint8x32().And(m3)
				return t.DotProductPairsSaturated(load32((*[32]byte)(y[4+128*h+32*l:])).BitsToInt8())
			}
			s0 = s0.Add(p(0).Add(p(1)))
			s1 = s1.Add(p(2).Add(p(3)))
		}
		bs := load32((*[32]byte)(y[4+qkK:])).AsInt16x16()
		lanes := s0.Add(s1).Sub(bs).DotProductPairs(ones)
		d := archsimd.BroadcastFloat32x8(f32At(y[:]) * fp16At(x[64:]))
		acc = lanes.ConvertToFloat32().Mul(d).Add(acc)
	}
	return laneSum8x8(acc)
}

func dotNTQ2_0AVX2(n int, w []byte, acts [][]byte, out []float32) {
	dotEach(dotTQ2_0AVX2, n, w, acts, out)
}

func dotRowsNTQ2_0AVX2(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	eachRow(dotNTQ2_0AVX2, n/qkK*tq2_0Bytes, n, w, acts, outs, at)
}

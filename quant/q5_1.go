package quant

import "encoding/binary"

// Q5_1: blocks of 32 weights, 24 bytes, 6 bits per weight.
//
//	offset size
//	0      2    d       fp16 scale
//	2      2    m       fp16 minimum
//	4      4    qh      uint32: bit j is the 5th bit of weight j
//	8      16   qs[16]  low 4 bits: low nibble of qs[j] is weight j, high nibble weight j+16
//
// x = d*q + m. Activation format: Q8_1.
const q5_1Bytes = 4 + 4 + qk/2

var _ [0]struct{} = [q5_1Bytes - 24]struct{}{} // size check

func dequantizeQ5_1(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qk; b++ {
		blk := src[b*q5_1Bytes : (b+1)*q5_1Bytes]
		d, m := fp16At(blk), fp16At(blk[2:])
		qh := binary.LittleEndian.Uint32(blk[4:])
		qs := blk[8 : 8+qk/2]
		y := dst[b*qk : (b+1)*qk]
		for j := range qk / 2 {
			q0, q1 := q5Quants(qh, qs, j)
			y[j] = float32(float32(q0)*d) + m
			y[j+qk/2] = float32(float32(q1)*d) + m
		}
	}
}

// quantizeQ5_1 is ggml's quantize_row_q5_1_ref: d = (max-min)/31,
// q = trunc((x-min)/d + 0.5).
func quantizeQ5_1(dst []byte, src []float32) {
	for b := 0; b < len(src)/qk; b++ {
		x := src[b*qk : (b+1)*qk]
		blk := dst[b*q5_1Bytes : (b+1)*q5_1Bytes]
		vmin, vmax := minMax(x)
		d := (vmax - vmin) / 31
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putFP16(blk, d)
		putFP16(blk[2:], vmin)
		var qh uint32
		for j := range qk / 2 {
			x0 := uint32(uint8(float32((x[j]-vmin)*id) + 0.5))
			x1 := uint32(uint8(float32((x[j+qk/2]-vmin)*id) + 0.5))
			blk[8+j] = byte(x0&0xf) | byte(x1&0xf)<<4
			qh |= (x0 >> 4 & 1) << uint(j)
			qh |= (x1 >> 4 & 1) << uint(j+qk/2)
		}
		binary.LittleEndian.PutUint32(blk[4:], qh)
	}
}

// dotQ5_1Ref is ggml_vec_dot_q5_1_q8_1 in the order of ggml's x86 kernel
// (x86order.go), which llama.cpp runs on x86: lane k of a block is Σ q·y
// over its weights 4k..4k+3, added to its accumulator by fma32 with
// dx·dy; the min terms m·s (the activation block's stored s, as in Q4_1)
// are summed apart, each added by a fused multiply-add (the compilers of
// llama.cpp's builds contract summs += m·s), and added last.
func dotQ5_1Ref(n int, w, act []byte) float32 {
	var acc [8]float32
	var summs float32
	for b := 0; b < n/qk; b++ {
		x := w[b*q5_1Bytes : (b+1)*q5_1Bytes]
		y := act[b*q8_1Bytes : (b+1)*q8_1Bytes]
		qh := binary.LittleEndian.Uint32(x[4:])
		xq, yq := x[8:8+qk/2], y[4:4+qk]
		summs = fma32(fp16At(x[2:]), fp16At(y[2:]), summs)
		var lanes [8]int32
		for j := range qk / 2 {
			q0, q1 := q5Quants(qh, xq, j)
			lanes[j/4] += q0 * int32(int8(yq[j]))
			lanes[4+j/4] += q1 * int32(int8(yq[j+qk/2]))
		}
		d := float32(fp16At(x) * fp16At(y))
		for k := range acc {
			acc[k] = fma32(float32(lanes[k]), d, acc[k])
		}
	}
	return hsumX86(&acc) + summs
}

// dotQ5_1Go, the portable kernel, computes the same as dotQ5_1Ref (bit for
// bit) with array views, so the inner loop has no bounds checks.
func dotQ5_1Go(n int, w, act []byte) float32 {
	nb := n / qk
	w, act = w[:nb*q5_1Bytes], act[:nb*q8_1Bytes]
	var acc [8]float32
	var summs float32
	for b := range nb {
		x := (*[q5_1Bytes]byte)(w[b*q5_1Bytes:])
		y := (*[q8_1Bytes]byte)(act[b*q8_1Bytes:])
		qh := binary.LittleEndian.Uint32(x[4:])
		xq := (*[qk / 2]byte)(x[8:])
		lo := (*[qk / 2]byte)(y[4:])
		hi := (*[qk / 2]byte)(y[4+qk/2:])
		summs = fma32(fp16At(x[2:]), fp16At(y[2:]), summs)
		var lanes [8]int32
		for j := range qk / 2 {
			q0 := int32(xq[j]&0xf | byte(qh>>j<<4)&0x10)
			q1 := int32(xq[j]>>4 | byte(qh>>(j+12))&0x10)
			lanes[j/4] += q0 * int32(int8(lo[j]))
			lanes[4+j/4] += q1 * int32(int8(hi[j]))
		}
		d := float32(fp16At(x[:]) * fp16At(y[:]))
		for k := range acc {
			acc[k] = fma32(float32(lanes[k]), d, acc[k])
		}
	}
	return hsumX86(&acc) + summs
}

package quant

import "encoding/binary"

// Q5_0: blocks of 32 weights, 22 bytes, 5.5 bits per weight.
//
//	offset size
//	0      2    d       fp16 scale
//	2      4    qh      uint32: bit j is the 5th bit of weight j
//	6      16   qs[16]  low 4 bits: low nibble of qs[j] is weight j, high nibble weight j+16
//
// x = d * (q - 16). Activation format: Q8_0.
const q5_0Bytes = 2 + 4 + qk/2

var _ [0]struct{} = [q5_0Bytes - 22]struct{}{} // size check

// q5Quants returns the two unsigned 5-bit quants j and j+16 of a Q5_0/Q5_1
// block with high bits qh and nibbles qs.
func q5Quants(qh uint32, qs []byte, j int) (q0, q1 int32) {
	h0 := (qh >> uint(j) << 4) & 0x10
	h1 := (qh >> uint(j+12)) & 0x10
	return int32(uint32(qs[j]&0xf) | h0), int32(uint32(qs[j]>>4) | h1)
}

func dequantizeQ5_0(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qk; b++ {
		blk := src[b*q5_0Bytes : (b+1)*q5_0Bytes]
		d := fp16At(blk)
		qh := binary.LittleEndian.Uint32(blk[2:])
		qs := blk[6 : 6+qk/2]
		y := dst[b*qk : (b+1)*qk]
		for j := range qk / 2 {
			q0, q1 := q5Quants(qh, qs, j)
			y[j] = float32(q0-16) * d
			y[j+qk/2] = float32(q1-16) * d
		}
	}
}

// quantizeQ5_0 is ggml's quantize_row_q5_0_ref: d = max/-16,
// q = min(31, trunc(x/d + 16.5)).
func quantizeQ5_0(dst []byte, src []float32) {
	for b := 0; b < len(src)/qk; b++ {
		x := src[b*qk : (b+1)*qk]
		blk := dst[b*q5_0Bytes : (b+1)*q5_0Bytes]
		var amax, vmax float32
		for _, v := range x {
			if amax < absf(v) {
				amax, vmax = absf(v), v
			}
		}
		d := vmax / -16
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putFP16(blk, d)
		var qh uint32
		for j := range qk / 2 {
			x0 := uint32(min(31, int8(float32(x[j]*id)+16.5)))
			x1 := uint32(min(31, int8(float32(x[j+qk/2]*id)+16.5)))
			blk[6+j] = byte(x0&0xf) | byte(x1&0xf)<<4
			qh |= (x0 >> 4 & 1) << uint(j)
			qh |= (x1 >> 4 & 1) << uint(j+qk/2)
		}
		binary.LittleEndian.PutUint32(blk[2:], qh)
	}
}

// dotQ5_0Ref is ggml_vec_dot_q5_0_q8_0 in the order of ggml's x86 kernel
// (x86order.go), which llama.cpp runs on x86; ggml's generic C adds one
// float term per block instead. Lane k of a block is Σ (q-16)·y over its
// weights 4k..4k+3 (|·| ≤ 4·16·128).
func dotQ5_0Ref(n int, w, act []byte) float32 {
	var acc [8]float32
	for b := 0; b < n/qk; b++ {
		x := w[b*q5_0Bytes : (b+1)*q5_0Bytes]
		y := act[b*q8_0Bytes : (b+1)*q8_0Bytes]
		qh := binary.LittleEndian.Uint32(x[2:])
		xq, yq := x[6:6+qk/2], y[2:2+qk]
		var lanes [8]int32
		for j := range qk / 2 {
			q0, q1 := q5Quants(qh, xq, j)
			lanes[j/4] += (q0 - 16) * int32(int8(yq[j]))
			lanes[4+j/4] += (q1 - 16) * int32(int8(yq[j+qk/2]))
		}
		d := float32(fp16At(x) * fp16At(y))
		for k := range acc {
			acc[k] = fma32(d, float32(lanes[k]), acc[k])
		}
	}
	return hsumX86(&acc)
}

// dotQ5_0Go, the portable kernel, computes the same as dotQ5_0Ref (bit for
// bit) with array views, so the inner loop has no bounds checks.
func dotQ5_0Go(n int, w, act []byte) float32 {
	nb := n / qk
	w, act = w[:nb*q5_0Bytes], act[:nb*q8_0Bytes]
	var acc [8]float32
	for b := range nb {
		x := (*[q5_0Bytes]byte)(w[b*q5_0Bytes:])
		y := (*[q8_0Bytes]byte)(act[b*q8_0Bytes:])
		qh := binary.LittleEndian.Uint32(x[2:])
		xq := (*[qk / 2]byte)(x[6:])
		lo := (*[qk / 2]byte)(y[2:])
		hi := (*[qk / 2]byte)(y[2+qk/2:])
		var lanes [8]int32
		for j := range qk / 2 {
			q0 := int32(xq[j]&0xf|byte(qh>>j<<4)&0x10) - 16
			q1 := int32(xq[j]>>4|byte(qh>>(j+12))&0x10) - 16
			lanes[j/4] += q0 * int32(int8(lo[j]))
			lanes[4+j/4] += q1 * int32(int8(hi[j]))
		}
		d := float32(fp16At(x[:]) * fp16At(y[:]))
		for k := range acc {
			acc[k] = fma32(d, float32(lanes[k]), acc[k])
		}
	}
	return hsumX86(&acc)
}

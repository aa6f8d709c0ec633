package quant

// Q4_1: blocks of 32 weights, 20 bytes, 5 bits per weight.
//
//	offset size
//	0      2    d       fp16 scale
//	2      2    m       fp16 minimum
//	4      16   qs[16]  nibbles: low nibble of qs[j] is weight j, high nibble is weight j+16
//
// x = d*q + m. Activation format: Q8_1.
const q4_1Bytes = 4 + qk/2

var _ [0]struct{} = [q4_1Bytes - 20]struct{}{} // size check

func dequantizeQ4_1(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qk; b++ {
		blk := src[b*q4_1Bytes : (b+1)*q4_1Bytes]
		d, m := fp16At(blk), fp16At(blk[2:])
		y := dst[b*qk : (b+1)*qk]
		for j, q := range blk[4 : 4+qk/2] {
			y[j] = float32(float32(q&0xf)*d) + m
			y[j+qk/2] = float32(float32(q>>4)*d) + m
		}
	}
}

// quantizeQ4_1 is ggml's quantize_row_q4_1_ref: d = (max-min)/15,
// q = min(15, trunc((x-min)/d + 0.5)).
func quantizeQ4_1(dst []byte, src []float32) {
	for b := 0; b < len(src)/qk; b++ {
		x := src[b*qk : (b+1)*qk]
		blk := dst[b*q4_1Bytes : (b+1)*q4_1Bytes]
		vmin, vmax := minMax(x)
		d := (vmax - vmin) / 15
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putFP16(blk, d)
		putFP16(blk[2:], vmin)
		for j := range qk / 2 {
			x0 := min(15, int8(float32((x[j]-vmin)*id)+0.5))
			x1 := min(15, int8(float32((x[j+qk/2]-vmin)*id)+0.5))
			blk[4+j] = byte(x0) | byte(x1)<<4
		}
	}
}

// dotQ4_1Ref is ggml_vec_dot_q4_1_q8_1 in the order of ggml's x86 kernel,
// as dotQ5_1Ref (lane k: Σ q·y over the block's weights 4k..4k+3). The
// min term uses the activation block's stored s (fp16 of d*sum(qs)), not
// the exact sum.
func dotQ4_1Ref(n int, w, act []byte) float32 {
	var acc [8]float32
	var summs float32
	for b := 0; b < n/qk; b++ {
		x := w[b*q4_1Bytes : (b+1)*q4_1Bytes]
		y := act[b*q8_1Bytes : (b+1)*q8_1Bytes]
		xq, yq := x[4:4+qk/2], y[4:4+qk]
		summs = fma32(fp16At(x[2:]), fp16At(y[2:]), summs)
		var lanes [8]int32
		for j := range qk / 2 {
			lanes[j/4] += int32(xq[j]&0xf) * int32(int8(yq[j]))
			lanes[4+j/4] += int32(xq[j]>>4) * int32(int8(yq[j+qk/2]))
		}
		d := float32(fp16At(x) * fp16At(y))
		for k := range acc {
			acc[k] = fma32(d, float32(lanes[k]), acc[k])
		}
	}
	return hsumX86(&acc) + summs
}

// dotQ4_1Go, the portable kernel, computes the same as dotQ4_1Ref (bit for
// bit) with array views, so the inner loop has no bounds checks.
func dotQ4_1Go(n int, w, act []byte) float32 {
	nb := n / qk
	w, act = w[:nb*q4_1Bytes], act[:nb*q8_1Bytes]
	var acc [8]float32
	var summs float32
	for b := range nb {
		x := (*[q4_1Bytes]byte)(w[b*q4_1Bytes:])
		y := (*[q8_1Bytes]byte)(act[b*q8_1Bytes:])
		xq := (*[qk / 2]byte)(x[4:])
		lo := (*[qk / 2]byte)(y[4:])
		hi := (*[qk / 2]byte)(y[4+qk/2:])
		summs = fma32(fp16At(x[2:]), fp16At(y[2:]), summs)
		var lanes [8]int32
		for j := range qk / 2 {
			lanes[j/4] += int32(xq[j]&0xf) * int32(int8(lo[j]))
			lanes[4+j/4] += int32(xq[j]>>4) * int32(int8(hi[j]))
		}
		d := float32(fp16At(x[:]) * fp16At(y[:]))
		for k := range acc {
			acc[k] = fma32(d, float32(lanes[k]), acc[k])
		}
	}
	return hsumX86(&acc) + summs
}

// minMax returns the smallest and largest of x, starting from ±FLT_MAX as
// ggml does.
func minMax(x []float32) (vmin, vmax float32) {
	vmin, vmax = maxFloat32, -maxFloat32
	for _, v := range x {
		if v < vmin {
			vmin = v
		}
		if v > vmax {
			vmax = v
		}
	}
	return vmin, vmax
}

const maxFloat32 = 3.40282346638528859811704183484516925440e+38

package quant

// Q8_0: blocks of 32 weights, 34 bytes, 8.5 bits per weight.
//
//	offset size
//	0      2    d       fp16 scale
//	2      32   qs[32]  int8 quants; x[i] = d * qs[i]
//
// Q8_0 is also the activation format of Q4_0, Q5_0 and IQ4_NL.
const q8_0Bytes = 2 + qk

var _ [0]struct{} = [q8_0Bytes - 34]struct{}{} // size check

func dequantizeQ8_0(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qk; b++ {
		blk := src[b*q8_0Bytes : (b+1)*q8_0Bytes]
		d := fp16At(blk)
		y := dst[b*qk : (b+1)*qk]
		for j, q := range blk[2:] {
			y[j] = float32(int8(q)) * d
		}
	}
}

// quantizeQ8_0Ref is ggml's quantize_row_q8_0_ref: d = amax/127, then
// qs = roundf(x/d) (half away from zero).
func quantizeQ8_0Ref(dst []byte, src []float32) {
	for b := 0; b < len(src)/qk; b++ {
		x := src[b*qk : (b+1)*qk]
		blk := dst[b*q8_0Bytes : (b+1)*q8_0Bytes]
		var amax float32
		for _, v := range x {
			amax = max(amax, absf(v))
		}
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putFP16(blk, d)
		for j, v := range x {
			blk[2+j] = byte(int8(roundf(v * id)))
		}
	}
}

// dotQ8_0Ref is ggml_vec_dot_q8_0_q8_0: per block an integer dot product,
// scaled by d_w*d_a.
func dotQ8_0Ref(n int, w, act []byte) float32 {
	var sum float32
	for b := 0; b < n/qk; b++ {
		x := w[b*q8_0Bytes : (b+1)*q8_0Bytes]
		y := act[b*q8_0Bytes : (b+1)*q8_0Bytes]
		xq, yq := x[2:2+qk], y[2:2+qk]
		var sumi int32
		for j := range qk {
			sumi += int32(int8(xq[j])) * int32(int8(yq[j]))
		}
		sum += float32(sumi) * float32(fp16At(x)*fp16At(y))
	}
	return sum
}

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

// dotQ8_0Go, the portable kernel, computes the same as dotQ8_0Ref (bit for bit) with the bounds
// checks hoisted out of the inner loop and four independent accumulators.
func dotQ8_0Go(n int, w, act []byte) float32 {
	nb := n / qk
	w, act = w[:nb*q8_0Bytes], act[:nb*q8_0Bytes]
	var sum float32
	for b := range nb {
		x := (*[q8_0Bytes]byte)(w[b*q8_0Bytes:])
		y := (*[q8_0Bytes]byte)(act[b*q8_0Bytes:])
		var s0, s1, s2, s3 int32
		for j := 2; j < q8_0Bytes; j += 4 {
			s0 += int32(int8(x[j])) * int32(int8(y[j]))
			s1 += int32(int8(x[j+1])) * int32(int8(y[j+1]))
			s2 += int32(int8(x[j+2])) * int32(int8(y[j+2]))
			s3 += int32(int8(x[j+3])) * int32(int8(y[j+3]))
		}
		sum += float32(s0+s1+s2+s3) * float32(fp16At(x[:])*fp16At(y[:]))
	}
	return sum
}

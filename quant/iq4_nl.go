package quant

// IQ4_NL: blocks of 32 weights, 18 bytes, 4.5 bits per weight.
// Like Q4_0, but each nibble indexes the 16 non-linear levels kvaluesIQ4NL.
//
//	offset size
//	0      2    d       fp16 scale
//	2      16   qs[16]  nibbles: low nibble of qs[j] is weight j, high nibble is weight j+16
//
// x = d * kvaluesIQ4NL[q]. Activation format: Q8_0.
const iq4_NLBytes = 2 + qk/2

var _ [0]struct{} = [iq4_NLBytes - 18]struct{}{} // size check

func dequantizeIQ4_NL(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qk; b++ {
		blk := src[b*iq4_NLBytes : (b+1)*iq4_NLBytes]
		d := fp16At(blk)
		y := dst[b*qk : (b+1)*qk]
		for j, q := range blk[2 : 2+qk/2] {
			y[j] = d * float32(kvaluesIQ4NL[q&0xf])
			y[j+qk/2] = d * float32(kvaluesIQ4NL[q>>4])
		}
	}
}

// dotIQ4_NLRef is ggml_vec_dot_iq4_nl_q8_0.
func dotIQ4_NLRef(n int, w, act []byte) float32 {
	var sum float32
	for b := 0; b < n/qk; b++ {
		x := w[b*iq4_NLBytes : (b+1)*iq4_NLBytes]
		y := act[b*q8_0Bytes : (b+1)*q8_0Bytes]
		xq, yq := x[2:2+qk/2], y[2:2+qk]
		var sumi1, sumi2 int32
		for j := range qk / 2 {
			sumi1 += int32(int8(yq[j])) * int32(kvaluesIQ4NL[xq[j]&0xf])
			sumi2 += int32(int8(yq[j+qk/2])) * int32(kvaluesIQ4NL[xq[j]>>4])
		}
		sum += fp16At(y) * fp16At(x) * float32(sumi1+sumi2)
	}
	return sum
}

// dotIQ4_NL computes the same as dotIQ4_NLRef (bit for bit) with array
// views, so the inner loop has no bounds checks.
func dotIQ4_NL(n int, w, act []byte) float32 {
	nb := n / qk
	w, act = w[:nb*iq4_NLBytes], act[:nb*q8_0Bytes]
	var sum float32
	for b := range nb {
		x := (*[iq4_NLBytes]byte)(w[b*iq4_NLBytes:])
		y := (*[q8_0Bytes]byte)(act[b*q8_0Bytes:])
		xq := (*[qk / 2]byte)(x[2:])
		lo := (*[qk / 2]byte)(y[2:])
		hi := (*[qk / 2]byte)(y[2+qk/2:])
		var sumi int32
		for j := range qk / 2 {
			q := xq[j]
			sumi += int32(int8(lo[j]))*int32(kvaluesIQ4NL[q&0xf]) + int32(int8(hi[j]))*int32(kvaluesIQ4NL[q>>4])
		}
		sum += fp16At(y[:]) * fp16At(x[:]) * float32(sumi)
	}
	return sum
}

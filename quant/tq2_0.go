package quant

// TQ2_0: super-blocks of 256 ternary weights, 66 bytes, 2.0625 bits per
// weight: 2 bits per weight holding t in 0..2 (weight t-1).
//
//	offset size
//	0      64   qs[64]   bits 2l..2l+1 of qs[32h+m] are weight 128h+32l+m
//	64     2    d        fp16 scale
//
// x = (t-1)*d. Activation format: Q8_K.
const tq2_0Bytes = qkK/4 + 2

var _ [0]struct{} = [tq2_0Bytes - 66]struct{}{} // size check

func dequantizeTQ2_0(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qkK; b++ {
		blk := src[b*tq2_0Bytes : (b+1)*tq2_0Bytes]
		d := fp16At(blk[64:])
		y := dst[b*qkK : (b+1)*qkK]
		for i := range qkK {
			t := int32(blk[32*(i/128)+i%32]>>(2*(i%128/32))) & 3
			y[i] = float32(t-1) * d
		}
	}
}

// dotTQ2_0Ref is ggml_vec_dot_tq2_0_q8_K.
func dotTQ2_0Ref(n int, w, act []byte) float32 {
	var sum float32
	for b := 0; b < n/qkK; b++ {
		x := w[b*tq2_0Bytes : (b+1)*tq2_0Bytes]
		yd, q8, _ := q8KBlock(act[b*q8_KBytes : (b+1)*q8_KBytes])
		var sumi int32
		for i := range qkK {
			t := int32(x[32*(i/128)+i%32]>>(2*(i%128/32))) & 3
			sumi += int32(int8(q8[i])) * (t - 1)
		}
		sum += float32(sumi) * (yd * fp16At(x[64:]))
	}
	return sum
}

// dotTQ2_0 computes the same as dotTQ2_0Ref (bit for bit) in storage
// order, applying the -1 offset once per block through the Q8_K block sums.
func dotTQ2_0(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*tq2_0Bytes], act[:nb*q8_KBytes]
	var sum float32
	for b := range nb {
		x := (*[tq2_0Bytes]byte)(w[b*tq2_0Bytes:])
		yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		yd, _, bsums := q8KBlock(yb[:])
		var st, sy int32
		for j := range 16 {
			sy += bsum(bsums, j)
		}
		for h := range 2 {
			qs := (*[32]byte)(x[32*h:])
			y := (*[128]byte)(yb[4+128*h:])
			for m := range 32 {
				q := qs[m]
				st += int32(q&3)*int32(int8(y[m])) + int32(q>>2&3)*int32(int8(y[32+m])) +
					int32(q>>4&3)*int32(int8(y[64+m])) + int32(q>>6)*int32(int8(y[96+m]))
			}
		}
		sum += float32(st-sy) * (yd * fp16At(x[64:]))
	}
	return sum
}

// quantizeTQ2_0 is ggml's quantize_row_tq2_0_ref: d = max|x|, each weight
// rounded (half away from zero) to -1, 0 or 1 of d.
func quantizeTQ2_0(dst []byte, src []float32) {
	for b := 0; b < len(src)/qkK; b++ {
		x := src[b*qkK : (b+1)*qkK]
		blk := dst[b*tq2_0Bytes : (b+1)*tq2_0Bytes]
		id := ternaryScale(x, blk[64:])
		for h := range 2 {
			for m := range 32 {
				var q byte
				for l := range 4 {
					t := int32(roundf(x[128*h+32*l+m]*id)) + 1
					q |= byte(t&3) << (2 * l)
				}
				blk[32*h+m] = q
			}
		}
	}
}

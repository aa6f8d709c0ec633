package quant

// Q4_0: blocks of 32 weights, 18 bytes, 4.5 bits per weight.
//
//	offset size
//	0      2    d       fp16 scale
//	2      16   qs[16]  nibbles: low nibble of qs[j] is weight j, high nibble is weight j+16
//
// x = d * (q - 8). Activation format: Q8_0.
const q4_0Bytes = 2 + qk/2

var _ [0]struct{} = [q4_0Bytes - 18]struct{}{} // size check

func dequantizeQ4_0(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qk; b++ {
		blk := src[b*q4_0Bytes : (b+1)*q4_0Bytes]
		d := fp16At(blk)
		y := dst[b*qk : (b+1)*qk]
		for j, q := range blk[2 : 2+qk/2] {
			y[j] = float32(int32(q&0xf)-8) * d
			y[j+qk/2] = float32(int32(q>>4)-8) * d
		}
	}
}

// quantizeQ4_0 is ggml's quantize_row_q4_0_ref: d = max/-8 where max is the
// value of largest magnitude, q = min(15, trunc(x/d + 8.5)).
func quantizeQ4_0(dst []byte, src []float32) {
	for b := 0; b < len(src)/qk; b++ {
		x := src[b*qk : (b+1)*qk]
		blk := dst[b*q4_0Bytes : (b+1)*q4_0Bytes]
		var amax, vmax float32
		for _, v := range x {
			if amax < absf(v) {
				amax, vmax = absf(v), v
			}
		}
		d := vmax / -8
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putFP16(blk, d)
		for j := range qk / 2 {
			x0 := min(15, int8(float32(x[j]*id)+8.5))
			x1 := min(15, int8(float32(x[j+qk/2]*id)+8.5))
			blk[2+j] = byte(x0) | byte(x1)<<4
		}
	}
}

// dotQ4_0Ref is ggml_vec_dot_q4_0_q8_0.
func dotQ4_0Ref(n int, w, act []byte) float32 {
	var sum float32
	for b := 0; b < n/qk; b++ {
		x := w[b*q4_0Bytes : (b+1)*q4_0Bytes]
		y := act[b*q8_0Bytes : (b+1)*q8_0Bytes]
		xq, yq := x[2:2+qk/2], y[2:2+qk]
		var sumi int32
		for j := range qk / 2 {
			v0 := int32(xq[j]&0xf) - 8
			v1 := int32(xq[j]>>4) - 8
			sumi += v0*int32(int8(yq[j])) + v1*int32(int8(yq[j+qk/2]))
		}
		sum += float32(sumi) * float32(fp16At(x)*fp16At(y))
	}
	return sum
}

// dotQ4_0Go, the portable kernel, computes the same as dotQ4_0Ref (bit for bit) with the bounds
// checks hoisted out of the inner loop. The -8 offset is applied once per
// block: sum((q-8)*y) = sum(q*y) - 8*sum(y).
func dotQ4_0Go(n int, w, act []byte) float32 {
	nb := n / qk
	w, act = w[:nb*q4_0Bytes], act[:nb*q8_0Bytes]
	var sum float32
	for b := range nb {
		x := (*[q4_0Bytes]byte)(w[b*q4_0Bytes:])
		y := (*[q8_0Bytes]byte)(act[b*q8_0Bytes:])
		xq := (*[qk / 2]byte)(x[2:])
		lo := (*[qk / 2]byte)(y[2:])
		hi := (*[qk / 2]byte)(y[2+qk/2:])
		var sqy, sy int32
		for j := range qk / 2 {
			y0, y1 := int32(int8(lo[j])), int32(int8(hi[j]))
			sqy += int32(xq[j]&0xf)*y0 + int32(xq[j]>>4)*y1
			sy += y0 + y1
		}
		sum += float32(sqy-8*sy) * float32(fp16At(x[:])*fp16At(y[:]))
	}
	return sum
}

package quant

// Q4_K: super-blocks of 256 weights, 144 bytes, 4.5 bits per weight.
// 8 sub-blocks of 32 weights, each with a 6-bit scale and a 6-bit min.
//
//	offset size
//	0      2    d           fp16 super-block scale of the scales
//	2      2    dmin        fp16 super-block scale of the mins
//	4      12   scales[12]  8 6-bit scales and 8 6-bit mins, packed, see scaleMinK4
//	16     128  qs[128]     nibbles: weight 64*g + l is the low nibble of
//	                        qs[32*g + l] (l < 32), weight 64*g + 32 + l its high nibble
//
// x = d*scale*q - dmin*min.
const q4_KBytes = 2 + 2 + 12 + qkK/2

var _ [0]struct{} = [q4_KBytes - 144]struct{}{} // size check

// scaleMinK4 unpacks the 6-bit scale and min of sub-block j (0..7) from the
// 12 packed bytes of a Q4_K/Q5_K block: for j < 4 they are the low 6 bits
// of q[j] and q[j+4]; for j >= 4 the low 4 bits come from the nibbles of
// q[j+4] and the high 2 bits from the top bits of q[j-4] and q[j].
func scaleMinK4(j int, q []byte) (sc, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xf | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

func dequantizeQ4_K(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qkK; b++ {
		blk := src[b*q4_KBytes : (b+1)*q4_KBytes]
		d, dmin := fp16At(blk), fp16At(blk[2:])
		scales, qs := blk[4:16], blk[16:144]
		y := dst[b*qkK : (b+1)*qkK]
		for g := range 4 { // 64 weights: sub-blocks 2g and 2g+1
			sc1, m1 := scaleMinK4(2*g, scales)
			sc2, m2 := scaleMinK4(2*g+1, scales)
			d1, min1 := d*float32(sc1), dmin*float32(m1)
			d2, min2 := d*float32(sc2), dmin*float32(m2)
			for l, q := range qs[32*g : 32*g+32] {
				y[64*g+l] = float32(d1*float32(q&0xf)) - min1
				y[64*g+32+l] = float32(d2*float32(q>>4)) - min2
			}
		}
	}
}

// dotQ4_K is ggml_vec_dot_q4_K_q8_K.
func dotQ4_K(n int, w, act []byte) float32 {
	var sum float32
	for b := 0; b < n/qkK; b++ {
		x := w[b*q4_KBytes : (b+1)*q4_KBytes]
		scales, qs := x[4:16], x[16:144]
		yd, q8, bsums := q8KBlock(act[b*q8_KBytes : (b+1)*q8_KBytes])
		var isum, summ int32
		for g := range 4 {
			sc1, m1 := scaleMinK4(2*g, scales)
			sc2, m2 := scaleMinK4(2*g+1, scales)
			var s1, s2 int32
			for l, q := range qs[32*g : 32*g+32] {
				s1 += int32(q&0xf) * int32(int8(q8[64*g+l]))
				s2 += int32(q>>4) * int32(int8(q8[64*g+32+l]))
			}
			isum += int32(sc1)*s1 + int32(sc2)*s2
			summ += int32(m1)*(bsum(bsums, 4*g)+bsum(bsums, 4*g+1)) + int32(m2)*(bsum(bsums, 4*g+2)+bsum(bsums, 4*g+3))
		}
		d, dmin := fp16At(x)*yd, fp16At(x[2:])*yd
		sum += float32(d*float32(isum)) - float32(dmin*float32(summ))
	}
	return sum
}

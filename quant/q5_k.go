package quant

// Q5_K: super-blocks of 256 weights, 176 bytes, 5.5 bits per weight.
// 8 sub-blocks of 32 weights, each with a 6-bit scale and a 6-bit min.
//
//	offset size
//	0      2    d           fp16 super-block scale of the scales
//	2      2    dmin        fp16 super-block scale of the mins
//	4      12   scales[12]  packed as in Q4_K
//	16     32   qh[32]      5th bit: weight 32*k + l is bit k of qh[l]
//	48     128  qs[128]     low 4 bits, arranged as in Q4_K
//
// x = d*scale*q - dmin*min.
const q5_KBytes = 2 + 2 + 12 + qkK/8 + qkK/2

var _ [0]struct{} = [q5_KBytes - 176]struct{}{} // size check

func dequantizeQ5_K(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qkK; b++ {
		blk := src[b*q5_KBytes : (b+1)*q5_KBytes]
		d, dmin := fp16At(blk), fp16At(blk[2:])
		scales, qh, qs := blk[4:16], blk[16:48], blk[48:176]
		y := dst[b*qkK : (b+1)*qkK]
		for g := range 4 {
			sc1, m1 := scaleMinK4(2*g, scales)
			sc2, m2 := scaleMinK4(2*g+1, scales)
			d1, min1 := d*float32(sc1), dmin*float32(m1)
			d2, min2 := d*float32(sc2), dmin*float32(m2)
			for l, q := range qs[32*g : 32*g+32] {
				q1 := q&0xf | (qh[l]>>(2*g)&1)<<4
				q2 := q>>4 | (qh[l]>>(2*g+1)&1)<<4
				y[64*g+l] = float32(d1*float32(q1)) - min1
				y[64*g+32+l] = float32(d2*float32(q2)) - min2
			}
		}
	}
}

// dotQ5_KRef is ggml_vec_dot_q5_K_q8_K in the order of ggml's x86 AVX2
// kernel (kx86.go), the one llama.cpp runs Q5_K with on x86: lane k of a
// block's integer sums holds, for each sub-block s, scale_s·Σ q·y over
// its weights 4k..4k+3; the lanes are accumulated with one FMA each per
// block, d = dy·d, and the mins in a scalar FMA chain, dmin = -dy·dmin.
func dotQ5_KRef(n int, w, act []byte) float32 {
	var acc [kLanes]float32
	var summs float32
	for b := 0; b < n/qkK; b++ {
		x := w[b*q5_KBytes : (b+1)*q5_KBytes]
		scales, qh, qs := x[4:16], x[16:48], x[48:176]
		yd, q8, bsums := q8KBlock(act[b*q8_KBytes : (b+1)*q8_KBytes])
		var sumi [kLanes]int32
		var summ int32
		for g := range 4 {
			sc1, m1 := scaleMinK4(2*g, scales)
			sc2, m2 := scaleMinK4(2*g+1, scales)
			for l, q := range qs[32*g : 32*g+32] {
				q1 := q&0xf | (qh[l]>>(2*g)&1)<<4
				q2 := q>>4 | (qh[l]>>(2*g+1)&1)<<4
				sumi[l/4] += int32(sc1)*int32(q1)*int32(int8(q8[64*g+l])) + int32(sc2)*int32(q2)*int32(int8(q8[64*g+32+l]))
			}
			summ += int32(m1)*(bsum(bsums, 4*g)+bsum(bsums, 4*g+1)) + int32(m2)*(bsum(bsums, 4*g+2)+bsum(bsums, 4*g+3))
		}
		accumulateX86(&acc, yd*fp16At(x), &sumi)
		summs = fmaf(-yd*fp16At(x[2:]), float32(summ), summs)
	}
	return hsumX86(&acc) + summs
}

// quantizeQ5_K is ggml's quantize_row_q5_K_ref.
func quantizeQ5_K(dst []byte, src []float32) {
	var L [qkK]uint8
	for b := 0; b < len(src)/qkK; b++ {
		blk := dst[b*q5_KBytes : (b+1)*q5_KBytes]
		quantizeScaleMinK(src[b*qkK:(b+1)*qkK], blk, &L, 31, -0.5, 0.1, 15)
		qh, qs := blk[16:48], blk[48:176]
		clear(qh)
		for g := range 4 {
			for l := range 32 {
				l1, l2 := L[64*g+l], L[64*g+32+l]
				qh[l] |= (l1>>4)<<(2*g) | (l2>>4)<<(2*g+1)
				qs[32*g+l] = l1&0xf | (l2&0xf)<<4
			}
		}
	}
}

// dotQ5_KGo, the portable kernel, computes the same as dotQ5_KRef (bit
// for bit) with array-typed views so the inner loops have no bounds
// checks.
func dotQ5_KGo(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q5_KBytes], act[:nb*q8_KBytes]
	var acc [kLanes]float32
	var summs float32
	for b := range nb {
		x := (*[q5_KBytes]byte)(w[b*q5_KBytes:])
		yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		yd, _, bsums := q8KBlock(yb[:])
		scales := x[4:16]
		qh := (*[32]byte)(x[16:])
		var sumi [kLanes]int32
		var summ int32
		for g := range 4 {
			qs := (*[32]byte)(x[48+32*g:])
			ylo := (*[32]byte)(yb[4+64*g:])
			yhi := (*[32]byte)(yb[4+64*g+32:])
			sc1, m1 := scaleMinK4(2*g, scales)
			sc2, m2 := scaleMinK4(2*g+1, scales)
			for k := range kLanes {
				var s1, s2 int32
				for l := 4 * k; l < 4*k+4; l++ {
					h := qh[l] >> (2 * g)
					s1 += int32(qs[l]&0xf|(h&1)<<4) * int32(int8(ylo[l]))
					s2 += int32(qs[l]>>4|(h>>1&1)<<4) * int32(int8(yhi[l]))
				}
				sumi[k] += int32(sc1)*s1 + int32(sc2)*s2
			}
			summ += int32(m1)*(bsum(bsums, 4*g)+bsum(bsums, 4*g+1)) + int32(m2)*(bsum(bsums, 4*g+2)+bsum(bsums, 4*g+3))
		}
		accumulateX86(&acc, yd*fp16At(x[:]), &sumi)
		summs = fmaf(-yd*fp16At(x[2:]), float32(summ), summs)
	}
	return hsumX86(&acc) + summs
}

package quant

// Q6_K: super-blocks of 256 weights, 210 bytes, 6.5625 bits per weight.
// 16 sub-blocks of 16 weights, each with an int8 scale.
//
//	offset size
//	0      128  ql[128]     low 4 bits
//	128    64   qh[64]      high 2 bits
//	192    16   scales[16]  int8 sub-block scales
//	208    2    d           fp16 super-block scale
//
// In each half h (128 weights), weight 128*h + 32*k + l (k < 4, l < 32) has
// low bits from ql[64*h + l + 32*(k&1)] (low nibble for k < 2, high for
// k >= 2) and high bits 2k..2k+1 of qh[32*h + l]; its sub-block is
// 8*h + 2*k + l/16. x = d*scale*(q - 32).
const q6_KBytes = qkK/2 + qkK/4 + qkK/16 + 2

var _ [0]struct{} = [q6_KBytes - 210]struct{}{} // size check

// q6KQuant returns quant i (-32..31) of a Q6_K block.
func q6KQuant(ql, qh []byte, i int) int32 {
	h, k, l := i/128, i%128/32, i%32
	lo := ql[64*h+l+32*(k&1)]
	if k >= 2 {
		lo >>= 4
	}
	hi := qh[32*h+l] >> (2 * k) & 3
	return int32(lo&0xf|hi<<4) - 32
}

func dequantizeQ6_K(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qkK; b++ {
		blk := src[b*q6_KBytes : (b+1)*q6_KBytes]
		ql, qh, scales := blk[:128], blk[128:192], blk[192:208]
		d := fp16At(blk[208:])
		y := dst[b*qkK : (b+1)*qkK]
		for i := range qkK {
			y[i] = d * float32(int8(scales[i/16])) * float32(q6KQuant(ql, qh, i))
		}
	}
}

// dotQ6_KRef is ggml_vec_dot_q6_K_q8_K.
func dotQ6_KRef(n int, w, act []byte) float32 {
	var sum float32
	for b := 0; b < n/qkK; b++ {
		x := w[b*q6_KBytes : (b+1)*q6_KBytes]
		ql, qh, scales := x[:128], x[128:192], x[192:208]
		yd, q8, _ := q8KBlock(act[b*q8_KBytes : (b+1)*q8_KBytes])
		var isum int32
		for j := range 16 {
			var sub int32
			for i := 16 * j; i < 16*j+16; i++ {
				sub += int32(int8(q8[i])) * q6KQuant(ql, qh, i)
			}
			isum += int32(int8(scales[j])) * sub
		}
		sum += fp16At(x[208:]) * yd * float32(isum)
	}
	return sum
}

// quantizeQ6_K is ggml's quantize_row_q6_K_ref.
func quantizeQ6_K(dst []byte, src []float32) {
	var (
		L      [qkK]int8
		scales [qkK / 16]float32
	)
	for b := 0; b < len(src)/qkK; b++ {
		x := src[b*qkK : (b+1)*qkK]
		blk := dst[b*q6_KBytes : (b+1)*q6_KBytes]
		ql, qh, sc := blk[:128], blk[128:192], blk[192:208]
		var maxScale, maxAbsScale float32
		for j := range qkK / 16 {
			scales[j] = makeQXQuants(32, x[16*j:16*j+16], L[16*j:16*j+16])
			if s := absf(scales[j]); s > maxAbsScale {
				maxAbsScale, maxScale = s, scales[j]
			}
		}
		if maxAbsScale < groupMaxEps {
			clear(blk)
			continue
		}
		iscale := -128 / maxScale
		putFP16(blk[208:], 1/iscale)
		for j := range qkK / 16 {
			sc[j] = byte(int8(min(127, nearestInt(iscale*scales[j]))))
		}
		d := fp16At(blk[208:])
		for j := range qkK / 16 {
			dl := d * float32(int8(sc[j]))
			if dl == 0 {
				continue
			}
			for i := 16 * j; i < 16*j+16; i++ {
				L[i] = int8(max(-32, min(31, nearestInt(x[i]/dl))) + 32)
			}
		}
		for h := range 2 {
			for l := range 32 {
				j := 128*h + l
				q1, q2, q3, q4 := uint8(L[j]), uint8(L[j+32]), uint8(L[j+64]), uint8(L[j+96])
				ql[64*h+l] = q1&0xf | (q3&0xf)<<4
				ql[64*h+l+32] = q2&0xf | (q4&0xf)<<4
				qh[32*h+l] = q1>>4 | (q2>>4)<<2 | (q3>>4)<<4 | (q4>>4)<<6
			}
		}
	}
}

// dotQ6_KGo, the portable kernel, computes the same as dotQ6_KRef (bit for bit), walking the block
// in its storage order: for each half and each l < 32, one ql pair and one
// qh byte give the four quants l, l+32, l+64 and l+96.
func dotQ6_KGo(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q6_KBytes], act[:nb*q8_KBytes]
	var sum float32
	for b := range nb {
		x := (*[q6_KBytes]byte)(w[b*q6_KBytes:])
		yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		yd := f32At(yb[:])
		var isum int32
		for h := range 2 {
			ql := (*[64]byte)(x[64*h:])
			qh := (*[32]byte)(x[128+32*h:])
			sc := (*[8]byte)(x[192+8*h:])
			y := (*[128]byte)(yb[4+128*h:])
			for half := range 2 { // l in [16*half, 16*half+16): sub-blocks 2k+half
				var s0, s1, s2, s3 int32
				for l := 16 * half; l < 16*half+16; l++ {
					lo, hi, h := ql[l], ql[l+32], qh[l]
					s0 += (int32(lo&0xf|(h&3)<<4) - 32) * int32(int8(y[l]))
					s1 += (int32(hi&0xf|(h>>2&3)<<4) - 32) * int32(int8(y[l+32]))
					s2 += (int32(lo>>4|(h>>4&3)<<4) - 32) * int32(int8(y[l+64]))
					s3 += (int32(hi>>4|(h>>6)<<4) - 32) * int32(int8(y[l+96]))
				}
				isum += int32(int8(sc[half]))*s0 + int32(int8(sc[2+half]))*s1 +
					int32(int8(sc[4+half]))*s2 + int32(int8(sc[6+half]))*s3
			}
		}
		sum += fp16At(x[208:]) * yd * float32(isum)
	}
	return sum
}

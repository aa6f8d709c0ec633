package quant

// Q2_K: super-blocks of 256 weights, 84 bytes, 2.625 bits per weight.
// 16 sub-blocks of 16 weights, each with a 4-bit scale and a 4-bit min.
//
//	offset size
//	0      16   scales[16]  low nibble: scale of sub-block j, high nibble: its min
//	16     64   qs[64]      2-bit quants, see below
//	80     2    d           fp16 super-block scale of the scales
//	82     2    dmin        fp16 super-block scale of the mins
//
// Weight 128*h + 32*s + l (h < 2, s < 4, l < 32) is bits 2s..2s+1 of
// qs[32*h + l]; it belongs to sub-block 8*h + 2*s + l/16.
// x = d*scale*q - dmin*min.
const q2_KBytes = qkK/16 + qkK/4 + 2 + 2

var _ [0]struct{} = [q2_KBytes - 84]struct{}{} // size check

func dequantizeQ2_K(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qkK; b++ {
		blk := src[b*q2_KBytes : (b+1)*q2_KBytes]
		scales, qs := blk[:16], blk[16:80]
		d, dmin := fp16At(blk[80:]), fp16At(blk[82:])
		y := dst[b*qkK : (b+1)*qkK]
		for i := range qkK {
			h, s, l := i/128, i%128/32, i%32
			sc := scales[8*h+2*s+l/16]
			dl, ml := d*float32(sc&0xf), dmin*float32(sc>>4)
			q := qs[32*h+l] >> (2 * s) & 3
			y[i] = float32(dl*float32(q)) - ml
		}
	}
}

// dotQ2_KRef is ggml_vec_dot_q2_K_q8_K in the order of ggml's x86 AVX2
// kernel (kx86.go), the one llama.cpp runs Q2_K with on x86 without
// AVX-512 (with it, llama.cpp repacks Q2_K for its gemv kernel): per
// block, lane k first gets its min term fma(dmin, float32(min_2k·bsum_2k +
// min_2k+1·bsum_2k+1), acc[k]), dmin = -dy·dmin, then its scale term
// fma(d, float32(sumi[k]), acc[k]), d = dy·d, where sumi[k] holds
// scale·q·y over the weights 4k..4k+3 of every 32 consecutive ones.
func dotQ2_KRef(n int, w, act []byte) float32 {
	var acc [kLanes]float32
	for b := 0; b < n/qkK; b++ {
		x := w[b*q2_KBytes : (b+1)*q2_KBytes]
		scales, qs := x[:16], x[16:80]
		yd, q8, bsums := q8KBlock(act[b*q8_KBytes : (b+1)*q8_KBytes])
		var summs, sumi [kLanes]int32
		for j := range 16 {
			summs[j/2] += bsum(bsums, j) * int32(scales[j]>>4)
		}
		for i := range qkK {
			h, s, l := i/128, i%128/32, i%32
			q := int32(qs[32*h+l] >> (2 * s) & 3)
			sumi[l/4] += int32(scales[i/16]&0xf) * q * int32(int8(q8[i]))
		}
		accumulateX86(&acc, -yd*fp16At(x[82:]), &summs)
		accumulateX86(&acc, yd*fp16At(x[80:]), &sumi)
	}
	return hsumX86(&acc)
}

// quantizeQ2_K is ggml's quantize_row_q2_K_ref.
func quantizeQ2_K(dst []byte, src []float32) {
	var (
		L              [qkK]uint8
		laux           [16]uint8
		weights        [16]float32
		mins, scales   [qkK / 16]float32
		scaleQ, minQ   [qkK / 16]uint8
		packedD, packM float32
	)
	const q4scale = 15
	for b := 0; b < len(src)/qkK; b++ {
		x := src[b*qkK : (b+1)*qkK]
		blk := dst[b*q2_KBytes : (b+1)*q2_KBytes]
		var maxScale, maxMin float32
		for j := range qkK / 16 {
			xs := x[16*j : 16*j+16]
			for l, v := range xs {
				weights[l] = absf(v)
			}
			scales[j], mins[j] = makeQKX2Quants(3, xs, weights[:], L[16*j:16*j+16], laux[:], -0.5, 0.1, 15, true)
			maxScale = max(maxScale, scales[j])
			maxMin = max(maxMin, mins[j])
		}
		scaleQ, minQ = [qkK / 16]uint8{}, [qkK / 16]uint8{}
		packedD, packM = 0, 0
		if maxScale > 0 {
			iscale := q4scale / maxScale
			for j := range scaleQ {
				scaleQ[j] = uint8(nearestInt(iscale * scales[j]))
			}
			packedD = maxScale / q4scale
		}
		if maxMin > 0 {
			iscale := q4scale / maxMin
			for j := range minQ {
				minQ[j] = uint8(nearestInt(iscale * mins[j]))
			}
			packM = maxMin / q4scale
		}
		for j := range qkK / 16 {
			blk[j] = scaleQ[j] | minQ[j]<<4
		}
		putFP16(blk[80:], packedD)
		putFP16(blk[82:], packM)
		d, dmin := fp16At(blk[80:]), fp16At(blk[82:])
		for j := range qkK / 16 {
			dl := d * float32(blk[j]&0xf)
			if dl == 0 {
				continue
			}
			ml := dmin * float32(blk[j]>>4)
			for i := 16 * j; i < 16*j+16; i++ {
				L[i] = uint8(max(0, min(3, nearestInt((x[i]+ml)/dl))))
			}
		}
		packQ2Bits(blk[16:80], L[:])
	}
}

// dotQ2_KGo, the portable kernel, computes the same as dotQ2_KRef (bit
// for bit), walking the block in storage order: each qs byte holds the
// quants of four sub-blocks, at the same position l of each 32 weights
// (lane l/4).
func dotQ2_KGo(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q2_KBytes], act[:nb*q8_KBytes]
	var acc [kLanes]float32
	for b := range nb {
		x := (*[q2_KBytes]byte)(w[b*q2_KBytes:])
		yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		yd, _, bsums := q8KBlock(yb[:])
		scales := (*[16]byte)(x[:])
		var summs, sumi [kLanes]int32
		for k := range summs {
			summs[k] = bsum(bsums, 2*k)*int32(scales[2*k]>>4) + bsum(bsums, 2*k+1)*int32(scales[2*k+1]>>4)
		}
		for h := range 2 {
			y := (*[128]byte)(yb[4+128*h:])
			qs := (*[32]byte)(x[16+32*h:])
			for k := range kLanes {
				var s0, s1, s2, s3 int32
				for l := 4 * k; l < 4*k+4; l++ {
					q := qs[l]
					s0 += int32(q&3) * int32(int8(y[l]))
					s1 += int32(q>>2&3) * int32(int8(y[l+32]))
					s2 += int32(q>>4&3) * int32(int8(y[l+64]))
					s3 += int32(q>>6) * int32(int8(y[l+96]))
				}
				sc := scales[8*h+k/4:]
				sumi[k] += int32(sc[0]&0xf)*s0 + int32(sc[2]&0xf)*s1 + int32(sc[4]&0xf)*s2 + int32(sc[6]&0xf)*s3
			}
		}
		accumulateX86(&acc, -yd*fp16At(x[82:]), &summs)
		accumulateX86(&acc, yd*fp16At(x[80:]), &sumi)
	}
	return hsumX86(&acc)
}

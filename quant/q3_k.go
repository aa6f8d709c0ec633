package quant

// Q3_K: super-blocks of 256 weights, 110 bytes, 3.4375 bits per weight.
// 16 sub-blocks of 16 weights, each with a 6-bit signed scale.
//
//	offset size
//	0      32   hmask[32]   high bit of each quant: weight 32*k + l is bit k of hmask[l]
//	32     64   qs[64]      low 2 bits, arranged as in Q2_K
//	96     12   scales[12]  16 6-bit scales (biased by 32), packed, see q3KScales
//	108    2    d           fp16 super-block scale
//
// x = d*(scale-32)*(q - 4*(1-hbit)), q the 2 low bits.
const q3_KBytes = qkK/8 + qkK/4 + 12 + 2

var _ [0]struct{} = [q3_KBytes - 110]struct{}{} // size check

// q3KScale returns sub-block j's 6-bit scale minus 32: the low 4 bits are
// nibbles of scales[0:8] (low nibbles for j < 8), the high 2 bits are bit
// pairs of scales[8:12].
func q3KScale(scales []byte, j int) int32 {
	var lo byte
	if j < 8 {
		lo = scales[j] & 0xf
	} else {
		lo = scales[j-8] >> 4
	}
	hi := scales[8+j%4] >> (2 * (j / 4)) & 3
	return int32(lo|hi<<4) - 32
}

// q3KQuant returns quant i (-4..3) of a Q3_K block.
func q3KQuant(hmask, qs []byte, i int) int32 {
	h, s, l := i/128, i%128/32, i%32
	q := int32(qs[32*h+l] >> (2 * s) & 3)
	if hmask[l]&(1<<(i/32)) == 0 {
		q -= 4
	}
	return q
}

func dequantizeQ3_K(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qkK; b++ {
		blk := src[b*q3_KBytes : (b+1)*q3_KBytes]
		hmask, qs, scales := blk[:32], blk[32:96], blk[96:108]
		d := fp16At(blk[108:])
		y := dst[b*qkK : (b+1)*qkK]
		for i := range qkK {
			dl := d * float32(q3KScale(scales, i/16))
			y[i] = dl * float32(q3KQuant(hmask, qs, i))
		}
	}
}

// dotQ3_KRef is ggml_vec_dot_q3_K_q8_K in the order of ggml's x86 AVX2
// kernel (kx86.go), the one llama.cpp runs Q3_K with on x86: lane k of a
// block's integer sums holds scale·q·y over the weights 4k..4k+3 of every
// 32 consecutive ones; the lanes are accumulated with one FMA each per
// block, d = dy·d.
func dotQ3_KRef(n int, w, act []byte) float32 {
	var acc [kLanes]float32
	for b := 0; b < n/qkK; b++ {
		x := w[b*q3_KBytes : (b+1)*q3_KBytes]
		hmask, qs, scales := x[:32], x[32:96], x[96:108]
		yd, q8, _ := q8KBlock(act[b*q8_KBytes : (b+1)*q8_KBytes])
		var sumi [kLanes]int32
		for i := range qkK {
			sumi[i%32/4] += q3KScale(scales, i/16) * q3KQuant(hmask, qs, i) * int32(int8(q8[i]))
		}
		accumulateX86(&acc, yd*fp16At(x[108:]), &sumi)
	}
	return hsumX86(&acc)
}

// quantizeQ3_K is ggml's quantize_row_q3_K_ref.
func quantizeQ3_K(dst []byte, src []float32) {
	var (
		L      [qkK]int8
		scales [qkK / 16]float32
		low    [qkK]uint8
	)
	for b := 0; b < len(src)/qkK; b++ {
		x := src[b*qkK : (b+1)*qkK]
		blk := dst[b*q3_KBytes : (b+1)*q3_KBytes]
		hmask, qs, sc := blk[:32], blk[32:96], blk[96:108]
		var maxScale, amax float32
		for j := range qkK / 16 {
			scales[j] = makeQ3Quants(4, x[16*j:16*j+16], L[16*j:16*j+16])
			if s := absf(scales[j]); s > amax {
				amax, maxScale = s, scales[j]
			}
		}
		clear(sc)
		if maxScale != 0 {
			iscale := -32 / maxScale
			for j := range qkK / 16 {
				l := uint8(max(-32, min(31, int8(nearestInt(iscale*scales[j])))) + 32)
				if j < 8 {
					sc[j] = l & 0xf
				} else {
					sc[j-8] |= (l & 0xf) << 4
				}
				sc[8+j%4] |= (l >> 4) << (2 * (j / 4))
			}
			putFP16(blk[108:], 1/iscale)
		} else {
			putFP16(blk[108:], 0)
		}
		d := fp16At(blk[108:])
		for j := range qkK / 16 {
			dl := d * float32(q3KScale(sc, j))
			if dl == 0 {
				continue
			}
			for i := 16 * j; i < 16*j+16; i++ {
				L[i] = int8(max(-4, min(3, nearestInt(x[i]/dl))) + 4)
			}
		}
		clear(hmask)
		for j := range qkK {
			l := uint8(L[j])
			if l > 3 {
				hmask[j%32] |= 1 << (j / 32)
				l -= 4
			}
			low[j] = l
		}
		packQ2Bits(qs, low[:])
	}
}

// dotQ3_KGo, the portable kernel, computes the same as dotQ3_KRef (bit
// for bit), walking the block in storage order: qs[32*h + l] and hmask[l]
// give the quants 128*h + 32*s + l for s < 4, which go to lane l/4.
func dotQ3_KGo(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q3_KBytes], act[:nb*q8_KBytes]
	var acc [kLanes]float32
	var scales [16]int32
	for b := range nb {
		x := (*[q3_KBytes]byte)(w[b*q3_KBytes:])
		yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		yd := f32At(yb[:])
		hmask := (*[32]byte)(x[:])
		for j := range scales {
			scales[j] = q3KScale(x[96:108], j)
		}
		var sumi [kLanes]int32
		for h := range 2 {
			y := (*[128]byte)(yb[4+128*h:])
			qs := (*[32]byte)(x[32+32*h:])
			for k := range kLanes {
				var s0, s1, s2, s3 int32
				for l := 4 * k; l < 4*k+4; l++ {
					q, hm := qs[l], hmask[l]>>(4*h)
					s0 += (int32(q&3) - 4 + 4*int32(hm&1)) * int32(int8(y[l]))
					s1 += (int32(q>>2&3) - 4 + 4*int32(hm>>1&1)) * int32(int8(y[l+32]))
					s2 += (int32(q>>4&3) - 4 + 4*int32(hm>>2&1)) * int32(int8(y[l+64]))
					s3 += (int32(q>>6) - 4 + 4*int32(hm>>3&1)) * int32(int8(y[l+96]))
				}
				sc := scales[8*h+k/4:]
				sumi[k] += sc[0]*s0 + sc[2]*s1 + sc[4]*s2 + sc[6]*s3
			}
		}
		accumulateX86(&acc, yd*fp16At(x[108:]), &sumi)
	}
	return hsumX86(&acc)
}

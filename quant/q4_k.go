package quant

import "encoding/binary"

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

// scalesMinsK4 unpacks all eight 6-bit scales and mins of a Q4_K block's
// 12 packed bytes (see scaleMinK4), scale k in byte k of sc, min k in byte k
// of mn, with 32-bit word operations.
func scalesMinsK4(q []byte) (sc, mn uint64) {
	const low6, low4, top2 = 0x3f3f3f3f, 0x0f0f0f0f, 0x03030303
	u0, u1, u2 := binary.LittleEndian.Uint32(q), binary.LittleEndian.Uint32(q[4:]), binary.LittleEndian.Uint32(q[8:])
	s03, m03 := u0&low6, u1&low6
	s47 := u2&low4 | (u0>>6&top2)<<4
	m47 := u2>>4&low4 | (u1>>6&top2)<<4
	return uint64(s03) | uint64(s47)<<32, uint64(m03) | uint64(m47)<<32
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

// dotQ4_KRef is ggml_vec_dot_q4_K_q8_K.
func dotQ4_KRef(n int, w, act []byte) float32 {
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

// packScaleMinK4 stores 6-bit scale ls and min lm of sub-block j into the
// 12 packed bytes q (the inverse of scaleMinK4); q must start zeroed.
func packScaleMinK4(q []byte, j int, ls, lm uint8) {
	if j < 4 {
		q[j] = ls
		q[j+4] = lm
		return
	}
	q[j+4] = ls&0xf | (lm&0xf)<<4
	q[j-4] |= (ls >> 4) << 6
	q[j] |= (lm >> 4) << 6
}

// quantizeScaleMinK is the shared body of ggml's quantize_row_q4_K_ref
// and quantize_row_q5_K_ref: per 32-weight sub-block a scale/min fit by
// makeQKX2Quants, 6-bit quantised scales and mins, then requantisation of
// the weights into L (values 0..nmax) with the stored scales.
func quantizeScaleMinK(x []float32, head []byte, L *[qkK]uint8, nmax int32, rmin, rdelta float32, nstep int) {
	var (
		laux         [32]uint8
		weights      [32]float32
		mins, scales [qkK / 32]float32
	)
	var maxScale, maxMin float32
	for j := range qkK / 32 {
		xs := x[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += float32(v * v)
		}
		avX := sqrtf(sumX2 / 32)
		for l, v := range xs {
			weights[l] = avX + absf(v)
		}
		scales[j], mins[j] = makeQKX2Quants(nmax, xs, weights[:], L[32*j:32*j+32], laux[:], rmin, rdelta, nstep, false)
		maxScale = max(maxScale, scales[j])
		maxMin = max(maxMin, mins[j])
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	packed := head[4:16]
	clear(packed)
	for j := range qkK / 32 {
		ls := min(63, uint8(nearestInt(invScale*scales[j])))
		lm := min(63, uint8(nearestInt(invMin*mins[j])))
		packScaleMinK4(packed, j, ls, lm)
	}
	putFP16(head, maxScale/63)
	putFP16(head[2:], maxMin/63)
	d, dmin := fp16At(head), fp16At(head[2:])
	for j := range qkK / 32 {
		sc, m := scaleMinK4(j, packed)
		dl := d * float32(sc)
		if dl == 0 {
			continue
		}
		dm := dmin * float32(m)
		for i := 32 * j; i < 32*j+32; i++ {
			L[i] = uint8(max(0, min(nmax, nearestInt((x[i]+dm)/dl))))
		}
	}
}

// quantizeQ4_K is ggml's quantize_row_q4_K_ref.
func quantizeQ4_K(dst []byte, src []float32) {
	var L [qkK]uint8
	for b := 0; b < len(src)/qkK; b++ {
		blk := dst[b*q4_KBytes : (b+1)*q4_KBytes]
		quantizeScaleMinK(src[b*qkK:(b+1)*qkK], blk, &L, 15, -1, 0.1, 20)
		qs := blk[16:144]
		for g := range 4 {
			for l := range 32 {
				qs[32*g+l] = L[64*g+l] | L[64*g+32+l]<<4
			}
		}
	}
}

// dotQ4_KGo, the portable kernel, computes the same as dotQ4_KRef (bit for bit) with array-typed
// views so the inner loops have no bounds checks.
func dotQ4_KGo(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q4_KBytes], act[:nb*q8_KBytes]
	var sum float32
	for b := range nb {
		x := (*[q4_KBytes]byte)(w[b*q4_KBytes:])
		yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		yd, _, bsums := q8KBlock(yb[:])
		scales := x[4:16]
		var isum, summ int32
		for g := range 4 {
			qs := (*[32]byte)(x[16+32*g:])
			ylo := (*[32]byte)(yb[4+64*g:])
			yhi := (*[32]byte)(yb[4+64*g+32:])
			var s1, s2 int32
			for l := range 32 {
				s1 += int32(qs[l]&0xf) * int32(int8(ylo[l]))
				s2 += int32(qs[l]>>4) * int32(int8(yhi[l]))
			}
			sc1, m1 := scaleMinK4(2*g, scales)
			sc2, m2 := scaleMinK4(2*g+1, scales)
			isum += int32(sc1)*s1 + int32(sc2)*s2
			summ += int32(m1)*(bsum(bsums, 4*g)+bsum(bsums, 4*g+1)) + int32(m2)*(bsum(bsums, 4*g+2)+bsum(bsums, 4*g+3))
		}
		d, dmin := fp16At(x[:])*yd, fp16At(x[2:])*yd
		sum += float32(d*float32(isum)) - float32(dmin*float32(summ))
	}
	return sum
}

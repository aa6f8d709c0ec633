package quant

import (
	"encoding/binary"
	"math"
)

// Fast dot kernels of the codebook formats, where measurably faster than
// the readable one. Each computes the same as the dotXRef beside its format
// (bit for bit: the integer sums are exact and the float operations are the
// same, in the same order); they differ only in using array views, so that
// the inner loops have no bounds checks. (For IQ2_XXS, IQ3_XXS, IQ3_S, IQ1_S
// and IQ1_M the same rewrite measured no faster, so they have one kernel.)

// signedDot8 returns sum_j ±g[j]*y[j], negating the terms whose bit j in
// signs is set.
func signedDot8(g *[8]uint8, y *[8]byte, signs uint8) int32 {
	var s int32
	for j := range 8 {
		m := -int32(signs >> j & 1)
		s += (int32(g[j])*int32(int8(y[j])) ^ m) - m
	}
	return s
}

// q8KView returns the scale and quants of Q8_K block b of act.
func q8KView(act []byte, b int) (float32, *[qkK]byte) {
	yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
	return math.Float32frombits(binary.LittleEndian.Uint32(yb[:])), (*[qkK]byte)(yb[4:])
}

func dotIQ2_XS(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*iq2_XSBytes], act[:nb*q8_KBytes]
	var sum float32
	for b := range nb {
		x := (*[iq2_XSBytes]byte)(w[b*iq2_XSBytes:])
		yd, q8 := q8KView(act, b)
		var bsum int32
		for ib := range qkK / 32 {
			var sumi [2]int32
			for l := range 4 {
				q := binary.LittleEndian.Uint16(x[2+8*ib+2*l:])
				sumi[l/2] += signedDot8(&iq2xsGrid[q&511], (*[8]byte)(q8[32*ib+8*l:]), ksignsIQ2XS[q>>9])
			}
			sc := x[66+ib]
			bsum += sumi[0]*int32(2*(sc&0xf)+1) + sumi[1]*int32(2*(sc>>4)+1)
		}
		sum += fp16At(x[:]) * yd * float32(bsum)
	}
	return 0.125 * sum
}

func dotIQ2_S(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*iq2_SBytes], act[:nb*q8_KBytes]
	var sum float32
	for b := range nb {
		x := (*[iq2_SBytes]byte)(w[b*iq2_SBytes:])
		yd, q8 := q8KView(act, b)
		var bsum int32
		for ib := range qkK / 32 {
			qh := uint(x[66+ib])
			var sumi [2]int32
			for l := range 4 {
				idx := uint(x[2+4*ib+l]) | (qh>>(2*l)&3)<<8
				sumi[l/2] += signedDot8(&iq2sGrid[idx&1023], (*[8]byte)(q8[32*ib+8*l:]), x[34+4*ib+l])
			}
			sc := x[74+ib]
			bsum += sumi[0]*int32(2*(sc&0xf)+1) + sumi[1]*int32(2*(sc>>4)+1)
		}
		sum += fp16At(x[:]) * yd * float32(bsum)
	}
	return 0.125 * sum
}

package quant

import (
	"encoding/binary"
	"math"
)

// IQ4_XS: super-blocks of 256 weights, 136 bytes, 4.25 bits per weight.
// 8 sub-blocks of 32 weights with 6-bit scales; the nibbles index the
// IQ4_NL levels kvaluesIQ4NL.
//
//	offset size
//	0      2    d            fp16 super-block scale
//	2      2    scales_h     uint16: bits 2j..2j+1 are the high 2 bits of scale j
//	4      4    scales_l[4]  low 4 bits of scale j: nibble j%2 of scales_l[j/2]
//	8      128  qs[128]      sub-block j: weight 32j+l is the low nibble of
//	                         qs[16j+l] (l < 16), weight 32j+16+l its high nibble
//
// x = d*(scale-32)*kvaluesIQ4NL[q]. Activation format: Q8_K.
const iq4_XSBytes = 2 + 2 + qkK/64 + qkK/2

var _ [0]struct{} = [iq4_XSBytes - 136]struct{}{} // size check

// iq4XSScale returns the 6-bit scale (0..63) of sub-block j of an IQ4_XS block.
func iq4XSScale(blk []byte, j int) int32 {
	h := binary.LittleEndian.Uint16(blk[2:])
	lo := blk[4+j/2] >> (4 * (j % 2)) & 0xf
	return int32(lo) | int32(h>>(2*j)&3)<<4
}

func dequantizeIQ4_XS(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qkK; b++ {
		blk := src[b*iq4_XSBytes : (b+1)*iq4_XSBytes]
		d := fp16At(blk)
		y := dst[b*qkK : (b+1)*qkK]
		for j := range qkK / 32 {
			dl := d * float32(iq4XSScale(blk, j)-32)
			for l, q := range blk[8+16*j : 8+16*j+16] {
				y[32*j+l] = dl * float32(kvaluesIQ4NL[q&0xf])
				y[32*j+16+l] = dl * float32(kvaluesIQ4NL[q>>4])
			}
		}
	}
}

// dotIQ4_XSRef is ggml_vec_dot_iq4_xs_q8_K in the order of ggml's x86
// kernel (x86order.go), which llama.cpp runs on x86: the generic C adds
// one float term per sub-block, the x86 kernel applies the sub-block
// scales in int32 and adds one fused multiply-add per super-block and lane.
// Lane k of a super-block is Σ_j (scale_j-32)·Σ_{e<4} q·y over weights
// 32j+4k+e (the products of bytes 4k..4k+3 of sub-block j's 32 levels,
// low nibbles first); |lane| < 8·4·127·128·32 < 2^24, so its conversion to
// float32 is exact.
func dotIQ4_XSRef(n int, w, act []byte) float32 {
	var acc [8]float32
	for b := 0; b < n/qkK; b++ {
		x := w[b*iq4_XSBytes : (b+1)*iq4_XSBytes]
		yd, q8, _ := q8KBlock(act[b*q8_KBytes : (b+1)*q8_KBytes])
		var lanes [8]int32
		for j := range qkK / 32 {
			ls := iq4XSScale(x, j) - 32
			for i := range 32 { // weight 32j+i: level byte i of the sub-block
				q := x[8+16*j+i%16] & 0xf
				if i >= 16 {
					q = x[8+16*j+i%16] >> 4
				}
				lanes[i/4] += ls * int32(kvaluesIQ4NL[q]) * int32(int8(q8[32*j+i]))
			}
		}
		d := float32(fp16At(x) * yd)
		for k := range acc {
			acc[k] = fma32(d, float32(lanes[k]), acc[k])
		}
	}
	return hsumX86(&acc)
}

// dotIQ4_XSGo, the portable kernel, computes the same as dotIQ4_XSRef (bit
// for bit) with array views, so the inner loop has no bounds checks, and
// the scale applied once per lane and sub-block.
func dotIQ4_XSGo(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*iq4_XSBytes], act[:nb*q8_KBytes]
	var acc [8]float32
	for b := range nb {
		x := (*[iq4_XSBytes]byte)(w[b*iq4_XSBytes:])
		yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		h := uint32(binary.LittleEndian.Uint16(x[2:]))
		var lanes [8]int32
		for j := range qkK / 32 {
			ls := int32(x[4+j/2]>>(4*(j%2))&0xf) | int32(h>>(2*j)&3)<<4
			qs := (*[16]byte)(x[8+16*j:])
			lo := (*[16]byte)(yb[4+32*j:])
			hi := (*[16]byte)(yb[4+32*j+16:])
			for k := range 4 {
				var sl, sh int32
				for e := range 4 {
					q := qs[4*k+e]
					sl += int32(int8(lo[4*k+e])) * int32(kvaluesIQ4NL[q&0xf])
					sh += int32(int8(hi[4*k+e])) * int32(kvaluesIQ4NL[q>>4])
				}
				lanes[k] += (ls - 32) * sl
				lanes[4+k] += (ls - 32) * sh
			}
		}
		d := float32(fp16At(x[:]) * math.Float32frombits(binary.LittleEndian.Uint32(yb[:])))
		for k := range acc {
			acc[k] = fma32(d, float32(lanes[k]), acc[k])
		}
	}
	return hsumX86(&acc)
}

// quantizeIQ4_XS is ggml's quantize_row_iq4_xs_ref (quantize_iq4_xs
// without an importance matrix): a scale search per 32 weights (see
// iq4Search), d = -max_scale/32, 6-bit sub-block scales nearest to
// scale/d, then each weight's level nearest to x/(d*(scale-32)).
func quantizeIQ4_XS(dst []byte, src []float32) {
	var (
		L      [32]uint8
		scales [qkK / 32]float32
	)
	for b := 0; b < len(src)/qkK; b++ {
		x := src[b*qkK : (b+1)*qkK]
		blk := dst[b*iq4_XSBytes : (b+1)*iq4_XSBytes]
		var maxScale, amaxScale float32
		for ib := range qkK / 32 {
			scales[ib] = iq4Search(x[32*ib:32*ib+32], L[:])
			if a := absf(scales[ib]); a > amaxScale {
				amaxScale, maxScale = a, scales[ib]
			}
		}
		d := -maxScale / 32
		putFP16(blk, d)
		var id float32
		if d != 0 {
			id = 1 / d
		}
		var sh uint16
		sl := blk[4:8]
		clear(sl)
		for ib := range qkK / 32 {
			l := max(-32, min(31, nearestInt(id*scales[ib])))
			dl := d * float32(l)
			var idl float32
			if dl != 0 {
				idl = 1 / dl
			}
			for j, v := range x[32*ib : 32*ib+32] {
				L[j] = bestIndexIQ4(idl * v)
			}
			packIQ4(blk[8+16*ib:], L[:])
			l += 32
			sl[ib/2] |= byte(l&0xf) << (4 * (ib % 2))
			sh |= uint16(l>>4) << (2 * ib)
		}
		binary.LittleEndian.PutUint16(blk[2:], sh)
	}
}

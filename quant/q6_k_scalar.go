//go:build !(goexperiment.simd && (wasm || amd64))

package quant

import (
	"encoding/binary"
	"math"
)

// The portable kernel of Q6_K; q6_k_simd.go has its wasm SIMD128 twin.

// dotQ6_K computes the same as dotQ6_KRef (bit for bit), walking the block
// in its storage order: for each half and each l < 32, one ql pair and one
// qh byte give the four quants l, l+32, l+64 and l+96.
func dotQ6_K(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q6_KBytes], act[:nb*q8_KBytes]
	var sum float32
	for b := range nb {
		x := (*[q6_KBytes]byte)(w[b*q6_KBytes:])
		yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		yd := math.Float32frombits(binary.LittleEndian.Uint32(yb[:]))
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

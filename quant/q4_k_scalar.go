//go:build !(goexperiment.simd && (wasm || amd64))

package quant

// The portable kernel of Q4_K; q4_k_simd.go has its wasm SIMD128 twin.

// dotQ4_K computes the same as dotQ4_KRef (bit for bit) with array-typed
// views so the inner loops have no bounds checks.
func dotQ4_K(n int, w, act []byte) float32 {
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

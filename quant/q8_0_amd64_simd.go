//go:build goexperiment.simd && amd64

package quant

// The native AVX2 dot of Q8_0; q8_0_scalar.go has its portable twin.

// dotQ8_0 computes the same as dotQ8_0Ref, bit for bit. VPMADDUBSW's sign
// trick would saturate on (-128)·(-128) pairs, so both operands are widened
// to int16 and multiplied with VPMADDWD instead.
func dotQ8_0(n int, w, act []byte) float32 {
	if !hasAVX2 {
		return dotQ8_0Ref(n, w, act)
	}
	nb := n / qk
	w, act = w[:nb*q8_0Bytes], act[:nb*q8_0Bytes]
	var sum float32
	for b := range nb {
		x := (*[q8_0Bytes]byte)(w[b*q8_0Bytes:])
		y := (*[q8_0Bytes]byte)(act[b*q8_0Bytes:])
		x0 := load16((*[16]byte)(x[2:])).BitsToInt8().ExtendToInt16()
		x1 := load16((*[16]byte)(x[18:])).BitsToInt8().ExtendToInt16()
		y0 := load16((*[16]byte)(y[2:])).BitsToInt8().ExtendToInt16()
		y1 := load16((*[16]byte)(y[18:])).BitsToInt8().ExtendToInt16()
		acc := x0.DotProductPairs(y0).Add(x1.DotProductPairs(y1))
		sum += float32(hsum8(acc)) * float32(fp16At(x[:])*fp16At(y[:]))
	}
	return sum
}

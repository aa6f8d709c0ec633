//go:build !(goexperiment.simd && (wasm || amd64))

package quant

// The portable dot of Q8_0; q8_0_simd.go and q8_0_amd64_simd.go have its
// SIMD twins.

// dotQ8_0 computes the same as dotQ8_0Ref (bit for bit) with the bounds
// checks hoisted out of the inner loop and four independent accumulators.
func dotQ8_0(n int, w, act []byte) float32 {
	nb := n / qk
	w, act = w[:nb*q8_0Bytes], act[:nb*q8_0Bytes]
	var sum float32
	for b := range nb {
		x := (*[q8_0Bytes]byte)(w[b*q8_0Bytes:])
		y := (*[q8_0Bytes]byte)(act[b*q8_0Bytes:])
		var s0, s1, s2, s3 int32
		for j := 2; j < q8_0Bytes; j += 4 {
			s0 += int32(int8(x[j])) * int32(int8(y[j]))
			s1 += int32(int8(x[j+1])) * int32(int8(y[j+1]))
			s2 += int32(int8(x[j+2])) * int32(int8(y[j+2]))
			s3 += int32(int8(x[j+3])) * int32(int8(y[j+3]))
		}
		sum += float32(s0+s1+s2+s3) * float32(fp16At(x[:])*fp16At(y[:]))
	}
	return sum
}

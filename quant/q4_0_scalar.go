//go:build !(goexperiment.simd && (wasm || amd64))

package quant

// The portable kernel of Q4_0; q4_0_simd.go has its wasm SIMD128 twin.

// dotQ4_0 computes the same as dotQ4_0Ref (bit for bit) with the bounds
// checks hoisted out of the inner loop. The -8 offset is applied once per
// block: sum((q-8)*y) = sum(q*y) - 8*sum(y).
func dotQ4_0(n int, w, act []byte) float32 {
	nb := n / qk
	w, act = w[:nb*q4_0Bytes], act[:nb*q8_0Bytes]
	var sum float32
	for b := range nb {
		x := (*[q4_0Bytes]byte)(w[b*q4_0Bytes:])
		y := (*[q8_0Bytes]byte)(act[b*q8_0Bytes:])
		xq := (*[qk / 2]byte)(x[2:])
		lo := (*[qk / 2]byte)(y[2:])
		hi := (*[qk / 2]byte)(y[2+qk/2:])
		var sqy, sy int32
		for j := range qk / 2 {
			y0, y1 := int32(int8(lo[j])), int32(int8(hi[j]))
			sqy += int32(xq[j]&0xf)*y0 + int32(xq[j]>>4)*y1
			sy += y0 + y1
		}
		sum += float32(sqy-8*sy) * float32(fp16At(x[:])*fp16At(y[:]))
	}
	return sum
}

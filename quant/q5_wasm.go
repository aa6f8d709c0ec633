//go:build goexperiment.simd

package quant

// The wasm SIMD128 kernels of Q5_0, Q5_1 and Q4_1 (kernels_wasm.go);
// dotQ5_0Go, dotQ5_1Go and dotQ4_1Go are their portable twins. The
// blocks' d·dy (and Q5_1's and Q4_1's min terms, fma32 one by one) are
// computed here, q5Chunk blocks at a time; the lanes and their fused
// multiply-adds in q5_wasm.s.

// q5Chunk is the number of blocks of one call of the asm kernels.
const q5Chunk = 32

// q5_0Acc, q5_1Acc and q4_1Acc add the terms of the nb ≥ 1 blocks at x
// and y (d[b] their d·dy) to the eight accumulators acc.
//
//go:noescape
func q5_0Acc(x, y *byte, d *float32, nb int, acc *[8]float32)

//go:noescape
func q5_1Acc(x, y *byte, d *float32, nb int, acc *[8]float32)

//go:noescape
func q4_1Acc(x, y *byte, d *float32, nb int, acc *[8]float32)

// dotQ5_0SIMD128 computes the same as dotQ5_0Ref, bit for bit.
func dotQ5_0SIMD128(n int, w, act []byte) float32 {
	nb := n / qk
	w, act = w[:nb*q5_0Bytes], act[:nb*q8_0Bytes]
	var acc [8]float32
	var d [q5Chunk]float32
	for c := 0; c < nb; c += q5Chunk {
		k := min(q5Chunk, nb-c)
		for j := range k {
			d[j] = fp16At(w[(c+j)*q5_0Bytes:]) * fp16At(act[(c+j)*q8_0Bytes:])
		}
		q5_0Acc(&w[c*q5_0Bytes], &act[c*q8_0Bytes], &d[0], k, &acc)
	}
	return hsumX86(&acc)
}

// dotQ5_1SIMD128 computes the same as dotQ5_1Ref, bit for bit.
func dotQ5_1SIMD128(n int, w, act []byte) float32 {
	return dotMinSIMD128(true, n, w, act)
}

// dotQ4_1SIMD128 computes the same as dotQ4_1Ref, bit for bit.
func dotQ4_1SIMD128(n int, w, act []byte) float32 {
	return dotMinSIMD128(false, n, w, act)
}

// dotMinSIMD128 is the dot of Q5_1 (q5) or Q4_1 weights with Q8_1
// activations.
func dotMinSIMD128(q5 bool, n int, w, act []byte) float32 {
	xsize := q4_1Bytes
	if q5 {
		xsize = q5_1Bytes
	}
	nb := n / qk
	w, act = w[:nb*xsize], act[:nb*q8_1Bytes]
	var acc [8]float32
	var d [q5Chunk]float32
	var summs float32
	for c := 0; c < nb; c += q5Chunk {
		k := min(q5Chunk, nb-c)
		for j := range k {
			x, y := w[(c+j)*xsize:], act[(c+j)*q8_1Bytes:]
			d[j] = fp16At(x) * fp16At(y)
			summs = fma32(fp16At(x[2:]), fp16At(y[2:]), summs)
		}
		if q5 {
			q5_1Acc(&w[c*xsize], &act[c*q8_1Bytes], &d[0], k, &acc)
		} else {
			q4_1Acc(&w[c*xsize], &act[c*q8_1Bytes], &d[0], k, &acc)
		}
	}
	return hsumX86(&acc) + summs
}

//go:build goexperiment.simd

package quant

// The wasm SIMD128 kernels of Q5_K (kernels_wasm.go); dotQ5_KGo in q5_k.go
// is their portable twin.

// q5KChunk is the number of blocks q5KDot takes in one call.
const q5KChunk = 32

// q5KDot accumulates the nb ≤ q5KChunk blocks at x and y into acc (the
// eight lanes, then the min sum) as the reference does, ds[2j] and
// ds[2j+1] block j's d and dmin (times the activation's scale); in
// q5_k_wasm.s.
//
//go:noescape
func q5KDot(x, y *byte, nb int, ds *[2 * q5KChunk]float32, acc *[12]float32)

// dotQ5_KSIMD128 computes the same as dotQ5_KRef, bit for bit: q5KDot
// computes the exact integer lanes of each block and accumulates them as
// the reference does, with fmaf in float64 lanes (wasm has no FMA
// instruction).
func dotQ5_KSIMD128(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q5_KBytes], act[:nb*q8_KBytes]
	var ds [2 * q5KChunk]float32
	var acc [12]float32
	for c := 0; c < nb; c += q5KChunk {
		k := min(q5KChunk, nb-c)
		for j := range k {
			x, yd := w[(c+j)*q5_KBytes:], f32At(act[(c+j)*q8_KBytes:])
			ds[2*j], ds[2*j+1] = yd*fp16At(x), -yd*fp16At(x[2:])
		}
		q5KDot(&w[c*q5_KBytes], &act[c*q8_KBytes], k, &ds, &acc)
	}
	return hsumX86((*[kLanes]float32)(acc[:])) + acc[kLanes]
}

// dotNQ5_KSIMD128 runs the dot once per activation, as Q4_K's does (a row
// stays in the L1 cache between the calls).
func dotNQ5_KSIMD128(n int, w []byte, acts [][]byte, out []float32) {
	dotEach(dotQ5_KSIMD128, n, w, acts, out)
}

// q5KDotPrep is q5KDot against the activation y prepared at yp by
// splitQ8_K, for nb blocks (ds[2j], ds[2j+1]: block j's d and dmin); in
// q5_k_wasm.s.
//
//go:noescape
func q5KDotPrep(x, y, yp *byte, nb int, ds *float32, acc *[12]float32)

// dotRowsQ5_KSIMD128 is the Q5_K DotRows kernel: the activation is split
// once per call (splitQ8_K, as the Q4_K kernel does), then q5KDotPrep
// runs each row (its float part is eight lanes of FMAs already, which
// rows in lanes could not share).
func dotRowsQ5_KSIMD128(n int, w, act []byte, out []float32) {
	nb := n / qkK
	rowBytes := nb * q5_KBytes
	if n > dotRowsMaxCols || nb == 0 {
		dotRows(dotQ5_KSIMD128, n, rowBytes, w, act, out)
		return
	}
	w, act = w[:len(out)*rowBytes], act[:nb*q8_KBytes]
	var yp [dotRowsMaxCols / qkK * q8KPrepBytes]byte
	splitQ8_K(&yp[0], &act[0], nb)
	var yd [dotRowsMaxCols / qkK]float32
	for j := range nb {
		yd[j] = f32At(act[j*q8_KBytes:])
	}
	var ds [2 * dotRowsMaxCols / qkK]float32
	for r := range out {
		x := w[r*rowBytes : (r+1)*rowBytes]
		for j := range nb {
			ds[2*j], ds[2*j+1] = yd[j]*fp16At(x[j*q5_KBytes:]), -yd[j]*fp16At(x[j*q5_KBytes+2:])
		}
		var acc [12]float32
		q5KDotPrep(&x[0], &act[0], &yp[0], nb, &ds[0], &acc)
		out[r] = hsumX86((*[kLanes]float32)(acc[:])) + acc[kLanes]
	}
}

func dotRowsNQ5_KSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	eachRow(dotNQ5_KSIMD128, n/qkK*q5_KBytes, n, w, acts, outs, at)
}

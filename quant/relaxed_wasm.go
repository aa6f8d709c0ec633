//go:build goexperiment.simd && relaxedsimd

package quant

// The relaxed-SIMD kernels: the relaxedsimd build (scripts/serve.sh's
// build/worker-relaxed.wasm, for the engines whose WebAssembly.validate
// accepts relaxed ops; Safari rejects a module with any), where they are
// laid over the SIMD128 table. Their integer sums (relaxed_wasm.s) are the
// SIMD128 kernels' exact sums, computed with the relaxed int8 dot
// (i16x8.relaxed_dot_i8x16_i7x16_s); the float parts are the SIMD128
// kernels' own, or (DotRowsN) the same operations in asm, or (Q5_K, Q3_K,
// Q2_K) the same fused multiply-adds by f32x4.relaxed_madd, so every
// kernel gives the bits of its portable twin, as the twin tests check (in Chromium, web/test/relaxed.test.mjs: Node 20's
// relaxed dot is wrong). The module needs scripts/relaxpatch after linking
// (relaxed_wasm.h). Q4_0 keeps its SIMD128 Dot, Q8_0 its SIMD128 Dot and
// DotRowsN, which measured as fast or faster (relaxed_wasm.s); Q4_0 has a
// relaxed DotRows (rows4_relaxed_wasm.s) and DotRowsN (relaxedn_wasm.go),
// Q8_0 a relaxed DotRows (rows4_relaxed_wasm.s: the activation's signs
// moved onto the weights, its magnitudes the i7 operand). IQ4_XS and
// IQ4_NL (iq4_relaxed_wasm.go; IQ4_NL keeps its SIMD128 Dot) move the
// activation's signs onto their signed levels the same way. Q4_1, Q5_0 and
// Q5_1 have relaxed DotRows and DotRowsN (q5rows_relaxed_wasm.go); Q5_K,
// Q3_K and Q2_K a relaxed Dot and DotRows, and DotRowsN kernels that are
// the SIMD128 ones with a relaxed float part (relaxedkx_wasm.go). These
// eight, summed in ggml's x86 order, take their references' fused
// multiply-adds (fma32) with f32x4.relaxed_madd, as do SwiGLU's and
// softmax's exponentials (exp_relaxed_wasm.go): the engine may round it
// once or twice, and web/picolm.js chooses the relaxed build only where a
// start-up probe finds it fused (Chromium on x86 with FMA3 and on Arm),
// where it is fma32.

// relaxedTables is the relaxed-SIMD table, laid over the SIMD128 one. Its
// DotN kernels are the SIMD128 table's; its DotRowsN kernels put four
// activations in the lanes of a vector (relaxedn_wasm.go).
func relaxedTables() []kernelTable {
	return []kernelTable{{
		name: "relaxed SIMD",
		formats: []formatKernels{
			{Q4_K, kernels{dot: dotQ4_KRelaxed, dotRows: dotRowsQ4_KRelaxed, dotRowsN: dotRowsNQ4_KRelaxed}},
			{Q6_K, kernels{dot: dotQ6_KRelaxed, dotRows: dotRowsQ6_KRelaxed, dotRowsN: dotRowsNQ6_KRelaxed}},
			{Q4_0, kernels{dotRows: dotRowsQ4_0Relaxed, dotRowsN: dotRowsNQ4_0Relaxed}},
			{Q8_0, kernels{dotRows: dotRowsQ8_0Relaxed}},
			{IQ4_XS, kernels{dot: dotIQ4_XSRelaxed, dotRows: dotRowsIQ4_XSRelaxed, dotRowsN: dotRowsNIQ4_XSRelaxed}},
			{IQ4_NL, kernels{dotRows: dotRowsIQ4_NLRelaxed, dotRowsN: dotRowsNIQ4_NLRelaxed}},
			{Q4_1, kernels{dotRows: dotRowsQ4_1Relaxed, dotRowsN: dotRowsNQ4_1Relaxed}},
			{Q5_0, kernels{dotRows: dotRowsQ5_0Relaxed, dotRowsN: dotRowsNQ5_0Relaxed}},
			{Q5_1, kernels{dotRows: dotRowsQ5_1Relaxed, dotRowsN: dotRowsNQ5_1Relaxed}},
			{Q5_K, kernels{dot: dotQ5_KRelaxed, dotRows: dotRowsQ5_KRelaxed, dotRowsN: dotRowsNQ5_KRelaxed}},
			{Q3_K, kernels{dot: dotQ3_KRelaxed, dotRows: dotRowsQ3_KRelaxed, dotRowsN: dotRowsNQ3_KRelaxed}},
			{Q2_K, kernels{dot: dotQ2_KRelaxed, dotRows: dotRowsQ2_KRelaxed, dotRowsN: dotRowsNQ2_KRelaxed}},
		},
	}}
}

//go:noescape
func q4KIntSumsRelaxed(x, y *byte, nb int, out *[2 * q4KChunk]int32)

//go:noescape
func q6KIntSumsRelaxed(x, y *byte, nb int, out *[q6KChunk]int32)

//go:noescape
func q4KRowSumsRelaxed(x, y *byte, nb, rows int, out *int32)

//go:noescape
func q6KRowSumsRelaxed(x, y *byte, nb, rows int, out *int32)

// dotQ4_KRelaxed is dotQ4_KSIMD128 with q4KIntSumsRelaxed.
func dotQ4_KRelaxed(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q4_KBytes], act[:nb*q8_KBytes]
	var sums [2 * q4KChunk]int32
	var sum float32
	for c := 0; c < nb; c += q4KChunk {
		k := min(q4KChunk, nb-c)
		q4KIntSumsRelaxed(&w[c*q4_KBytes], &act[c*q8_KBytes], k, &sums)
		sum = scaleQ4_KSums(sum, sums[:k], sums[q4KChunk:q4KChunk+k], w[c*q4_KBytes:], act[c*q8_KBytes:])
	}
	return sum
}

// dotQ6_KRelaxed is dotQ6_KSIMD128 with q6KIntSumsRelaxed.
func dotQ6_KRelaxed(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q6_KBytes], act[:nb*q8_KBytes]
	var sums [q6KChunk]int32
	var sum float32
	for c := 0; c < nb; c += q6KChunk {
		k := min(q6KChunk, nb-c)
		q6KIntSumsRelaxed(&w[c*q6_KBytes], &act[c*q8_KBytes], k, &sums)
		sum = scaleQ6_KSums(sum, sums[:k], w[c*q6_KBytes:], act[c*q8_KBytes:])
	}
	return sum
}

// dotRowsQ4_KRelaxed is the Q4_K DotRows kernel: dotRowsQ4_KSIMD128 with
// the activation as it is (no prepared copy).
func dotRowsQ4_KRelaxed(n int, w, act []byte, out []float32) {
	nb := n / qkK
	rowBytes := nb * q4_KBytes
	if n > dotRowsMaxCols || nb == 0 {
		dotRows(dotQ4_KRelaxed, n, rowBytes, w, act, out)
		return
	}
	w, act = w[:len(out)*rowBytes], act[:nb*q8_KBytes]
	var sums [2 * dotRowsSums]int32
	per := dotRowsSums / nb &^ 3
	r := 0
	for r+4 <= len(out) {
		k := min(per, (len(out)-r)&^3)
		q4KRowSumsRelaxed(&w[r*rowBytes], &act[0], nb, k, &sums[0])
		scaleRowsQ4_K(out[r:r+k], sums[:k*nb], sums[k*nb:2*k*nb], w[r*rowBytes:], act, rowBytes)
		r += k
	}
	for ; r < len(out); r++ {
		q4KRowSumsRelaxed(&w[r*rowBytes], &act[0], nb, 1, &sums[0])
		out[r] = scaleQ4_KSums(0, sums[:nb], sums[nb:2*nb], w[r*rowBytes:], act)
	}
}

// dotRowsQ6_KRelaxed is the Q6_K DotRows kernel, as dotRowsQ4_KRelaxed.
func dotRowsQ6_KRelaxed(n int, w, act []byte, out []float32) {
	nb := n / qkK
	rowBytes := nb * q6_KBytes
	if n > dotRowsMaxCols || nb == 0 {
		dotRows(dotQ6_KRelaxed, n, rowBytes, w, act, out)
		return
	}
	w, act = w[:len(out)*rowBytes], act[:nb*q8_KBytes]
	var sums [dotRowsSums]int32
	per := dotRowsSums / nb &^ 3
	r := 0
	for r+4 <= len(out) {
		k := min(per, (len(out)-r)&^3)
		q6KRowSumsRelaxed(&w[r*rowBytes], &act[0], nb, k, &sums[0])
		scaleRowsQ6_K(out[r:r+k], sums[:k*nb], w[r*rowBytes:], act, rowBytes)
		r += k
	}
	for ; r < len(out); r++ {
		q6KRowSumsRelaxed(&w[r*rowBytes], &act[0], nb, 1, &sums[0])
		out[r] = scaleQ6_KSums(0, sums[:nb], w[r*rowBytes:], act)
	}
}

//go:noescape
func q4_0Rows4Relaxed(x, yp *byte, yd *float32, ysum *int32, tab *float32, nb, rowBytes, groups int, out *float32)

// dotRowsQ4_0Relaxed is the Q4_0 DotRows kernel: dotRowsQ4_0SIMD128
// (dotrows_wasm.go) with q4_0Rows4Relaxed, which takes the activation as
// it is (the split gives its blocks' sums).
func dotRowsQ4_0Relaxed(n int, w, act []byte, out []float32) {
	var a q8_0Act
	if !a.prepare(n, q4_0Bytes, w, act, out) {
		dotRows(dotQ4_0SIMD128, n, n/qk*q4_0Bytes, w, act, out)
		return
	}
	if g := len(out) / 4; g > 0 {
		q4_0Rows4Relaxed(&w[0], &act[0], &a.yd[0], &a.ysum[0], &fp16ToFP32Table[0], a.nb, a.rowBytes, g, &out[0])
	}
	a.tail(dotQ4_0SIMD128, n, w, act, out)
}

//go:noescape
func q8_0Rows4Relaxed(x, yp *byte, yd *float32, ysum *int32, tab *float32, nb, rowBytes, groups int, out *float32) bool

//go:noescape
func absSignQ8_0(dst, src *byte, nb int) bool

// q8_0RelaxedGroups is the groups of four rows a q8_0Rows4Relaxed call
// takes: after a call that meets a weight byte of -128, the rest of the
// rows, from that call's first one, take the SIMD128 kernel.
const q8_0RelaxedGroups = 64

// dotRowsQ8_0Relaxed is the Q8_0 DotRows kernel: dotRowsQ8_0SIMD128
// (dotrows_wasm.go) with q8_0Rows4Relaxed, which moves the activation's
// signs onto the weights (rows4_relaxed_wasm.s). An activation or weight
// byte of -128, which ggml's quantizers never write, sends the rows from
// there on to q8_0Rows4, so every result is the SIMD128 kernel's.
func dotRowsQ8_0Relaxed(n int, w, act []byte, out []float32) {
	var a q8_0Act
	if !a.prepareScales(n, q8_0Bytes, w, act, out) {
		dotRows(dotQ8_0SIMD128, n, n/qk*q8_0Bytes, w, act, out)
		return
	}
	tab := &fp16ToFP32Table[0]
	g, r := len(out)/4, 0 // r: groups done
	if absSignQ8_0(&a.yp[0], &act[0], a.nb) {
		for r < g {
			k := min(q8_0RelaxedGroups, g-r)
			if !q8_0Rows4Relaxed(&w[4*r*a.rowBytes], &a.yp[0], &a.yd[0], &a.ysum[0], tab, a.nb, a.rowBytes, k, &out[4*r]) {
				break
			}
			r += k
		}
	}
	if r < g {
		splitQ8_0(&a.yp[0], &a.ysum[0], &act[0], a.nb)
		q8_0Rows4(&w[4*r*a.rowBytes], &a.yp[0], &a.yd[0], &a.ysum[0], tab, a.nb, a.rowBytes, g-r, &out[4*r])
	}
	a.tail(dotQ8_0SIMD128, n, w, act, out)
}

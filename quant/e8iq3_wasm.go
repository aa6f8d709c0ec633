//go:build goexperiment.simd

package quant

// The wasm SIMD128 DotRows and DotRowsN kernels of E8_IQ3 (e8iq3_wasm.s);
// dotE8IQ3 (its Dot on every platform) is their portable twin.

//go:noescape
func e8Rows(x, yp *byte, yd, tab *float32, grid *[4]uint8, signs *uint8, nb, rows int, out *float32)

//go:noescape
func e8RowsN(x, yp *byte, yd *float32, tab *float32, acc *int32, nb, rows, acts int, out *float32, grid *[4]uint8, signs *uint8)

// e8Kernels are E8_IQ3's row kernels.
var e8Kernels = kernels{dotRows: dotRowsE8IQ3SIMD128, dotRowsN: dotRowsNE8IQ3SIMD128}

// dotRowsE8IQ3SIMD128 is the E8_IQ3 DotRows kernel: the activation
// prepared once (splitQ8_K), then e8Rows, each result times 0.125 as
// dotE8IQ3 does: bit-identical to it.
func dotRowsE8IQ3SIMD128(n int, w, act []byte, out []float32) {
	nb := n / qkK
	rowBytes := nb * e8iq3Bytes
	if n > dotRowsMaxCols || nb == 0 || len(out) == 0 {
		dotRows(dotE8IQ3, n, rowBytes, w, act, out)
		return
	}
	w, act = w[:len(out)*rowBytes], act[:nb*q8_KBytes]
	var yp [dotRowsMaxCols / qkK * q8KPrepBytes]byte
	var yd [dotRowsMaxCols / qkK]float32
	splitQ8_K(&yp[0], &act[0], nb)
	for j := range nb {
		yd[j] = f32At(act[j*q8_KBytes:])
	}
	e8Rows(&w[0], &yp[0], &yd[0], &fp16ToFP32Table[0], &iq3xxsGrid[0], &ksignsIQ2XS[0], nb, len(out), &out[0])
	for i, v := range out {
		out[i] = 0.125 * v
	}
}

// dotNE8IQ3 is dotE8IQ3 per activation.
func dotNE8IQ3(n int, w []byte, acts [][]byte, out []float32) {
	dotEach(dotE8IQ3, n, w, acts, out)
}

// dotRowsNE8IQ3SIMD128 is the E8_IQ3 DotRowsN kernel, as
// dotRowsNTQ2_0SIMD128 (e8RowsN), each result times 0.125.
func dotRowsNE8IQ3SIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qkK
	rowBytes := nb * e8iq3Bytes
	if nb == 0 || actsPerPass(nb, len(acts)) == 0 {
		eachRow(dotNE8IQ3, rowBytes, n, w, acts, outs, at)
		return
	}
	rows := len(w) / rowBytes
	w = w[:rows*rowBytes]
	var yp [dotRowsNPrep]byte
	var yd [dotRowsNBlocks]float32 // [nb][k]
	var acc [16 * MaxDotN]int32
	var res [tqRowsPerCall * MaxDotN]float32
	for len(acts) > 0 {
		k := actsPerPass(nb, len(acts))
		prepareQ8_K(yp[:], acts[:k], nb)
		prepareScales(yd[:nb*k], acts[:k], nb)
		for r := 0; r < rows; r += tqRowsPerCall {
			c := min(tqRowsPerCall, rows-r)
			e8RowsN(&w[r*rowBytes], &yp[0], &yd[0], &fp16ToFP32Table[0], &acc[0], nb, c, k, &res[0], &iq3xxsGrid[0], &ksignsIQ2XS[0])
			for i, v := range res[:c*k] {
				res[i] = 0.125 * v
			}
			scatterRows(outs[:k], at+r, res[:c*k])
		}
		acts, outs = acts[k:], outs[k:]
	}
}

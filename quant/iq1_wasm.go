//go:build goexperiment.simd

package quant

// The wasm SIMD128 DotRows and DotRowsN kernels of IQ1_S (iq1_wasm.s);
// its Dot and DotN are iqKernels' (iqk_wasm.go). dotIQ1_SRef is their
// portable twin.

//go:noescape
func iq1sRows(x, yp, y *byte, yd, tab *float32, grid *[8]int8, nb, rows int, out *float32)

//go:noescape
func iq1sRowsN(x, yp *byte, yd *float32, tab *float32, acc *int32, nb, rows, acts int, out *float32, grid *[8]int8)

// iq1SKernels returns IQ1_S's kernels: iqKernels' Dot and DotN, and the
// row kernels below.
func iq1SKernels() kernels {
	k := iqKernels(IQ1_S)
	k.dotRows = dotRowsIQ1_SSIMD128
	k.dotRowsN = dotRowsNIQ1_SSIMD128
	return k
}

// dotIQ1_SSIMD128 and dotNIQ1_SSIMD128 are iqKernels' Dot and DotN of
// IQ1_S, for the rows too long for the row kernels.
func dotIQ1_SSIMD128(n int, w, act []byte) float32 {
	var out [1]float32
	iqDotScaledSIMD128(IQ1_S, n, w, [][]byte{act}, out[:])
	return out[0]
}

func dotNIQ1_SSIMD128(n int, w []byte, acts [][]byte, out []float32) {
	iqDotScaledSIMD128(IQ1_S, n, w, acts, out)
}

// iq1Rows is the most rows an IQ1 row kernel computes per call (its
// results then go to the outputs).
const iq1Rows = 64

// dotRowsIQ1_SSIMD128 is the IQ1_S DotRows kernel: the activation
// prepared once (splitQ8_K), then iq1sRows, 64 rows at a time; each
// result is bit-identical to dotIQ1_SRef's.
func dotRowsIQ1_SSIMD128(n int, w, act []byte, out []float32) {
	nb := n / qkK
	rowBytes := nb * iq1_SBytes
	if n > dotRowsMaxCols || nb == 0 || len(out) == 0 {
		dotRows(dotIQ1_SSIMD128, n, rowBytes, w, act, out)
		return
	}
	w, act = w[:len(out)*rowBytes], act[:nb*q8_KBytes]
	var yp [dotRowsMaxCols / qkK * q8KPrepBytes]byte
	var yd [dotRowsMaxCols / qkK]float32
	var res [2 * iq1Rows]float32
	splitQ8_K(&yp[0], &act[0], nb)
	for j := range nb {
		yd[j] = f32At(act[j*q8_KBytes:])
	}
	for r := 0; r < len(out); r += iq1Rows {
		c := min(iq1Rows, len(out)-r)
		iq1sRows(&w[r*rowBytes], &yp[0], &act[0], &yd[0], &fp16ToFP32Table[0], &iq1sGrid[0], nb, c, &res[0])
		for i := range out[r : r+c] {
			out[r+i] = res[2*i] + float32(iq1sDelta*res[2*i+1])
		}
	}
}

// dotRowsNIQ1_SSIMD128 is the IQ1_S DotRowsN kernel, as
// dotRowsNTQ2_0SIMD128 (iq1sRowsN).
func dotRowsNIQ1_SSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qkK
	rowBytes := nb * iq1_SBytes
	if nb == 0 || actsPerPass(nb, len(acts)) == 0 {
		eachRow(dotNIQ1_SSIMD128, rowBytes, n, w, acts, outs, at)
		return
	}
	rows := len(w) / rowBytes
	w = w[:rows*rowBytes]
	var yp [dotRowsNPrep]byte
	var yd [dotRowsNBlocks]float32 // [nb][k]
	var acc [20 * MaxDotN]int32
	var res [2 * iq1Rows * MaxDotN]float32
	for len(acts) > 0 {
		k := actsPerPass(nb, len(acts))
		prepareQ8_K(yp[:], acts[:k], nb)
		prepareScales(yd[:nb*k], acts[:k], nb)
		for r := 0; r < rows; r += iq1Rows {
			c := min(iq1Rows, rows-r)
			iq1sRowsN(&w[r*rowBytes], &yp[0], &yd[0], &fp16ToFP32Table[0], &acc[0], nb, c, k, &res[0], &iq1sGrid[0])
			iq1Scatter(outs[:k], at+r, res[:2*c*k])
		}
		acts, outs = acts[k:], outs[k:]
	}
}

// iq1Scatter sets outs[a][at+i] to laneSum8 plus iq1sDelta times the
// delta sum, res[2(k·i+a)] and res[2(k·i+a)+1] (k = len(outs)).
func iq1Scatter(outs [][]float32, at int, res []float32) {
	k := len(outs)
	for a, o := range outs {
		o = o[at : at+len(res)/(2*k)]
		for i := range o {
			j := 2 * (k*i + a)
			o[i] = res[j] + float32(iq1sDelta*res[j+1])
		}
	}
}

//go:noescape
func iq1mRows(x, yp *byte, yd, tab *float32, grid *[8]int8, nb, rows int, out *float32)

//go:noescape
func iq1mRowsN(x, yp *byte, yd *float32, tab *float32, acc *int32, nb, rows, acts int, out *float32, grid *[8]int8)

// iq1MKernels returns IQ1_M's kernels: iqKernels' Dot and DotN, and the
// row kernels below.
func iq1MKernels() kernels {
	k := iqKernels(IQ1_M)
	k.dotRows = dotRowsIQ1_MSIMD128
	k.dotRowsN = dotRowsNIQ1_MSIMD128
	return k
}

// dotIQ1_MSIMD128 and dotNIQ1_MSIMD128 are iqKernels' Dot and DotN of
// IQ1_M, for the rows too long for the row kernels.
func dotIQ1_MSIMD128(n int, w, act []byte) float32 {
	var out [1]float32
	iqDotScaledSIMD128(IQ1_M, n, w, [][]byte{act}, out[:])
	return out[0]
}

func dotNIQ1_MSIMD128(n int, w []byte, acts [][]byte, out []float32) {
	iqDotScaledSIMD128(IQ1_M, n, w, acts, out)
}

// dotRowsIQ1_MSIMD128 is the IQ1_M DotRows kernel, as
// dotRowsIQ1_SSIMD128 (iq1mRows).
func dotRowsIQ1_MSIMD128(n int, w, act []byte, out []float32) {
	nb := n / qkK
	rowBytes := nb * iq1_MBytes
	if n > dotRowsMaxCols || nb == 0 || len(out) == 0 {
		dotRows(dotIQ1_MSIMD128, n, rowBytes, w, act, out)
		return
	}
	w, act = w[:len(out)*rowBytes], act[:nb*q8_KBytes]
	var yp [dotRowsMaxCols / qkK * q8KPrepBytes]byte
	var yd [dotRowsMaxCols / qkK]float32
	var res [2 * iq1Rows]float32
	splitQ8_K(&yp[0], &act[0], nb)
	for j := range nb {
		yd[j] = f32At(act[j*q8_KBytes:])
	}
	for r := 0; r < len(out); r += iq1Rows {
		c := min(iq1Rows, len(out)-r)
		iq1mRows(&w[r*rowBytes], &yp[0], &yd[0], &fp16ToFP32Table[0], &iq1sGrid[0], nb, c, &res[0])
		for i := range out[r : r+c] {
			out[r+i] = res[2*i] + float32(iq1sDelta*res[2*i+1])
		}
	}
}

// dotRowsNIQ1_MSIMD128 is the IQ1_M DotRowsN kernel, as
// dotRowsNIQ1_SSIMD128 (iq1mRowsN).
func dotRowsNIQ1_MSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qkK
	rowBytes := nb * iq1_MBytes
	if nb == 0 || actsPerPass(nb, len(acts)) == 0 {
		eachRow(dotNIQ1_MSIMD128, rowBytes, n, w, acts, outs, at)
		return
	}
	rows := len(w) / rowBytes
	w = w[:rows*rowBytes]
	var yp [dotRowsNPrep]byte
	var yd [dotRowsNBlocks]float32 // [nb][k]
	var acc [32 * MaxDotN]int32
	var res [2 * iq1Rows * MaxDotN]float32
	for len(acts) > 0 {
		k := actsPerPass(nb, len(acts))
		prepareQ8_K(yp[:], acts[:k], nb)
		prepareScales(yd[:nb*k], acts[:k], nb)
		for r := 0; r < rows; r += iq1Rows {
			c := min(iq1Rows, rows-r)
			iq1mRowsN(&w[r*rowBytes], &yp[0], &yd[0], &fp16ToFP32Table[0], &acc[0], nb, c, k, &res[0], &iq1sGrid[0])
			iq1Scatter(outs[:k], at+r, res[:2*c*k])
		}
		acts, outs = acts[k:], outs[k:]
	}
}

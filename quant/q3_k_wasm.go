//go:build goexperiment.simd

package quant

// The wasm SIMD128 kernels of Q3_K and Q2_K (kernels_wasm.go); dotQ3_KGo
// and dotQ2_KGo are their portable twins.

// q3KChunk is the number of blocks q3KDot and q2KDot take in one call.
const q3KChunk = 32

// q3KDot and q2KDot accumulate the nb ≤ q3KChunk blocks at x and y into
// acc[0:8] as the references do, ds[2j] and ds[2j+1] block j's d and dmin
// (times the activation's scale; Q3_K has no dmin); in q3_k_wasm.s.
//
//go:noescape
func q3KDot(x, y *byte, nb int, ds *[2 * q3KChunk]float32, acc *[12]float32)

//go:noescape
func q2KDot(x, y *byte, nb int, ds *[2 * q3KChunk]float32, acc *[12]float32)

// dotQ3_KSIMD128 computes the same as dotQ3_KRef, bit for bit: q3KDot
// computes the exact integer lanes of each block and accumulates them as
// the reference does, with fmaf in float64 lanes (wasm has no FMA
// instruction).
func dotQ3_KSIMD128(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q3_KBytes], act[:nb*q8_KBytes]
	var ds [2 * q3KChunk]float32
	var acc [12]float32
	for c := 0; c < nb; c += q3KChunk {
		k := min(q3KChunk, nb-c)
		for j := range k {
			ds[2*j] = f32At(act[(c+j)*q8_KBytes:]) * fp16At(w[(c+j)*q3_KBytes+108:])
		}
		q3KDot(&w[c*q3_KBytes], &act[c*q8_KBytes], k, &ds, &acc)
	}
	return hsumX86((*[kLanes]float32)(acc[:]))
}

// dotQ2_KSIMD128 computes the same as dotQ2_KRef, bit for bit, as
// dotQ3_KSIMD128 does.
func dotQ2_KSIMD128(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q2_KBytes], act[:nb*q8_KBytes]
	var ds [2 * q3KChunk]float32
	var acc [12]float32
	for c := 0; c < nb; c += q3KChunk {
		k := min(q3KChunk, nb-c)
		for j := range k {
			x, yd := w[(c+j)*q2_KBytes:], f32At(act[(c+j)*q8_KBytes:])
			ds[2*j], ds[2*j+1] = yd*fp16At(x[80:]), -yd*fp16At(x[82:])
		}
		q2KDot(&w[c*q2_KBytes], &act[c*q8_KBytes], k, &ds, &acc)
	}
	return hsumX86((*[kLanes]float32)(acc[:]))
}

// The multi-activation kernels run the dot once per activation, as Q5_K's
// do.

func dotNQ3_KSIMD128(n int, w []byte, acts [][]byte, out []float32) {
	dotEach(dotQ3_KSIMD128, n, w, acts, out)
}

// q3KDotPrep and q2KDotPrep are q3KDot and q2KDot against the activation
// y prepared at yp by splitQ8_K, for nb blocks; in q3_k_wasm.s.
//
//go:noescape
func q3KDotPrep(x, y, yp *byte, nb int, ds *float32, acc *[12]float32)

//go:noescape
func q2KDotPrep(x, y, yp *byte, nb int, ds *float32, acc *[12]float32)

// dotRowsQ3_KSIMD128 is the Q3_K DotRows kernel: the activation is split
// once per call (splitQ8_K), then q3KDotPrep runs each row.
func dotRowsQ3_KSIMD128(n int, w, act []byte, out []float32) {
	dotRowsPrepK(false, n, w, act, out)
}

// dotRowsPrepK is the DotRows kernel of Q2_K (q2) or Q3_K: the
// activation prepared once, then q2KDotPrep or q3KDotPrep per row; rows
// longer than dotRowsMaxCols go to the dot per row. (The kernels are
// called by name: through a func value the stack arrays would escape.)
func dotRowsPrepK(q2 bool, n int, w, act []byte, out []float32) {
	size, dOff, dot := q3_KBytes, 108, dotQ3_KSIMD128
	if q2 {
		size, dOff, dot = q2_KBytes, 80, dotQ2_KSIMD128
	}
	nb := n / qkK
	rowBytes := nb * size
	if n > dotRowsMaxCols || nb == 0 {
		dotRows(dot, n, rowBytes, w, act, out)
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
			ds[2*j] = yd[j] * fp16At(x[j*size+dOff:])
			if q2 {
				ds[2*j+1] = -yd[j] * fp16At(x[j*size+dOff+2:])
			}
		}
		var acc [12]float32
		if q2 {
			q2KDotPrep(&x[0], &act[0], &yp[0], nb, &ds[0], &acc)
		} else {
			q3KDotPrep(&x[0], &act[0], &yp[0], nb, &ds[0], &acc)
		}
		out[r] = hsumX86((*[kLanes]float32)(acc[:]))
	}
}

func dotRowsNQ3_KSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	eachRow(dotNQ3_KSIMD128, n/qkK*q3_KBytes, n, w, acts, outs, at)
}

func dotNQ2_KSIMD128(n int, w []byte, acts [][]byte, out []float32) {
	dotEach(dotQ2_KSIMD128, n, w, acts, out)
}

// dotRowsQ2_KSIMD128 is the Q2_K DotRows kernel, as Q3_K's.
func dotRowsQ2_KSIMD128(n int, w, act []byte, out []float32) {
	dotRowsPrepK(true, n, w, act, out)
}

func dotRowsNQ2_KSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	eachRow(dotNQ2_KSIMD128, n/qkK*q2_KBytes, n, w, acts, outs, at)
}

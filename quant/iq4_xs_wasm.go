//go:build goexperiment.simd

package quant

// The wasm SIMD128 kernel of IQ4_XS (kernels_wasm.go); dotIQ4_XSGo in
// iq4_xs.go is its portable twin.

// iq4XSChunk is the number of blocks whose scales dotIQ4_XSSIMD128
// prepares for one call of iq4XSAcc.
const iq4XSChunk = 32

// iq4XSAcc adds the terms of the nb ≥ 1 IQ4_XS blocks at x and Q8_K
// blocks at y (d[b] their d·dy, tab kvaluesIQ4NL) to the eight
// accumulators acc, in iq4_xs_wasm.s.
//
//go:noescape
func iq4XSAcc(x, y *byte, d *float32, nb int, tab *[16]int8, acc *[8]float32)

// dotIQ4_XSSIMD128 computes the same as dotIQ4_XSRef, bit for bit: the
// blocks' d·dy are computed here (the fp16 conversion), the lanes and their
// fused multiply-adds in iq4XSAcc.
func dotIQ4_XSSIMD128(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*iq4_XSBytes], act[:nb*q8_KBytes]
	var acc [8]float32
	var d [iq4XSChunk]float32
	for c := 0; c < nb; c += iq4XSChunk {
		k := min(iq4XSChunk, nb-c)
		for j := range k {
			d[j] = fp16At(w[(c+j)*iq4_XSBytes:]) * f32At(act[(c+j)*q8_KBytes:])
		}
		iq4XSAcc(&w[c*iq4_XSBytes], &act[c*q8_KBytes], &d[0], k, &kvaluesIQ4NL, &acc)
	}
	return hsumX86(&acc)
}

// iq4XSAccRow is iq4XSAcc with the activation prepared by splitQ8_K at yp.
//
//go:noescape
func iq4XSAccRow(x, yp *byte, d *float32, nb int, tab *[16]int8, acc *[8]float32)

// dotRowsIQ4_XSSIMD128 is the IQ4_XS DotRows kernel: the activation is
// split once (splitQ8_K), then each row is dotIQ4_XSSIMD128 against it.
func dotRowsIQ4_XSSIMD128(n int, w, act []byte, out []float32) {
	nb := n / qkK
	rowBytes := nb * iq4_XSBytes
	if n > dotRowsMaxCols || nb == 0 {
		dotRows(dotIQ4_XSSIMD128, n, rowBytes, w, act, out)
		return
	}
	w, act = w[:len(out)*rowBytes], act[:nb*q8_KBytes]
	var yp [dotRowsMaxCols / qkK * q8KPrepBytes]byte
	splitQ8_K(&yp[0], &act[0], nb)
	var yd [dotRowsMaxCols / qkK]float32
	for j := range nb {
		yd[j] = f32At(act[j*q8_KBytes:])
	}
	var d [dotRowsMaxCols / qkK]float32
	for r := range out {
		x := w[r*rowBytes : (r+1)*rowBytes]
		for j := range nb {
			d[j] = fp16At(x[j*iq4_XSBytes:]) * yd[j]
		}
		var acc [8]float32
		iq4XSAccRow(&x[0], &yp[0], &d[0], nb, &kvaluesIQ4NL, &acc)
		out[r] = hsumX86(&acc)
	}
}

// iq4XSRowsN adds the lanes of the row at x (nb ≥ 1 IQ4_XS blocks)
// against the k ≥ 1 activations prepared at yp (splitQ8_K, nb blocks
// each), times d[i·nb+j] (block j's d·dy for activation i), to acc[i] by
// fused multiply-adds, as dotIQ4_XSRef does; lanes is scratch. In
// iq4_xs_wasm.s.
//
//go:noescape
func iq4XSRowsN(x *byte, nb int, yp *byte, k int, d *float32, acc *[MaxDotN][8]float32, lanes *[MaxDotN][8]int32)

// dotRowsNIQ4_XSSIMD128 is the IQ4_XS DotRowsN kernel: the activations
// split once per call (as many at a time as x86Prep holds), then each
// row's blocks decoded once against all of them (iq4XSRowsN); rows too
// long for one activation in the buffer take the Dot.
func dotRowsNIQ4_XSSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	dotRowsNIQ4_XS(false, n, w, acts, outs, at)
}

// dotRowsNIQ4_XS is dotRowsNIQ4_XSSIMD128 and, fused, the relaxed-SIMD
// kernel (dotRowsNIQ4_XSRelaxed: iq4XSRowsNRelaxed, whose fused
// multiply-adds are f32x4.relaxed_madd).
func dotRowsNIQ4_XS(fused bool, n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qkK
	rowBytes := nb * iq4_XSBytes
	if nb == 0 || nb > x86PrepBlocks {
		matMul(dotIQ4_XSSIMD128, n, rowBytes, w, acts, outs, at)
		return
	}
	rows := len(w) / rowBytes
	w = w[:rows*rowBytes]
	var (
		yp    [x86Prep]byte
		yd    [x86PrepBlocks]float32 // [activation][block]
		d     [x86PrepBlocks]float32 // [activation][block]: d·dy
		acc   [MaxDotN][8]float32
		lanes [MaxDotN][8]int32
	)
	for len(acts) > 0 {
		k := min(len(acts), MaxDotN, x86PrepBlocks/nb)
		for i, a := range acts[:k] {
			a = a[:nb*q8_KBytes]
			splitQ8_K(&yp[i*nb*q8KPrepBytes], &a[0], nb)
			for j := range nb {
				yd[i*nb+j] = f32At(a[j*q8_KBytes:])
			}
		}
		for r := range rows {
			x := w[r*rowBytes : (r+1)*rowBytes]
			for j := range nb {
				dx := fp16At(x[j*iq4_XSBytes:])
				for i := j; i < k*nb; i += nb {
					d[i] = dx * yd[i]
				}
			}
			clear(acc[:k])
			if fused {
				iq4XSRowsNRelaxed(&x[0], nb, &yp[0], k, &d[0], &acc, &lanes)
			} else {
				iq4XSRowsN(&x[0], nb, &yp[0], k, &d[0], &acc, &lanes)
			}
			for i := range k {
				outs[i][at+r] = hsumX86(&acc[i])
			}
		}
		acts, outs = acts[k:], outs[k:]
	}
}

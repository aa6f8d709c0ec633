//go:build goexperiment.simd

package quant

import "simd/archsimd"

// The wasm SIMD128 DotRows and DotRowsN kernels of the 32-weight formats
// whose references add each block's terms by fused multiply-adds (fma32):
// IQ4_NL's DotRowsN here; Q5_0, Q5_1 and Q4_1 in q5rows_wasm.go, IQ4_NL's
// DotRows in iq4_nl_rows_wasm.go (kernels_wasm.go; their Dot kernels are in
// iq4_nl_wasm.go and q5_wasm.go).
//
// IQ4_NL: the activations are prepared once per call, four to a vector
// (prepQ8_0Quad); the asm (q32rows_wasm.s) computes each block's exact
// integer sums, and fmaLanes adds them times the blocks' scales to four
// float32 lanes (four activations) in block order with the reference's
// fused multiply-adds, emulated exactly, so every result is bit-identical
// to the Dot's.

//go:noescape
func iq4NLRowSumsN(x, yq *byte, tab *int8, nb, quads int, out *int32)

//go:noescape
func fmaLanes(s *int32, d *float32, n, stride int, acc *[4]float32)

// dotRowsNIQ4_NLSIMD128 is the IQ4_NL DotRowsN kernel: the activations
// prepared into quads (up to four, as many as the buffer holds), then each
// row's block sums against all of them in asm and their float part per
// quad (fmaLanes); rows too long for one quad in the buffer take the Dot.
func dotRowsNIQ4_NLSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qk
	rowBytes := nb * iq4_NLBytes
	if nb == 0 || nb > dotRowsNQ8Blocks {
		matMul(dotIQ4_NLSIMD128, n, rowBytes, w, acts, outs, at)
		return
	}
	rows := len(w) / rowBytes
	w = w[:rows*rowBytes]
	tab := &fp16ToFP32Table[0]
	var yq [dotRowsNPrep]byte
	var s [MaxDotN * dotRowsNQ8Blocks]int32 // [block][quad][lane]
	var d [MaxDotN * dotRowsNQ8Blocks]float32
	var dy [MaxDotN * dotRowsNQ8Blocks]float32 // [quad][block][lane]: the activations' scales
	for len(acts) > 0 {
		quads := min((len(acts)+3)/4, MaxDotN/4, dotRowsNQ8Blocks/nb)
		k := min(len(acts), 4*quads)
		for q := range quads {
			var ys [4]*byte
			for l := range ys {
				a := acts[min(4*q+l, k-1)] // a short quad repeats its last activation
				ys[l] = &a[:nb*q8_0Bytes][0]
			}
			prepQ8_0Quad(&yq[q*nb*q8PrepBlock], &ys, tab, nb)
			for j := range nb {
				for l := range 4 {
					dy[(q*nb+j)*4+l] = fp16At(acts[min(4*q+l, k-1)][j*q8_0Bytes:])
				}
			}
		}
		for r := range rows {
			x := w[r*rowBytes : (r+1)*rowBytes]
			iq4NLRowSumsN(&x[0], &yq[0], &kvaluesIQ4NL[0], nb, quads, &s[0])
			for j := range nb {
				dx := archsimd.BroadcastFloat32x4(fp16At(x[j*iq4_NLBytes:]))
				for q := range quads {
					y := archsimd.LoadFloat32x4Array((*[4]float32)(dy[(q*nb+j)*4:]))
					dx.Mul(y).StoreArray((*[4]float32)(d[16*j+4*q:]))
				}
			}
			for q := range quads {
				var acc [4]float32
				fmaLanes(&s[4*q], &d[4*q], nb, 64, &acc)
				for l := range min(4, k-4*q) {
					outs[4*q+l][at+r] = acc[l]
				}
			}
		}
		acts, outs = acts[k:], outs[k:]
	}
}

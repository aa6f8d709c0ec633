//go:build goexperiment.simd

package quant

// The wasm SIMD128 DotRows and DotRowsN kernels of the codebook formats
// IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS and IQ3_S (kernels_wasm.go); their
// references (dotIQ2_XXSRef, …) are their portable twins. The activations
// are prepared once per call (splitQ8_K, as many as the buffer on the
// stack holds), then each row is decoded once, 64 weights at a time, and
// dotted with every prepared activation by its format's row kernel in
// iqgrid_wasm.s, which also adds each block's eight lanes, times d, to the
// activation's eight float32 running sums in the references' order; the
// sums are reduced here (laneSum8) and scaled by the format's final factor.
// Dot and DotN stay with iqKernels (iqk_wasm.go).
//
// The rates are bounded by the formats' shape, not the code around them
// (AMD EPYC Zen 5 under Node 20): a MatMul of 16 activations spends most
// of its time in one i32x4.dot_i16x8_s per eight weights per activation,
// as Q4_K's does, so its bytes per second relative to Q4_K's are at most
// about the ratio of bits per weight (IQ3_S 3.44/4.5 = 0.76); a MatVec
// spends most of its time gathering the 32 or 64 grid points of each block
// by index (several scalar instructions each), so it decodes at 0.26-0.31x
// Q4_K's rate.

//go:noescape
func iq2XXSRowN(x, yp *byte, yd, dx *float32, grid, ks *byte, iacc *int32, facc *float32, nb, acts int)

//go:noescape
func iq2XSRowN(x, yp *byte, yd, dx *float32, grid, ks *byte, iacc *int32, facc *float32, nb, acts int)

//go:noescape
func iq2SRowN(x, yp *byte, yd, dx *float32, grid, ks *byte, iacc *int32, facc *float32, nb, acts int)

//go:noescape
func iq3XXSRowN(x, yp *byte, yd, dx *float32, grid, ks *byte, iacc *int32, facc *float32, nb, acts int)

//go:noescape
func iq3SRowN(x, yp *byte, yd, dx *float32, grid, ks *byte, iacc *int32, facc *float32, nb, acts int)

// iqGrids are the grids of the row kernels, each with room after its last
// point for the rest of the 16 bytes a v128.load of it reads.
var iqGrids = func() (g struct {
	iq2xxs [256 + 1][8]uint8
	iq2xs  [512 + 1][8]uint8
	iq2s   [1024 + 1][8]uint8
	iq3xxs [256 + 3][4]uint8
	iq3s   [512 + 3][4]uint8
}) {
	copy(g.iq2xxs[:], iq2xxsGrid[:])
	copy(g.iq2xs[:], iq2xsGrid[:])
	copy(g.iq2s[:], iq2sGrid[:])
	copy(g.iq3xxs[:], iq3xxsGrid[:])
	copy(g.iq3s[:], iq3sGrid[:])
	return g
}()

// iqSignMasks holds for each 7-bit sign index i the 8 bytes 0xff where bit
// j of ksignsIQ2XS[i] is set (else 0), and room for a v128.load of the last.
var iqSignMasks = func() (m [128 + 1][8]uint8) {
	for i, s := range ksignsIQ2XS {
		for j := range 8 {
			if s>>j&1 != 0 {
				m[i][j] = 0xff
			}
		}
	}
	return m
}()

// iqGridKernels returns iqKernels(t) with the DotRows and DotRowsN kernels
// of iqGridRowsN.
func iqGridKernels(t Type) kernels {
	k := iqKernels(t)
	switch t {
	case IQ2_XXS:
		k.dotRows, k.dotRowsN = dotRowsIQ2_XXSSIMD128, dotRowsNIQ2_XXSSIMD128
	case IQ2_XS:
		k.dotRows, k.dotRowsN = dotRowsIQ2_XSSIMD128, dotRowsNIQ2_XSSIMD128
	case IQ2_S:
		k.dotRows, k.dotRowsN = dotRowsIQ2_SSIMD128, dotRowsNIQ2_SSIMD128
	case IQ3_XXS:
		k.dotRows, k.dotRowsN = dotRowsIQ3_XXSSIMD128, dotRowsNIQ3_XXSSIMD128
	case IQ3_S:
		k.dotRows, k.dotRowsN = dotRowsIQ3_SSIMD128, dotRowsNIQ3_SSIMD128
	}
	return k
}

func dotRowsIQ2_XXSSIMD128(n int, w, act []byte, out []float32) { iqGridRows(IQ2_XXS, n, w, act, out) }
func dotRowsIQ2_XSSIMD128(n int, w, act []byte, out []float32)  { iqGridRows(IQ2_XS, n, w, act, out) }
func dotRowsIQ2_SSIMD128(n int, w, act []byte, out []float32)   { iqGridRows(IQ2_S, n, w, act, out) }
func dotRowsIQ3_XXSSIMD128(n int, w, act []byte, out []float32) { iqGridRows(IQ3_XXS, n, w, act, out) }
func dotRowsIQ3_SSIMD128(n int, w, act []byte, out []float32)   { iqGridRows(IQ3_S, n, w, act, out) }

func dotRowsNIQ2_XXSSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	iqGridRowsN(IQ2_XXS, n, w, acts, outs, at)
}
func dotRowsNIQ2_XSSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	iqGridRowsN(IQ2_XS, n, w, acts, outs, at)
}
func dotRowsNIQ2_SSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	iqGridRowsN(IQ2_S, n, w, acts, outs, at)
}
func dotRowsNIQ3_XXSSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	iqGridRowsN(IQ3_XXS, n, w, acts, outs, at)
}
func dotRowsNIQ3_SSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	iqGridRowsN(IQ3_S, n, w, acts, outs, at)
}

// iqGridRows is the DotRows kernel of the codebook format t: each row of
// w against the activation act, prepared once.
func iqGridRows(t Type, n int, w, act []byte, out []float32) {
	nb := n / qkK
	rowBytes := nb * iqSize(t)
	if nb == 0 || nb > dotRowsMaxCols/qkK {
		dotRows(iqKernels(t).dot, n, rowBytes, w, act, out)
		return
	}
	w, act = w[:len(out)*rowBytes], act[:nb*q8_KBytes]
	var yp [dotRowsMaxCols / qkK * q8KPrepBytes]byte
	splitQ8_K(&yp[0], &act[0], nb)
	var yd [dotRowsMaxCols / qkK]float32
	for j := range nb {
		yd[j] = f32At(act[j*q8_KBytes:])
	}
	var dx [dotRowsMaxCols/qkK + 3]float32
	var iacc [8]int32
	f := iqFactor(t)
	for r := range out {
		x := w[r*rowBytes : (r+1)*rowBytes]
		var facc [8]float32
		iqGridRow(t, x, &yp[0], &yd[0], dx[:], &iacc[0], &facc[0], nb, 1)
		out[r] = f * laneSum8(&facc)
	}
}

// iqGridRowsN is the DotRowsN kernel of the codebook format t.
func iqGridRowsN(t Type, n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qkK
	rowBytes := nb * iqSize(t)
	if nb == 0 || actsPerPass(nb, len(acts)) == 0 {
		eachRow(iqKernels(t).dotN, rowBytes, n, w, acts, outs, at)
		return
	}
	rows := len(w) / rowBytes
	w = w[:rows*rowBytes]
	var yp [dotRowsNPrep]byte
	var yd [dotRowsNBlocks]float32 // [nb][k]: the activations' scales
	var dx [dotRowsNBlocks + 3]float32
	var iacc [8 * MaxDotN]int32
	var facc [8 * MaxDotN]float32
	f := iqFactor(t)
	for len(acts) > 0 {
		k := actsPerPass(nb, len(acts))
		prepareQ8_K(yp[:], acts[:k], nb)
		prepareScales(yd[:nb*k], acts[:k], nb)
		for r := range rows {
			x := w[r*rowBytes : (r+1)*rowBytes]
			clear(facc[:8*k])
			iqGridRow(t, x, &yp[0], &yd[0], dx[:], &iacc[0], &facc[0], nb, k)
			for i, o := range outs[:k] {
				o[at+r] = f * laneSum8((*[8]float32)(facc[8*i:]))
			}
		}
		acts, outs = acts[k:], outs[k:]
	}
}

// iqGridRow adds the lanes of the row x (nb blocks of type t) against the
// k activations prepared at yp (yd their scales, [nb][k]) times d to
// facc[8i..8i+7] for activation i, with t's row kernel; dx is room for
// the row's nb fp16(d), iacc for 8·k int32. (The kernels are called by
// name: through a func value the stack arrays would escape.)
func iqGridRow(t Type, x []byte, yp *byte, yd *float32, dx []float32, iacc *int32, facc *float32, nb, k int) {
	size := iqSize(t)
	rowScales(dx, x, nb, size, 0)
	ks := &iqSignMasks[0][0]
	switch t {
	case IQ2_XXS:
		iq2XXSRowN(&x[0], yp, yd, &dx[0], &iqGrids.iq2xxs[0][0], ks, iacc, facc, nb, k)
	case IQ2_XS:
		iq2XSRowN(&x[0], yp, yd, &dx[0], &iqGrids.iq2xs[0][0], ks, iacc, facc, nb, k)
	case IQ2_S:
		iq2SRowN(&x[0], yp, yd, &dx[0], &iqGrids.iq2s[0][0], ks, iacc, facc, nb, k)
	case IQ3_XXS:
		iq3XXSRowN(&x[0], yp, yd, &dx[0], &iqGrids.iq3xxs[0][0], ks, iacc, facc, nb, k)
	case IQ3_S:
		iq3SRowN(&x[0], yp, yd, &dx[0], &iqGrids.iq3s[0][0], ks, iacc, facc, nb, k)
	}
}

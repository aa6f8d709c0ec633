package quant

// Matrix × batch products: consecutive weight rows against up to MaxDotN
// activations (a prefill batch). A DotRowsN kernel prepares the
// activations once per call (their scales widened, their sums taken, laid
// out so that one vector holds a block's value for several activations)
// and then runs every row against all of them, so the weights are decoded
// once per batch and the per-block float work is shared between the
// activations in the lanes of a vector. The results are bit-identical to
// Dot's (TestMatMul).

// MatMul sets outs[i][at+r] to Dot(n, w[r*rowBytes:], acts[i]) for every
// activation i and every row r < len(w)/rowBytes (rowBytes =
// n/BlockSize*TypeSize), with the type's DotRowsN kernel if it has one,
// else DotEach row by row.
func (tr *Traits) MatMul(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	rowBytes := n / tr.BlockSize * tr.TypeSize
	for len(acts) > 0 {
		k := min(len(acts), MaxDotN)
		if tr.DotRowsN != nil {
			tr.DotRowsN(n, w, acts[:k], outs[:k], at)
		} else {
			matMul(tr, n, rowBytes, w, acts[:k], outs[:k], at)
		}
		acts, outs = acts[k:], outs[k:]
	}
}

// matMul is the reference of every DotRowsN kernel: Dot per row and
// activation.
func matMul(tr *Traits, n, rowBytes int, w []byte, acts [][]byte, outs [][]float32, at int) {
	for r := range len(w) / rowBytes {
		for i, a := range acts {
			outs[i][at+r] = tr.Dot(n, w[r*rowBytes:(r+1)*rowBytes], a)
		}
	}
}

// scatter sets outs[i][r] to dots[i] for every i < len(dots).
func scatter(outs [][]float32, r int, dots []float32) {
	for i, d := range dots {
		outs[i][r] = d
	}
}

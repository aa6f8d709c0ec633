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
// else Dot per row and activation. (A table that gives a type a DotN
// kernel gives it a DotRowsN kernel too, eachRow if nothing better.)
func (tr Traits) MatMul(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	rowBytes := n / tr.BlockSize * tr.TypeSize
	for len(acts) > 0 {
		k := min(len(acts), MaxDotN)
		if tr.dotRowsN != nil {
			tr.dotRowsN(n, w, acts[:k], outs[:k], at)
		} else {
			matMul(tr.dot, n, rowBytes, w, acts[:k], outs[:k], at)
		}
		acts, outs = acts[k:], outs[k:]
	}
}

// matMul is the reference of every DotRowsN kernel: Dot per row and
// activation.
func matMul(dot func(n int, w, act []byte) float32, n, rowBytes int, w []byte, acts [][]byte, outs [][]float32, at int) {
	for r := range len(w) / rowBytes {
		for i, a := range acts {
			outs[i][at+r] = dot(n, w[r*rowBytes:(r+1)*rowBytes], a)
		}
	}
}

// eachRow is the DotRowsN kernel made of the DotN kernel dotN, row by row,
// for rows of rowBytes bytes. The row's dots stay on the stack only where
// eachRow is inlined with a dotN known at compile time (a func value whose
// callee is unknown would make them escape): each table's DotRowsN kernel
// that is eachRow calls it with its DotN kernel by name.
//
//lint:ignore U1000 the platform tables use it (builds without them do not)
func eachRow(dotN func(n int, w []byte, acts [][]byte, out []float32), rowBytes, n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	var dots [MaxDotN]float32
	d := dots[:len(acts)]
	for ; len(w) >= rowBytes; w, at = w[rowBytes:], at+1 {
		dotN(n, w[:rowBytes], acts, d)
		for i, v := range d {
			outs[i][at] = v
		}
	}
}

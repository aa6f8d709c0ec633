//go:build goexperiment.simd

package quant

// The DotRows and DotRowsN drivers of the formats whose wasm row kernels
// take Q8_K activations prepared by splitQ8_K: TQ1_0, TQ2_0 (tq_wasm.s),
// IQ1_S, IQ1_M (iq1_wasm.s) and E8_IQ3 (e8iq3_wasm.s). Each result is
// bit-identical to the format's Dot. The row kernel is chosen by a switch
// on the type, not passed as a func value: a call through a func value
// made the stack buffers escape (an allocation per MatVec and MatMul).

// q8KRowsPerCall is the most rows a row kernel computes per call where its
// results go through a buffer (IQ1's DotRows, every DotRowsN).
const q8KRowsPerCall = 64

// q8KBlockBytes is the size of a block of t (a switch: TraitsOf would make
// the kernel tables' initialization depend on itself).
func q8KBlockBytes(t Type) int {
	switch t {
	case TQ1_0:
		return tq1_0Bytes
	case TQ2_0:
		return tq2_0Bytes
	case IQ1_S:
		return iq1_SBytes
	case IQ1_M:
		return iq1_MBytes
	case E8_IQ3:
		return e8iq3Bytes
	}
	panic("quant: a type without a Q8_K row kernel")
}

// q8KRows is the DotRows kernel of t: the activation prepared once, then
// the rows; rows too long for the buffers, and empty ones, take dot.
func q8KRows(t Type, dot func(n int, w, act []byte) float32, n int, w, act []byte, out []float32) {
	nb := n / qkK
	rowBytes := nb * q8KBlockBytes(t)
	if n > dotRowsMaxCols || nb == 0 || len(out) == 0 {
		dotRows(dot, n, rowBytes, w, act, out)
		return
	}
	w, act = w[:len(out)*rowBytes], act[:nb*q8_KBytes]
	var yp [dotRowsMaxCols / qkK * q8KPrepBytes]byte
	var yd [dotRowsMaxCols / qkK]float32
	splitQ8_K(&yp[0], &act[0], nb)
	for j := range nb {
		yd[j] = f32At(act[j*q8_KBytes:])
	}
	tab := &fp16ToFP32Table[0]
	switch t {
	case TQ1_0:
		tq1Rows(&w[0], &yp[0], &act[0], &yd[0], tab, nb, len(out), &out[0])
	case TQ2_0:
		tq2Rows(&w[0], &yp[0], &act[0], &yd[0], tab, nb, len(out), &out[0])
	case E8_IQ3: // times 0.125, as dotE8IQ3
		e8Rows(&w[0], &yp[0], &yd[0], tab, &iq3xxsGrid[0], &ksignsIQ2XS[0], nb, len(out), &out[0])
		for i, v := range out {
			out[i] = 0.125 * v
		}
	case IQ1_S, IQ1_M: // each row's lanes sum and delta sum, combined here
		var res [2 * q8KRowsPerCall]float32
		for r := 0; r < len(out); r += q8KRowsPerCall {
			c := min(q8KRowsPerCall, len(out)-r)
			if t == IQ1_S {
				iq1sRows(&w[r*rowBytes], &yp[0], &act[0], &yd[0], tab, &iq1sGrid[0], nb, c, &res[0])
			} else {
				iq1mRows(&w[r*rowBytes], &yp[0], &yd[0], tab, &iq1sGrid[0], nb, c, &res[0])
			}
			for i := range out[r : r+c] {
				out[r+i] = res[2*i] + float32(iq1sDelta*res[2*i+1])
			}
		}
	default:
		panic("quant: a type without a Q8_K row kernel")
	}
}

// q8KRowsN is the DotRowsN kernel of t: as many activations prepared at a
// time as the buffers hold (prepareQ8_K, prepareScales), then each weight
// block decoded once for all of them, q8KRowsPerCall rows a call; rows
// too long for the buffers take dotN per row.
func q8KRowsN(t Type, dotN func(n int, w []byte, acts [][]byte, out []float32), n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qkK
	rowBytes := nb * q8KBlockBytes(t)
	if nb == 0 || actsPerPass(nb, len(acts)) == 0 {
		eachRow(dotN, rowBytes, n, w, acts, outs, at)
		return
	}
	rows := len(w) / rowBytes
	w = w[:rows*rowBytes]
	var yp [dotRowsNPrep]byte
	var yd [dotRowsNBlocks]float32 // [nb][k]
	var acc [32 * MaxDotN]int32    // the row kernels' scratch (IQ1_M's is the largest)
	var res [2 * q8KRowsPerCall * MaxDotN]float32
	tab := &fp16ToFP32Table[0]
	for len(acts) > 0 {
		k := actsPerPass(nb, len(acts))
		prepareQ8_K(yp[:], acts[:k], nb)
		prepareScales(yd[:nb*k], acts[:k], nb)
		for r := 0; r < rows; r += q8KRowsPerCall {
			c := min(q8KRowsPerCall, rows-r)
			x := &w[r*rowBytes]
			switch t {
			case TQ1_0:
				tq1RowsN(x, &yp[0], &yd[0], tab, &acc[0], nb, c, k, &res[0])
			case TQ2_0:
				tq2RowsN(x, &yp[0], &yd[0], tab, &acc[0], nb, c, k, &res[0])
			case E8_IQ3:
				e8RowsN(x, &yp[0], &yd[0], tab, &acc[0], nb, c, k, &res[0], &iq3xxsGrid[0], &ksignsIQ2XS[0])
				for i, v := range res[:c*k] {
					res[i] = 0.125 * v
				}
			case IQ1_S:
				iq1sRowsN(x, &yp[0], &yd[0], tab, &acc[0], nb, c, k, &res[0], &iq1sGrid[0])
			case IQ1_M:
				iq1mRowsN(x, &yp[0], &yd[0], tab, &acc[0], nb, c, k, &res[0], &iq1sGrid[0])
			default:
				panic("quant: a type without a Q8_K row kernel")
			}
			if t == IQ1_S || t == IQ1_M {
				iq1Scatter(outs[:k], at+r, res[:2*c*k])
			} else {
				scatterRows(outs[:k], at+r, res[:c*k])
			}
		}
		acts, outs = acts[k:], outs[k:]
	}
}

// scatterRows sets outs[a][at+i] to res[k*i+a] (k = len(outs)).
func scatterRows(outs [][]float32, at int, res []float32) {
	k := len(outs)
	for a, o := range outs {
		o = o[at : at+len(res)/k]
		for i := range o {
			o[i] = res[k*i+a]
		}
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

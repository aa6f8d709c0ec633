package quant

// DotN row by row, for builds and types without a DotRowsN kernel of their
// own. Each type has its own function so that dots stays on the stack:
// handed to a kernel through a func value it would escape to the heap.

func eachRowQ4_0(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	var dots [MaxDotN]float32
	for r, rb := 0, n/qk*q4_0Bytes; (r+1)*rb <= len(w); r++ {
		dotNQ4_0(n, w[r*rb:(r+1)*rb], acts, dots[:len(acts)])
		scatter(outs, at+r, dots[:len(acts)])
	}
}

func eachRowQ8_0(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	var dots [MaxDotN]float32
	for r, rb := 0, n/qk*q8_0Bytes; (r+1)*rb <= len(w); r++ {
		dotNQ8_0(n, w[r*rb:(r+1)*rb], acts, dots[:len(acts)])
		scatter(outs, at+r, dots[:len(acts)])
	}
}

func eachRowQ4_K(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	var dots [MaxDotN]float32
	for r, rb := 0, n/qkK*q4_KBytes; (r+1)*rb <= len(w); r++ {
		dotNQ4_K(n, w[r*rb:(r+1)*rb], acts, dots[:len(acts)])
		scatter(outs, at+r, dots[:len(acts)])
	}
}

func eachRowQ6_K(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	var dots [MaxDotN]float32
	for r, rb := 0, n/qkK*q6_KBytes; (r+1)*rb <= len(w); r++ {
		dotNQ6_K(n, w[r*rb:(r+1)*rb], acts, dots[:len(acts)])
		scatter(outs, at+r, dots[:len(acts)])
	}
}

//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"math"
)

// The AVX512-VNNI DotRowsN kernel of Q4_K (the AVX2 one in
// matmul_k_amd64.go runs on CPUs without it; Q6_K, which sums in ggml's
// x86 order, eight float32 lanes per row and activation, runs its AVX2
// kernel everywhere), with their rows in
// matmul_kvnni_amd64.s. As for Q4_0 (matmul_amd64.go), the activations are
// prepared once per span in a transposed layout, and the sixteen
// activations are in the lanes of two running-sum vectors.

// kSpan is how many blocks of the activations a K-quant VNNI kernel
// prepares at a time (16 KB of quants: in L1 with a row's blocks).
const kSpan = 4

// batchQ8_K holds a span of a batch of Q8_K activations prepared for the
// VNNI kernels; lanes past the batch repeat its last activation. Block j,
// activations 8g..8g+7:
//   - q[j][g][8s+e]: dword k holds quants 32s+4e..32s+4e+3 of activation 8g+k
//   - bs[j][g][s]: dword k holds bsums 2s and 2s+1 of activation 8g+k (int16)
//   - yd[j][8g+k]: activation 8g+k's scale
type batchQ8_K struct {
	q  [kSpan][2][64][8]uint32
	bs [kSpan][2][8][8]uint32
	yd [kSpan][MaxDotN]float32
}

// prepare fills b with blocks [j0, j0+nb) of the activations acts.
func (b *batchQ8_K) prepare(acts [][]byte, j0, nb int) {
	last := len(acts) - 1
	for i := range MaxDotN {
		g, k := i/8, i%8
		a := acts[min(i, last)][j0*q8_KBytes : (j0+nb)*q8_KBytes]
		for j := range nb {
			y := (*[q8_KBytes]byte)(a[j*q8_KBytes:])
			b.yd[j][i] = math.Float32frombits(binary.LittleEndian.Uint32(y[:]))
			q := &b.q[j][g]
			for v := range 64 {
				q[v][k] = binary.LittleEndian.Uint32(y[4+4*v:])
			}
			for s := range 8 {
				b.bs[j][g][s][k] = binary.LittleEndian.Uint32(y[4+qkK+4*s:])
			}
		}
	}
}

// rowQ4_K is a Q4_K block's 6-bit scales and mins unpacked to bytes, as
// q4_KRowVNNI takes them.
type rowQ4_K struct {
	sc, mn [8]uint8
}

// dotRowsNQ4_KVNNI is dotRowsNQ4_KAVX2 with the rows in
// matmul_kvnni_amd64.s: the activations in spans of kSpan blocks; per span
// the batch is prepared, then per row its blocks' scales are unpacked for
// the asm, which adds the span's terms to the row's running sums.
func dotRowsNQ4_KVNNI(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	if len(acts) == 0 {
		return
	}
	nb := n / qkK
	rowBytes := nb * q4_KBytes
	var (
		b  batchQ8_K
		rk [kSpan]rowQ4_K
	)
	for j0 := 0; j0 < nb; j0 += kSpan {
		m := min(kSpan, nb-j0)
		b.prepare(acts, j0, m)
		for r := 0; (r+1)*rowBytes <= len(w); r++ {
			x := w[r*rowBytes+j0*q4_KBytes : r*rowBytes+(j0+m)*q4_KBytes]
			sums := spanSums(outs, at+r, j0)
			next := nextSpan(w, r, rowBytes, j0*q4_KBytes)
			for j := range m {
				sc, mn := scalesMinsK4Array((*[12]byte)(x[j*q4_KBytes+4:]))
				binary.LittleEndian.PutUint64(rk[j].sc[:], sc)
				binary.LittleEndian.PutUint64(rk[j].mn[:], mn)
			}
			q4_KRowVNNI(&x[0], m, &rk, &b, &sums, next)
			putSums(outs, at+r, &sums)
		}
	}
}

// q4_KRowVNNI (matmul_kvnni_amd64.s) adds to acc the terms of the nb
// blocks of the Q4_K row at x (their scales in rb) and of the sixteen
// activations of b, block by block, as dotQ4_KAVX2 adds them. It prefetches
// the blocks at next (the next row's).
//
//go:noescape
func q4_KRowVNNI(x *byte, nb int, rb *[kSpan]rowQ4_K, b *batchQ8_K, acc *[MaxDotN]float32, next *byte)

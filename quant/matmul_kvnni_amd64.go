//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"math"
	"simd/archsimd"
)

// The AVX512-VNNI DotRowsN kernels of Q4_K and Q6_K (the AVX2 ones in
// matmul_k_amd64.go run on CPUs without it), with their rows in
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
// matmul_kvnni_amd64.s.
func dotRowsNQ4_KVNNI(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	kMatMulVNNI(false, n, w, acts, outs, at)
}

// dotRowsNQ6_KVNNI is dotRowsNQ6_KAVX2 with the rows in
// matmul_kvnni_amd64.s.
func dotRowsNQ6_KVNNI(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	kMatMulVNNI(true, n, w, acts, outs, at)
}

// kMatMulVNNI runs the rows of w (Q6_K if q6, else Q4_K) against the
// activations in spans of kSpan blocks: per span the batch is prepared,
// then per row its blocks' scales (Q4_K) or quants (Q6_K) are unpacked
// for the asm, which adds the span's terms to the row's running sums.
func kMatMulVNNI(q6 bool, n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	if len(acts) == 0 {
		return
	}
	nb := n / qkK
	size := q4_KBytes
	if q6 {
		size = q6_KBytes
	}
	rowBytes := nb * size
	m4, m30 := archsimd.BroadcastUint8x32(0x0f), archsimd.BroadcastUint8x32(0x30)
	var (
		b  batchQ8_K
		rk [kSpan]rowQ4_K
		rq [kSpan]rowQ6_K
	)
	for j0 := 0; j0 < nb; j0 += kSpan {
		m := min(kSpan, nb-j0)
		b.prepare(acts, j0, m)
		for r := 0; (r+1)*rowBytes <= len(w); r++ {
			x := w[r*rowBytes+j0*size : r*rowBytes+(j0+m)*size]
			sums := spanSums(outs, at+r, j0)
			next := nextSpan(w, r, rowBytes, j0*size)
			if q6 {
				for j := range m {
					rq[j].unpack((*[q6_KBytes]byte)(x[j*q6_KBytes:]), m4, m30)
				}
				q6_KRowVNNI(&x[0], m, &rq, &b, &sums, next)
			} else {
				for j := range m {
					sc, mn := scalesMinsK4Array((*[12]byte)(x[j*q4_KBytes+4:]))
					binary.LittleEndian.PutUint64(rk[j].sc[:], sc)
					binary.LittleEndian.PutUint64(rk[j].mn[:], mn)
				}
				q4_KRowVNNI(&x[0], m, &rk, &b, &sums, next)
			}
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

// rowQ6_K is a Q6_K block as q6_KRowVNNI takes it (besides the block
// itself, whose scales it reads): its quants unsigned (q+32, 0..63) in
// element order, and its scales in int16 pairs (2s, 2s+1), to meet the
// bsums pairs of batchQ8_K.bs.
type rowQ6_K struct {
	q   [qkK]uint8
	scp [8]uint32
}

// unpack sets r from the Q6_K block x.
func (r *rowQ6_K) unpack(x *[q6_KBytes]byte, m4, m30 archsimd.Uint8x32) {
	for h := range 2 {
		q0, q1, q2, q3 := q6KQuants(x, h, m4, m30)
		q0.StoreArray((*[32]uint8)(r.q[128*h:]))
		q1.StoreArray((*[32]uint8)(r.q[128*h+32:]))
		q2.StoreArray((*[32]uint8)(r.q[128*h+64:]))
		q3.StoreArray((*[32]uint8)(r.q[128*h+96:]))
	}
	for s := range 8 {
		r.scp[s] = uint32(uint16(int16(int8(x[192+2*s])))) | uint32(uint16(int16(int8(x[193+2*s]))))<<16
	}
}

// q6_KRowVNNI (matmul_kvnni_amd64.s) adds to acc the terms of the nb
// blocks of the Q6_K row at x (decoded in rb) and of the sixteen
// activations of b, block by block, as dotQ6_KAVX2 adds them, and prefetches
// the blocks at next.
//
//go:noescape
func q6_KRowVNNI(x *byte, nb int, rb *[kSpan]rowQ6_K, b *batchQ8_K, acc *[MaxDotN]float32, next *byte)

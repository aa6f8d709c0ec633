//go:build goexperiment.simd && amd64

package quant

import "testing"

// TestMatMulKernels runs TestMatMul's cases through each amd64 DotRowsN
// kernel of Q4_0 and Q8_0, whichever the CPU would choose: the AVX2 ones,
// and the AVX512-VNNI ones where the CPU has it (else skipped, said so).
func TestMatMulKernels(t *testing.T) {
	kernels := []struct {
		name string
		typ  Type
		kind int
		vnni bool
	}{
		{"Q4_0/AVX2", Q4_0, prepQ4_0, false},
		{"Q8_0/AVX2", Q8_0, prepQ8_0, false},
		{"Q4_0/VNNI", Q4_0, prepVNNI4, true},
		{"Q8_0/VNNI", Q8_0, prepVNNI8, true},
	}
	for _, k := range kernels {
		t.Run(k.name, func(t *testing.T) {
			if k.vnni && !hasVNNI {
				t.Skip("no AVX512-VNNI on this CPU")
			}
			checkMatMul(t, k.typ, func(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
				matMulQ8_0Acts(k.kind, n, w, acts, outs, at)
			})
		})
	}
}

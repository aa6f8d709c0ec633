//go:build goexperiment.simd && amd64

package quant

import "testing"

// TestMatMulKernels runs TestMatMul's cases through each amd64 DotRowsN
// kernel, whichever the CPU would choose: the AVX2 ones, and the
// AVX512-VNNI ones where the CPU has it (else skipped, said so).
func TestMatMulKernels(t *testing.T) {
	type matMul = func(n int, w []byte, acts [][]byte, outs [][]float32, at int)
	q8_0Acts := func(kind int) matMul {
		return func(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
			matMulQ8_0Acts(kind, n, w, acts, outs, at)
		}
	}
	kernels := []struct {
		name string
		typ  Type
		f    matMul
		vnni bool
	}{
		{"Q4_0/AVX2", Q4_0, q8_0Acts(prepQ4_0), false},
		{"Q8_0/AVX2", Q8_0, q8_0Acts(prepQ8_0), false},
		{"Q4_K/AVX2", Q4_K, q4KMatMulAVX2, false},
		{"Q6_K/AVX2", Q6_K, q6KMatMulAVX2, false},
		{"Q4_0/VNNI", Q4_0, q8_0Acts(prepVNNI4), true},
		{"Q8_0/VNNI", Q8_0, q8_0Acts(prepVNNI8), true},
		{"Q4_K/VNNI", Q4_K, q4KMatMulVNNI, true},
		{"Q6_K/VNNI", Q6_K, q6KMatMulVNNI, true},
	}
	for _, k := range kernels {
		t.Run(k.name, func(t *testing.T) {
			if k.vnni && !hasVNNI {
				t.Skip("no AVX512-VNNI on this CPU")
			}
			checkMatMul(t, k.typ, k.f)
		})
	}
}

//go:build goexperiment.simd

package quant

import "testing"

// TestMatMulKernels runs TestMatMul's cases through each amd64 DotRowsN
// kernel, whichever the CPU would choose: the AVX2 ones, and the
// AVX512-VNNI ones where the CPU has it (else skipped, said so).
func TestMatMulKernels(t *testing.T) {
	kernels := []struct {
		table string
		typ   Type
		f     func(n int, w []byte, acts [][]byte, outs [][]float32, at int)
	}{
		{"AVX2", Q4_0, dotRowsNQ4_0AVX2},
		{"AVX2", Q8_0, dotRowsNQ8_0AVX2},
		{"AVX2", Q4_K, dotRowsNQ4_KAVX2},
		{"AVX2", Q6_K, dotRowsNQ6_KAVX2},
		{"AVX512-VNNI", Q4_0, dotRowsNQ4_0VNNI},
		{"AVX512-VNNI", Q8_0, dotRowsNQ8_0VNNI},
		{"AVX512-VNNI", Q4_K, dotRowsNQ4_KVNNI},
		{"AVX512-VNNI", Q6_K, dotRowsNQ6_KVNNI},
		{"AVX512-VBMI-VNNI", IQ4_XS, dotRowsNIQ4_XSVNNI},
	}
	for _, k := range kernels {
		t.Run(k.typ.String()+"/"+k.table, func(t *testing.T) {
			requireTable(t, k.table)
			checkMatMul(t, TraitsOf(k.typ), k.typ, k.f)
		})
	}
}

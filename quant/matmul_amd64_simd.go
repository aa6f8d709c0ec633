//go:build goexperiment.simd && amd64

package quant

// The native AVX2 DotRowsN kernels of Q4_0 and Q8_0.

var dotRowsNQ4_0, dotRowsNQ8_0 = eachRowQ4_0, eachRowQ8_0

//go:build goexperiment.simd && amd64

package quant

// The native AVX2 DotRowsN kernels of the K-quants.

var dotRowsNQ4_K, dotRowsNQ6_K = eachRowQ4_K, eachRowQ6_K

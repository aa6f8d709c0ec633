//go:build !(goexperiment.simd && amd64)

package quant

// Builds without DotRowsN kernels run DotN row by row.
var (
	dotRowsNQ4_0 = eachRowQ4_0
	dotRowsNQ8_0 = eachRowQ8_0
	dotRowsNQ4_K = eachRowQ4_K
	dotRowsNQ6_K = eachRowQ6_K
)

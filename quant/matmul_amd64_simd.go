//go:build goexperiment.simd && amd64

package quant

var (
	dotRowsNQ4_0 = eachRowQ4_0
	dotRowsNQ8_0 = eachRowQ8_0
	dotRowsNQ4_K = eachRowQ4_K
	dotRowsNQ6_K = eachRowQ6_K
)

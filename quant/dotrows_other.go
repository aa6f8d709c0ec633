//go:build !(goexperiment.simd && wasm) && !(goexperiment.simd && amd64)

package quant

// Builds without a DotRows kernel: Traits.MatVec calls Dot per row.
var (
	dotRowsQ4_0 func(n int, w, act []byte, out []float32)
	dotRowsQ8_0 func(n int, w, act []byte, out []float32)
	dotRowsQ4_K func(n int, w, act []byte, out []float32)
	dotRowsQ6_K func(n int, w, act []byte, out []float32)
)

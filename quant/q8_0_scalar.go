//go:build !(goexperiment.simd && wasm)

package quant

// The portable kernels of Q8_0; q8_0_simd.go has their wasm SIMD128 twins.

// quantizeQ8_0 is quantizeQ8_0Ref.
func quantizeQ8_0(dst []byte, src []float32) { quantizeQ8_0Ref(dst, src) }

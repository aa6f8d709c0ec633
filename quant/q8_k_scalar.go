//go:build !(goexperiment.simd && wasm)

package quant

// The portable kernel of Q8_K; q8_k_simd.go has its wasm SIMD128 twin.

// quantizeQ8_K is quantizeQ8_KRef.
func quantizeQ8_K(dst []byte, src []float32) { quantizeQ8_KRef(dst, src) }

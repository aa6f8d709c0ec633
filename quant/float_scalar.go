//go:build !(goexperiment.simd && wasm)

package quant

// The portable F16 dot; float_simd.go has its wasm SIMD128 twin.

func dotF16(n int, w, act []byte) float32 { return dotF16Ref(n, w, act) }

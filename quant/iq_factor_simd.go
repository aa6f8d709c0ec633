//go:build goexperiment.simd && (amd64 || wasm)

package quant

// iqFactor is the final factor of the codebook format t's dot: 0.25 for
// IQ3_XXS, 0.125 for the IQ2 formats, 1 for the others (ggml's kernels
// multiply their sums by it last).
func iqFactor(t Type) float32 {
	switch t {
	case IQ3_XXS:
		return 0.25
	case IQ2_XXS, IQ2_XS, IQ2_S:
		return 0.125
	}
	return 1
}

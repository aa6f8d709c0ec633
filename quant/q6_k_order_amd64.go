package quant

// Q6_K sums in one order per platform: on amd64 in ggml's x86 order
// (dotQ6_KX86Ref), which llama.cpp's x86 builds run, so that the dots are
// theirs bit for bit; elsewhere (wasm) in ggml's generic order
// (dotQ6_KRef), which the wasm SIMD128 and relaxed-SIMD kernels keep (the
// x86 order's exact FMAs must be emulated there, which measured 27% slower
// decode). q6KOrderRef is the reference every Q6_K kernel of the platform
// is twin-tested against; dotQ6_KPortable its portable kernel (the
// table's without GOEXPERIMENT=simd).
var (
	q6KOrderRef     = dotQ6_KX86Ref
	dotQ6_KPortable = dotQ6_KX86Go
)

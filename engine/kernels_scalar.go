//go:build !(goexperiment.simd && (wasm || amd64))

package engine

// The hot loops of attention over the fp16 KV cache. kernels_simd.go has
// their wasm SIMD128 twins, kernels_amd64_simd.go their AVX2 ones; here
// they are the readable kernels of ops.go.

// dotF16Vec returns the dot of a float32 vector with an fp16 vector.
func dotF16Vec(a []float32, b []uint16) float32 { return dotF16(a, b) }

// axpyF16Vec sets y += a * x for an fp16 vector x.
func axpyF16Vec(y []float32, a float32, x []uint16) { axpyF16(y, a, x) }

// expShift sets x[i] = e^(x[i]-m).
func expShift(x []float32, m float32) { expShiftRef(x, m) }

// swiglu sets gate = silu(gate) * up.
func swiglu(gate, up []float32) { swigluRef(gate, up) }

// roundFP16 sets x[i] = fp16(x[i]·scale).
func roundFP16(x []float32, scale float32) { roundFP16Ref(x, scale) }

// quantizeBlockVec quantizes a 32-block of activations (see
// quantizeBlockCPU).
func quantizeBlockVec(qs []byte, x []float32) (d float32, sum int32) { return quantizeBlockCPU(qs, x) }

//go:build !(goexperiment.simd && (wasm || amd64))

package quant

// The portable DotN kernels: Dot per activation (dotn_simd.go and
// dotn_amd64_simd.go decode each weight block once).

func dotNQ4_0(n int, w []byte, acts [][]byte, out []float32) { dotEach(dotQ4_0, n, w, acts, out) }
func dotNQ8_0(n int, w []byte, acts [][]byte, out []float32) { dotEach(dotQ8_0, n, w, acts, out) }
func dotNQ4_K(n int, w []byte, acts [][]byte, out []float32) { dotEach(dotQ4_K, n, w, acts, out) }
func dotNQ6_K(n int, w []byte, acts [][]byte, out []float32) { dotEach(dotQ6_K, n, w, acts, out) }

//go:build !(goexperiment.simd && (wasm || amd64))

package quant

// Builds without platform kernels (without GOEXPERIMENT=simd, or for an
// architecture that has none) run the portable table alone.
func platformTables() []kernelTable { return nil }

// simdVec, the platform's vector kernels, is never in use here (no table
// sets simdVec): the portable ones.
type simdVec struct{}

func (simdVec) dotF16(a []float32, b []uint16) float32     { return dotF16VecRef(a, b) }
func (simdVec) axpyF16(y []float32, a float32, x []uint16) { axpyF16Ref(y, a, x) }
func (simdVec) scoresF16(sc, q []float32, keys []uint16, hd, stride, n int) {
	scoresF16Ref(sc, q, keys, hd, stride, n)
}
func (simdVec) accumulateF16(out, w []float32, values []uint16, hd, stride, n int) {
	accumulateF16Ref(out, w, values, hd, stride, n)
}
func (simdVec) expShift(x []float32, m float32, sum float64) float64 { return expShiftGo(x, m, sum) }
func (simdVec) swiglu(gate, up []float32)                            { swigluGo(gate, up) }
func (simdVec) roundFP16(x []float32, scale float32)                 { roundFP16Ref(x, scale) }
func (simdVec) quantizeAct(dst []byte, src []float32, size int)      { quantizeActGo(dst, src, size) }

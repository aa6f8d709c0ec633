package quant

// Multi-activation dots: one weight row against several activations (a
// prefill batch). A DotN kernel decodes each weight block once and dots it
// with every activation while it is in registers, instead of decoding the
// row again per activation; the results are bit-identical to calling Dot
// once per activation (per activation the block sums are accumulated in the
// same order, with the same float32 operations). simd_test.go checks that.

// MaxDotN is the number of activations a DotN kernel takes at once;
// Traits.DotEach splits longer lists.
const MaxDotN = 16

// DotEach sets out[i] to Dot(n, w, acts[i]) for every activation, with the
// type's DotN kernel if it has one (len(out) >= len(acts)).
func (tr *Traits) DotEach(n int, w []byte, acts [][]byte, out []float32) {
	out = out[:len(acts)]
	if tr.DotN == nil {
		dotEach(tr.Dot, n, w, acts, out)
		return
	}
	for len(acts) > MaxDotN {
		tr.DotN(n, w, acts[:MaxDotN], out[:MaxDotN])
		acts, out = acts[MaxDotN:], out[MaxDotN:]
	}
	tr.DotN(n, w, acts, out)
}

// dotEach is the reference of every DotN kernel: Dot per activation.
func dotEach(dot func(n int, w, act []byte) float32, n int, w []byte, acts [][]byte, out []float32) {
	for i, a := range acts {
		out[i] = dot(n, w, a)
	}
}

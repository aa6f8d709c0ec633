package quant

// Multi-activation dots: one weight row against several activations (a
// prefill batch). A DotN kernel decodes each weight block once and dots it
// with every activation while it is in registers, instead of decoding the
// row again per activation; the results are bit-identical to calling Dot
// once per activation (per activation the block sums are accumulated in the
// same order, with the same float32 operations). twins_test.go checks that.

// MaxDotN is the number of activations a DotN kernel takes at once;
// Traits.DotEach splits longer lists.
const MaxDotN = 16

// DotEach sets out[i] to Dot(n, w, acts[i]) for every activation, with the
// type's DotN kernel if it has one (len(out) >= len(acts)).
func (tr Traits) DotEach(n int, w []byte, acts [][]byte, out []float32) {
	out = out[:len(acts)]
	if tr.dotN == nil {
		dotEach(tr.dot, n, w, acts, out)
		return
	}
	for len(acts) > MaxDotN {
		tr.dotN(n, w, acts[:MaxDotN], out[:MaxDotN])
		acts, out = acts[MaxDotN:], out[MaxDotN:]
	}
	tr.dotN(n, w, acts, out)
}

// dotEach is the reference of every DotN kernel: Dot per activation.
func dotEach(dot func(n int, w, act []byte) float32, n int, w []byte, acts [][]byte, out []float32) {
	for i, a := range acts {
		out[i] = dot(n, w, a)
	}
}

// MatVec sets out[r] to Dot(n, w[r*rowBytes:], act) for r < len(out)
// (rowBytes = n/BlockSize*TypeSize), with the type's DotRows kernel if it
// has one; the results are bit-identical to Dot's.
func (tr Traits) MatVec(n int, w, act []byte, out []float32) {
	if tr.dotRows != nil {
		tr.dotRows(n, w, act, out)
		return
	}
	dotRows(tr.dot, n, n/tr.BlockSize*tr.TypeSize, w, act, out)
}

// dotRows is the reference of every DotRows kernel: Dot per row.
func dotRows(dot func(n int, w, act []byte) float32, n, rowBytes int, w, act []byte, out []float32) {
	for r := range out {
		out[r] = dot(n, w[r*rowBytes:(r+1)*rowBytes], act)
	}
}

//go:build goexperiment.simd

package quant

// The wasm SIMD128 F16 DotRows and DotRowsN kernels (kernels_wasm.go):
// the activations widened to float32 once per call and the weights
// widened in asm (f16rows_wasm.s) without unpacking their 16-bit lanes,
// which puts the even and the odd elements of each 8 in separate vectors.
// The 32 running sums of dotF16Ref are kept in that permuted order
// (f16Perm), the activations laid out in it, so each sum adds the same
// products in the same order; f16Sum puts them back and reduces them as
// the reference does, so every result is bit-identical to the Dot's.

// widenF16P widens the 32·n32 fp16 values at src to dst, permuted.
//
//go:noescape
func widenF16P(dst *float32, src *byte, n32 int)

// f16DotsP adds x[i]·y[i] to acc[i%32] for i < 32·n32 (n32 ≥ 1).
//
//go:noescape
func f16DotsP(x, y *float32, n32 int, acc *[32]float32)

// f16RowP adds the products of the 32·n32 fp16 weights at x and the
// widened activations at y to acc (n32 ≥ 1); false when a weight is an
// infinity or NaN (acc is then not the Dot's).
//
//go:noescape
func f16RowP(x *byte, y *float32, n32 int, acc *[32]float32) bool

// f16Perm is the permuted order: f16Perm[p] is the element (mod 32) whose
// products position p holds: of each 8, the even four, then the odd four.
var f16Perm = func() (p [32]int) {
	for i := range p {
		g, l := i/8, i%8
		if l < 4 {
			p[i] = 8*g + 2*l
		} else {
			p[i] = 8*g + 2*(l-4) + 1
		}
	}
	return p
}()

// f16Sum is laneSum32 of the running sums s, held in the permuted order.
func f16Sum(s *[32]float32) float32 {
	var t [32]float32
	for i, k := range f16Perm {
		t[k] = s[i]
	}
	return laneSum32(&t)
}

// f16Chunk is how many weights dotRowsNF16SIMD128 widens at a time (8 KB
// of float32 on the stack).
const f16Chunk = 2048

// dotRowsF16SIMD128 is the F16 DotRows kernel: the activation widened once
// (permuted), each row's 32-element groups widened and dotted in asm
// (f16RowP), the last n%32 elements as the reference adds them; a row with
// an infinity or NaN takes the Dot.
func dotRowsF16SIMD128(n int, w, act []byte, out []float32) {
	if n > floatRowsMax || n < 32 || len(out) < 2 {
		dotRows(dotF16SIMD128, n, 2*n, w, act, out)
		return
	}
	act = act[:2*n]
	w = w[:len(out)*2*n]
	n32 := n / 32
	np := 32 * n32
	var yf [floatRowsMax]float32
	widenF16P(&yf[0], &act[0], n32)
	for r := range out {
		x := w[2*n*r : 2*n*(r+1)]
		var s [32]float32
		if !f16RowP(&x[0], &yf[0], n32, &s) {
			out[r] = dotF16SIMD128(n, x, act)
			continue
		}
		sum := float64(f16Sum(&s))
		for i := np; i < n; i++ {
			sum += float64(fp16At(x[2*i:]) * fp16At(act[2*i:]))
		}
		out[r] = float32(sum)
	}
}

// dotRowsNF16SIMD128 is the F16 DotRowsN kernel: the activations widened
// once per call (permuted; as many at a time as f16Prep holds), each row
// f16Chunk weights at a time (widenF16P) and dotted with every activation
// (f16DotsP); rows longer than f16Prep or shorter than 32 take the DotN.
func dotRowsNF16SIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	if n > f16Prep || n < 32 {
		eachRow(dotNF16SIMD128, 2*n, n, w, acts, outs, at)
		return
	}
	rows := len(w) / (2 * n)
	w = w[:rows*2*n]
	n32 := n / 32
	np := 32 * n32
	var (
		yf  [f16Prep]float32
		wf  [f16Chunk]float32
		acc [MaxDotN][32]float32 // activation i's running sums, permuted
	)
	for len(acts) > 0 {
		k := min(len(acts), MaxDotN, f16Prep/n)
		for i, a := range acts[:k] {
			a = a[:2*n]
			y := yf[i*n : (i+1)*n]
			widenF16P(&y[0], &a[0], n32)
			for j := np; j < n; j++ {
				y[j] = fp16At(a[2*j:])
			}
		}
		for r := range rows {
			x := w[r*2*n : (r+1)*2*n]
			clear(acc[:k])
			for c := 0; c < np; c += f16Chunk {
				m := min(f16Chunk, np-c)
				widenF16P(&wf[0], &x[2*c], m/32)
				for i := range k {
					f16DotsP(&wf[0], &yf[i*n+c], m/32, &acc[i])
				}
			}
			for i := range k {
				y := yf[i*n : (i+1)*n]
				sum := float64(f16Sum(&acc[i]))
				for j := np; j < n; j++ {
					sum += float64(fp16At(x[2*j:]) * y[j])
				}
				outs[i][at+r] = float32(sum)
			}
		}
		acts, outs = acts[k:], outs[k:]
	}
}

package quant

// The kernels of the engine's loops over float32 vectors: attention over an
// fp16 KV cache (DotF16, AxpyF16, RoundFP16) and the exponentials of
// softmax and SwiGLU (ExpShift, SwiGLU; expf.go). Each has its readable
// reference here, which is also its portable kernel, and SIMD twins
// (vec_wasm.go, vec_amd64.go) that compute the same bits; vec_test.go
// checks them.

// DotF16 returns the dot of a float32 vector with an fp16 vector
// (len(b) >= len(a)), summed in the order dotF16VecRef documents.
func DotF16(a []float32, b []uint16) float32 { return table.vec.dotF16(a, b) }

// AxpyF16 sets y += a·x for an fp16 vector x (len(x) >= len(y)), the
// product rounded to float32 before the add.
func AxpyF16(y []float32, a float32, x []uint16) { table.vec.axpyF16(y, a, x) }

// ScoresF16 sets sc[j*n+t] to DotF16(q[j*hd:(j+1)*hd], keys[t*stride:])
// for the g = len(q)/hd heads j of q and the n keys t (fp16 rows of hd
// values, stride apart): the attention scores of a group of query heads
// that share a KV head, computed with each key converted once. sc holds
// g*n scores, each one DotF16's bits.
func ScoresF16(sc, q []float32, keys []uint16, hd, stride, n int) {
	table.vec.scoresF16(sc, q, keys, hd, stride, n)
}

// AccumulateF16 adds w[j*n+t]·values[t*stride:t*stride+hd] to
// out[j*hd:(j+1)*hd] for the g = len(out)/hd heads j, position t after
// position, each as AxpyF16 would (the attention's weighted sum of the
// values, for a group of query heads that share a KV head).
func AccumulateF16(out, w []float32, values []uint16, hd, stride, n int) {
	table.vec.accumulateF16(out, w, values, hd, stride, n)
}

// ExpShift sets x[i] = e^(x[i]-m), the exponentials of softmax, and returns
// sum plus their sum, both as ggml's softmax on AVX-512 CPUs computes them
// (ggml_vec_soft_max_f32; see expShiftRef) over x padded with -Inf to a
// multiple of 16: llama.cpp's rows of attention scores are its KV cache
// length, padded to a multiple of 256, the positions not attended masked to
// -Inf. A row given in pieces whose lengths are multiples of 16, but for
// the last, each given the sum so far, gets the whole row's exponentials
// and sum.
func ExpShift(x []float32, m float32, sum float64) float64 { return table.vec.expShift(x, m, sum) }

// SwiGLU sets gate = silu(gate)·up (len(up) >= len(gate)), silu(x) =
// x/(1+e^-x), as ggml's ggml_vec_swiglu_f32 computes it on AVX-512 CPUs
// (see swigluRef).
func SwiGLU(gate, up []float32) { table.vec.swiglu(gate, up) }

// RoundFP16 sets x[i] = fp16(x[i]·scale), the value ggml's conversion to
// fp16 gives, as a float32 (NaNs stay NaNs).
func RoundFP16(x []float32, scale float32) { table.vec.roundFP16(x, scale) }

// vecSet is the choice of vector kernels: the platform's (simdVec, in
// kernels_amd64.go and kernels_wasm.go) if simd, else the portable ones.
// Unlike the format kernels they are called directly, not through func
// values: they run once per attention position, and a vector passed
// through a func value escapes to the heap (attention's tile of scores is on
// its caller's stack).
type vecSet struct{ simd bool }

func (v vecSet) dotF16(a []float32, b []uint16) float32 {
	if v.simd {
		return simdVec{}.dotF16(a, b)
	}
	return dotF16VecRef(a, b)
}

func (v vecSet) axpyF16(y []float32, a float32, x []uint16) {
	if v.simd {
		simdVec{}.axpyF16(y, a, x)
	} else {
		axpyF16Ref(y, a, x)
	}
}

func (v vecSet) scoresF16(sc, q []float32, keys []uint16, hd, stride, n int) {
	if v.simd {
		simdVec{}.scoresF16(sc, q, keys, hd, stride, n)
	} else {
		scoresF16Ref(sc, q, keys, hd, stride, n)
	}
}

func (v vecSet) accumulateF16(out, w []float32, values []uint16, hd, stride, n int) {
	if v.simd {
		simdVec{}.accumulateF16(out, w, values, hd, stride, n)
	} else {
		accumulateF16Ref(out, w, values, hd, stride, n)
	}
}

func (v vecSet) expShift(x []float32, m float32, sum float64) float64 {
	if v.simd {
		return simdVec{}.expShift(x, m, sum)
	}
	return expShiftGo(x, m, sum)
}

func (v vecSet) swiglu(gate, up []float32) {
	if v.simd {
		simdVec{}.swiglu(gate, up)
	} else {
		swigluGo(gate, up)
	}
}

func (v vecSet) roundFP16(x []float32, scale float32) {
	if v.simd {
		simdVec{}.roundFP16(x, scale)
	} else {
		roundFP16Ref(x, scale)
	}
}

func (v vecSet) quantizeAct(dst []byte, src []float32, size int) {
	if v.simd {
		simdVec{}.quantizeAct(dst, src, size)
	} else {
		quantizeActGo(dst, src, size)
	}
}

// dotF16VecRef is DotF16 summed in the order of its SIMD twins: eight
// running sums, sum j over the products j, j+8, j+16, ..., added pairwise
// as (s0+s4 + s2+s6) + (s1+s5 + s3+s7) (the halves of an eight-lane
// register, then of a four-lane one), then the products of the last
// len(a)%8 elements in order. Each product is rounded to float32 before it
// is added (no fused multiply-add), so every build computes the same bits.
// (In attention both factors are fp16 values, whose products float32 holds
// exactly.)
func dotF16VecRef(a []float32, b []uint16) float32 {
	b = b[:len(a)]
	var s [8]float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		for j := range s {
			s[j] += float32(a[i+j] * FP16ToFP32(b[i+j]))
		}
	}
	sum := (s[0] + s[4] + (s[2] + s[6])) + (s[1] + s[5] + (s[3] + s[7]))
	for ; i < len(a); i++ {
		sum += float32(a[i] * FP16ToFP32(b[i]))
	}
	return sum
}

// axpyF16Ref is AxpyF16.
func axpyF16Ref(y []float32, a float32, x []uint16) {
	x = x[:len(y)]
	for i := range y {
		y[i] += float32(a * FP16ToFP32(x[i]))
	}
}

// scoresF16Ref is ScoresF16: DotF16's reference per head and key.
func scoresF16Ref(sc, q []float32, keys []uint16, hd, stride, n int) {
	g := len(q) / hd
	sc = sc[:g*n]
	for j := range g {
		for t := range n {
			sc[j*n+t] = dotF16VecRef(q[j*hd:(j+1)*hd], keys[t*stride:])
		}
	}
}

// accumulateF16Ref is AccumulateF16: AxpyF16's reference per position and
// head.
func accumulateF16Ref(out, w []float32, values []uint16, hd, stride, n int) {
	g := len(out) / hd
	w = w[:g*n]
	for t := range n {
		for j := range g {
			axpyF16Ref(out[j*hd:(j+1)*hd], w[j*n+t], values[t*stride:])
		}
	}
}

// expShiftRef is ExpShift: ggml_vec_soft_max_f32's loop over a row padded
// to whole blocks of 16 (one AVX-512 register of ggml's): every
// exponential by expfV, each block's sum reduced as reduce16 does (the
// padding adds zeros) and added to the float64 sum.
func expShiftRef(x []float32, m float32, sum float64) float64 {
	for i := 0; i < len(x); i += vexpWidth {
		var v [vexpWidth]float32 // past the end of x: e^-Inf = 0
		for j := range min(vexpWidth, len(x)-i) {
			x[i+j] = expfV(x[i+j] - m)
			v[j] = x[i+j]
		}
		sum += float64(reduce16(&v))
	}
	return sum
}

// reduce16 is _mm512_reduce_add_ps as GCC computes it: the two 256-bit
// halves added, then the two 128-bit halves of that, then lanes 0+2 and
// 1+3, then those two.
func reduce16(v *[vexpWidth]float32) float32 {
	var h [8]float32
	for i := range h {
		h[i] = v[i] + v[i+8]
	}
	q0, q1, q2, q3 := h[0]+h[4], h[1]+h[5], h[2]+h[6], h[3]+h[7]
	return (q0 + q2) + (q1 + q3)
}

// expShiftGo is expShiftRef computed with expfVGo: the portable kernel.
func expShiftGo(x []float32, m float32, sum float64) float64 {
	for i := 0; i < len(x); i += vexpWidth {
		var v [vexpWidth]float32
		for j := range min(vexpWidth, len(x)-i) {
			x[i+j] = expfVGo(x[i+j] - m)
			v[j] = x[i+j]
		}
		sum += float64(reduce16(&v))
	}
	return sum
}

// swigluRef is SwiGLU: ggml_vec_swiglu_f32's loop, gate/(1+e^(0−gate))·up
// with e^ by expfV for the elements of whole blocks of 16 (ggml_v_silu on
// one AVX-512 register), by expfC for the rest (ggml_silu_f32).
func swigluRef(gate, up []float32) {
	up = up[:len(gate)]
	n := len(gate) &^ (vexpWidth - 1)
	for i, g := range gate[:n] {
		gate[i] = g / (1 + expfV(0-g)) * up[i]
	}
	for i := n; i < len(gate); i++ {
		g := gate[i]
		gate[i] = g / (1 + expfC(-g)) * up[i]
	}
}

// swigluGo is swigluRef computed with expfVGo: the portable kernel.
func swigluGo(gate, up []float32) {
	up = up[:len(gate)]
	n := len(gate) &^ (vexpWidth - 1)
	for i, g := range gate[:n] {
		gate[i] = g / (1 + expfVGo(0-g)) * up[i]
	}
	for i := n; i < len(gate); i++ {
		g := gate[i]
		gate[i] = g / (1 + expfC(-g)) * up[i]
	}
}

// roundFP16Ref is RoundFP16.
func roundFP16Ref(x []float32, scale float32) {
	for i, v := range x {
		x[i] = FP16ToFP32(FP32ToFP16(v * scale))
	}
}

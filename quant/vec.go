package quant

import "math"

// The kernels of the engine's loops over float32 vectors: attention over an
// fp16 KV cache (DotF16, AxpyF16, RoundFP16) and the exponentials of
// softmax and SwiGLU (ExpShift, SwiGLU). Each has its readable reference
// here, which is also its portable kernel, and SIMD twins (vec_wasm.go,
// vec_amd64.go) that compute the same bits; vec_test.go checks them.

// DotF16 returns the dot of a float32 vector with an fp16 vector
// (len(b) >= len(a)), summed in the order dotF16VecRef documents.
func DotF16(a []float32, b []uint16) float32 { return table.vec.dotF16(a, b) }

// AxpyF16 sets y += a·x for an fp16 vector x (len(x) >= len(y)), the
// product rounded to float32 before the add.
func AxpyF16(y []float32, a float32, x []uint16) { table.vec.axpyF16(y, a, x) }

// ExpShift sets x[i] = e^(x[i]-m), rounded to float32: the exponentials of
// softmax.
func ExpShift(x []float32, m float32) { table.vec.expShift(x, m) }

// SwiGLU sets gate = silu(gate)·up (len(up) >= len(gate)), silu(x) =
// x/(1+e^-x).
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

func (v vecSet) expShift(x []float32, m float32) {
	if v.simd {
		simdVec{}.expShift(x, m)
	} else {
		expShiftRef(x, m)
	}
}

func (v vecSet) swiglu(gate, up []float32) {
	if v.simd {
		simdVec{}.swiglu(gate, up)
	} else {
		swigluRef(gate, up)
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

// expShiftRef is ExpShift.
func expShiftRef(x []float32, m float32) {
	for i, v := range x {
		x[i] = expf(v - m)
	}
}

// swigluRef is SwiGLU.
func swigluRef(gate, up []float32) {
	for i, g := range gate {
		gate[i] = g / (1 + expf(-g)) * up[i]
	}
}

// roundFP16Ref is RoundFP16.
func roundFP16Ref(x []float32, scale float32) {
	for i, v := range x {
		x[i] = FP16ToFP32(FP32ToFP16(v * scale))
	}
}

// expf is e^x rounded to float32, the exponential of softmax and silu.
func expf(x float32) float32 { return float32(math.Exp(float64(x))) }

// The constants of math.Exp's algorithm (FreeBSD's e_exp.c): ln 2 split in
// a high part with trailing zero bits and a low part, and the coefficients
// of the rational approximation on [-ln2/2, ln2/2].
const (
	expLn2Hi = 6.93147180369123816490e-01
	expLn2Lo = 1.90821492927058770002e-10
	expLog2e = 1.44269504088896338700e+00
	expP1    = 1.66666666666666657415e-01
	expP2    = -2.77777777770155933842e-03
	expP3    = 6.61375632143793436117e-05
	expP4    = -1.65339022054652515390e-06
	expP5    = 4.13813679705723846039e-08
	// Beyond [expMin, expMax] e^x rounds to 0 or +Inf in float32.
	expMin = -104
	expMax = 89
)

// expfPoly is expf computed as the SIMD kernels compute it, lane by lane:
// math.Exp's pure-Go algorithm in float64, branch-free (x clamped to where
// float32 results are neither 0 nor +Inf, so 2^k is a normal float64 built
// from its bits and the final scaling is exact), rounded to float32. For
// every float32 x it equals expf(x) bit for bit (TestExpfPoly sweeps the
// float32 range; an exhaustive run over all 2^32 inputs found no
// difference from math.Exp's assembly on amd64 either).
func expfPoly(x32 float32) float32 {
	x := max(expMin, min(expMax, float64(x32)))
	h := math.Copysign(0.5, x)
	k := math.Trunc(expLog2e*x + h) // round half away from zero
	hi := x - k*expLn2Hi
	lo := k * expLn2Lo
	r := hi - lo
	t := r * r
	c := r - t*(expP1+t*(expP2+t*(expP3+t*(expP4+t*expP5))))
	y := 1 - ((lo - (r*c)/(2-c)) - hi)
	return float32(y * math.Float64frombits(uint64(int64(k)+1023)<<52))
}

package engine

import (
	"math"

	"github.com/picolm/picolm-wasm/quant"
)

// rmsnorm sets out = x / sqrt(mean(x²) + eps) * w. As in ggml, the sum of
// squares is accumulated in float64 and the scale applied before the weight.
func rmsnorm(out, x, w []float32, eps float32) {
	var ss float64
	for _, v := range x {
		ss += float64(v * v)
	}
	mean := float32(ss / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(mean+eps)))
	for i, v := range x {
		out[i] = (v * scale) * w[i]
	}
}

// ropeNormal rotates each (x[2i], x[2i+1]) pair of the first len(cos)*2 dims
// of every head of width headDim by the angle whose cos and sin are given
// (llama.cpp's "normal" rope, LLAMA_ROPE_TYPE_NORM: llama).
func ropeNormal(x []float32, headDim int, cos, sin []float32) {
	for h := 0; h+headDim <= len(x); h += headDim {
		v := x[h : h+headDim]
		for i := range cos {
			x0, x1 := v[2*i], v[2*i+1]
			v[2*i] = x0*cos[i] - x1*sin[i]
			v[2*i+1] = x0*sin[i] + x1*cos[i]
		}
	}
}

// ropeNeoX rotates each (x[i], x[i+n]) pair, n = len(cos), of the first 2n
// dims of every head by the i-th angle (GPT-NeoX's rope,
// LLAMA_ROPE_TYPE_NEOX: qwen2, phi3).
func ropeNeoX(x []float32, headDim int, cos, sin []float32) {
	n := len(cos)
	for h := 0; h+headDim <= len(x); h += headDim {
		v := x[h : h+headDim]
		for i := range cos {
			x0, x1 := v[i], v[i+n]
			v[i] = x0*cos[i] - x1*sin[i]
			v[i+n] = x0*sin[i] + x1*cos[i]
		}
	}
}

// swigluRef sets gate = silu(gate) * up, silu(x) = x / (1 + e^-x): the
// readable kernel of swiglu (kernels_*.go).
func swigluRef(gate, up []float32) {
	for i, g := range gate {
		gate[i] = g / (1 + expf(-g)) * up[i]
	}
}

// expShiftRef sets x[i] = e^(x[i]-m), the exponentials of softmax: the
// readable kernel of expShift (kernels_*.go).
func expShiftRef(x []float32, m float32) {
	for i, v := range x {
		x[i] = expf(v - m)
	}
}

// add sets dst += src.
func add(dst, src []float32) {
	for i, v := range src {
		dst[i] += v
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

// dotF16 returns the dot of a float32 vector with an fp16 vector, summed in
// the order of its SIMD twins: eight running sums, sum j over the products
// j, j+8, j+16, ..., added pairwise as (s0+s4 + s2+s6) + (s1+s5 + s3+s7)
// (the halves of an eight-lane register, then of a four-lane one), then
// the products of the last len(a)%8 elements in order. Each product is
// rounded to float32 before it is added (no fused multiply-add), so every
// build computes the same bits. (In attention both factors are fp16
// values, whose products float32 holds exactly.)
func dotF16(a []float32, b []uint16) float32 {
	b = b[:len(a)]
	var s [8]float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		for j := range s {
			s[j] += float32(a[i+j] * quant.FP16ToFP32(b[i+j]))
		}
	}
	sum := (s[0] + s[4] + (s[2] + s[6])) + (s[1] + s[5] + (s[3] + s[7]))
	for ; i < len(a); i++ {
		sum += float32(a[i] * quant.FP16ToFP32(b[i]))
	}
	return sum
}

// axpyF16 sets y += a * x for an fp16 vector x (the product rounded to
// float32 before the add, as in the SIMD twins).
func axpyF16(y []float32, a float32, x []uint16) {
	x = x[:len(y)]
	for i := range y {
		y[i] += float32(a * quant.FP16ToFP32(x[i]))
	}
}

// activation is the input vector of the next matrix-vector products, kept in
// every format the model's dot kernels take, each quantized at most once.
type activation struct {
	x     []float32
	buf   [64][]byte // by quant.Type: the quantized activation
	valid [64]bool
}

func (a *activation) init(types []quant.Type, maxLen int) {
	for _, t := range types {
		tr := quant.TraitsOf(t)
		n := (maxLen + tr.BlockSize - 1) / tr.BlockSize * tr.TypeSize
		a.buf[t] = make([]byte, n)
	}
}

// set makes x the activation; quantized forms are made on demand.
func (a *activation) set(x []float32) {
	a.x = x
	a.valid = [64]bool{}
}

// get returns the activation in format t. Q8_0 and Q8_1 are made as ggml's
// x86 CPU backend makes them (see actquant.go), the others by quant.
func (a *activation) get(t quant.Type) []byte {
	if t == quant.F32 {
		return f32bytes(a.x)
	}
	if !a.valid[t] {
		tr := quant.TraitsOf(t)
		n := len(a.x) / tr.BlockSize * tr.TypeSize
		switch t {
		case quant.Q8_0:
			quantizeQ8_0CPU(a.buf[t][:n], a.x)
		case quant.Q8_1:
			quantizeQ8_1CPU(a.buf[t][:n], a.x)
		default:
			tr.FromFloat(a.buf[t][:n], a.x)
		}
		a.valid[t] = true
	}
	tr := quant.TraitsOf(t)
	return a.buf[t][:len(a.x)/tr.BlockSize*tr.TypeSize]
}

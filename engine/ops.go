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
			v[2*i], v[2*i+1] = rotate(v[2*i], v[2*i+1], cos[i], sin[i])
		}
	}
}

// rotate returns (x0·cos − x1·sin, x1·cos + x0·sin) as ggml-cpu's normal
// rope computes it in llama.cpp's x86 builds: GCC contracts each expression
// into one fused multiply-add on its cos product, the sin product rounded
// first (vfmsub and vfmadd over a rounded vmulps, in libggml-cpu-zen4.so
// of node-llama-cpp 3.21.1).
func rotate(x0, x1, cos, sin float32) (float32, float32) {
	return quant.FMA32(x0, cos, -float32(x1*sin)), quant.FMA32(x1, cos, float32(x0*sin))
}

// rotateNeoX is rotate as ggml-cpu's NeoX rope computes it there (a scalar
// loop, contracted otherwise): x0·cos − x1·sin fused on x0·cos, and
// x0·sin + x1·cos fused on x0·sin, x1·cos rounded first.
func rotateNeoX(x0, x1, cos, sin float32) (float32, float32) {
	return quant.FMA32(x0, cos, -float32(x1*sin)), quant.FMA32(x0, sin, float32(x1*cos))
}

// ropeNeoX rotates each (x[i], x[i+n]) pair, n = len(cos), of the first 2n
// dims of every head by the i-th angle (GPT-NeoX's rope,
// LLAMA_ROPE_TYPE_NEOX: qwen2, phi3).
func ropeNeoX(x []float32, headDim int, cos, sin []float32) {
	n := len(cos)
	for h := 0; h+headDim <= len(x); h += headDim {
		v := x[h : h+headDim]
		for i := range cos {
			v[i], v[i+n] = rotateNeoX(v[i], v[i+n], cos[i], sin[i])
		}
	}
}

// add sets dst += src.
func add(dst, src []float32) {
	for i, v := range src {
		dst[i] += v
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
// x86 CPU backend makes them (quant.QuantizeActQ8_0), the others by their
// FromFloat.
func (a *activation) get(t quant.Type) []byte {
	if t == quant.F32 {
		return quant.F32Bytes(a.x)
	}
	if !a.valid[t] {
		tr := quant.TraitsOf(t)
		n := len(a.x) / tr.BlockSize * tr.TypeSize
		switch t {
		case quant.Q8_0:
			quant.QuantizeActQ8_0(a.buf[t][:n], a.x)
		case quant.Q8_1:
			quant.QuantizeActQ8_1(a.buf[t][:n], a.x)
		default:
			tr.FromFloat(a.buf[t][:n], a.x)
		}
		a.valid[t] = true
	}
	tr := quant.TraitsOf(t)
	return a.buf[t][:len(a.x)/tr.BlockSize*tr.TypeSize]
}

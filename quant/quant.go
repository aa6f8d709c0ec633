// Package quant implements ggml's tensor element formats: their block
// layouts, dequantisers, quantisers and fused dot products.
//
// Every format is described once, by an entry in a single traits table
// indexed by its ggml type id (see TraitsOf and table.go). Each block format
// lives in its own file with its byte layout, bit rate, a compile-time size
// check and its portable kernels.
//
// Dot products follow ggml's mul_mat: the activation vector is quantised once
// per matrix-vector product to the weight type's VecDotType (Q8_0, Q8_1 or
// Q8_K for the quantised formats), and the kernels are integer dot products
// over the quantised values, scaled per block exactly as ggml's generic C
// kernels do, or, for Q2_K, Q3_K and Q5_K, as ggml's x86 SIMD kernels do
// (kx86.go), the ones llama.cpp runs them with.
//
// The package also holds the other kernels of the engine's hot loops, over
// float32 vectors (DotF16, AxpyF16, ExpShift, SwiGLU, RoundFP16) and the
// activation quantizers of ggml's x86 backend (QuantizeActQ8_0, Q8_1).
// Every kernel has a readable reference beside it, a portable Go kernel
// that is always compiled, and SIMD twins for wasm (SIMD128) and amd64
// (AVX2, AVX512-VNNI), which run where GOEXPERIMENT=simd builds them and
// the CPU has their features, chosen once per process (table.go).
//
// Everything is little-endian, as in GGUF files.
package quant

import (
	"errors"
	"fmt"
	"strconv"
)

// Type is a ggml tensor element type id, as stored in GGUF tensor infos.
type Type uint32

// The ggml type ids. Ids 4, 5 (the removed Q4_2, Q4_3) and 31-33 (the removed
// Q4_0_4_4, Q4_0_4_8, Q4_0_8_8) are not valid.
const (
	F32     Type = 0
	F16     Type = 1
	Q4_0    Type = 2
	Q4_1    Type = 3
	Q5_0    Type = 6
	Q5_1    Type = 7
	Q8_0    Type = 8
	Q8_1    Type = 9
	Q2_K    Type = 10
	Q3_K    Type = 11
	Q4_K    Type = 12
	Q5_K    Type = 13
	Q6_K    Type = 14
	Q8_K    Type = 15
	IQ2_XXS Type = 16
	IQ2_XS  Type = 17
	IQ3_XXS Type = 18
	IQ1_S   Type = 19
	IQ4_NL  Type = 20
	IQ3_S   Type = 21
	IQ2_S   Type = 22
	IQ4_XS  Type = 23
	I8      Type = 24
	I16     Type = 25
	I32     Type = 26
	I64     Type = 27
	F64     Type = 28
	IQ1_M   Type = 29
	BF16    Type = 30
	TQ1_0   Type = 34
	TQ2_0   Type = 35
)

// Sentinel errors.
var (
	// ErrUnknownType reports a type id that is not a ggml type.
	ErrUnknownType = errors.New("quant: unknown ggml type")
	// ErrBlockMultiple reports an element count that is not a whole number
	// of blocks of the type.
	ErrBlockMultiple = errors.New("quant: element count is not a multiple of the block size")
	// ErrRowSize reports a negative element count or a byte count that
	// does not fit in an int.
	ErrRowSize = errors.New("quant: invalid row size")
)

// Traits describes one ggml type: its block layout and its kernels.
// TraitsOf returns a copy from the package's table, whose kernels are
// reached through the methods below; the zero Traits (of an unknown id) is
// not Valid and has no kernels.
//
// Dequantize, FromFloat and Dot expect whole blocks: len(dst), len(src) and n
// must be multiples of BlockSize and the byte slices must hold at least
// RowSize bytes for them (use RowSize to validate sizes coming from a file).
// A violated precondition is a programming error and panics with an index
// out of range, like any out-of-bounds slice access; so does calling a
// kernel the type does not have (see HasDequantize, HasFromFloat, HasDot).
type Traits struct {
	Name       string // the type's name as in ggml's GGML_TYPE_ enum, e.g. "Q4_K"
	BlockSize  int    // elements per block
	TypeSize   int    // bytes per block
	VecDotType Type   // the activation format Dot takes

	kernels
}

// kernels are a type's kernels (see table.go); a nil kernel is one the
// type does not have, or (dotN, dotRows, dotRowsN) one whose work the
// methods do with the kernels it has.
type kernels struct {
	// dequantize decodes len(dst)/BlockSize blocks of src into dst.
	dequantize func(dst []float32, src []byte)
	// fromFloat quantises len(src)/BlockSize blocks of src into dst with
	// ggml's reference quantiser.
	fromFloat func(dst []byte, src []float32)
	// dot returns the dot product of n elements of weights w (this type)
	// with n activations act (encoded as VecDotType).
	dot func(n int, w, act []byte) float32
	// dotN sets out[i] to dot(n, w, acts[i]) for up to MaxDotN activations,
	// decoding each weight block once (see DotEach).
	dotN func(n int, w []byte, acts [][]byte, out []float32)
	// dotRows sets out[r] to dot(n, w[r*rowBytes:], act) for r < len(out),
	// rowBytes = n/BlockSize*TypeSize: a matrix-vector product over
	// consecutive rows, where a kernel can prepare the activation once and
	// share its loads between rows (see MatVec).
	dotRows func(n int, w, act []byte, out []float32)
	// dotRowsN sets outs[i][at+r] to dot(n, w[r*rowBytes:], acts[i]) for
	// up to MaxDotN activations and every row r < len(w)/rowBytes: a
	// matrix times a prefill batch, the activations prepared once per call
	// (see MatMul).
	dotRowsN func(n int, w []byte, acts [][]byte, outs [][]float32, at int)
}

// Valid reports whether tr describes a type (TraitsOf of an unknown id
// returns the zero Traits, which does not).
func (tr Traits) Valid() bool { return tr.BlockSize > 0 }

// HasDequantize reports whether the type has a dequantiser.
func (tr Traits) HasDequantize() bool { return tr.dequantize != nil }

// HasFromFloat reports whether the type has a quantiser.
func (tr Traits) HasFromFloat() bool { return tr.fromFloat != nil }

// HasDot reports whether the type has a dot kernel (and so DotEach, MatVec
// and MatMul).
func (tr Traits) HasDot() bool { return tr.dot != nil }

// Dequantize decodes len(dst)/BlockSize blocks of src into dst.
func (tr Traits) Dequantize(dst []float32, src []byte) { tr.dequantize(dst, src) }

// FromFloat quantises len(src)/BlockSize blocks of src into dst with
// ggml's reference quantiser.
func (tr Traits) FromFloat(dst []byte, src []float32) { tr.fromFloat(dst, src) }

// Dot returns the dot product of n elements of weights w (this type) with
// n activations act (encoded as VecDotType).
func (tr Traits) Dot(n int, w, act []byte) float32 { return tr.dot(n, w, act) }

// String returns the ggml name of t (e.g. "Q4_K"), or "type(N)" for an
// unknown id.
func (t Type) String() string {
	if tr := TraitsOf(t); tr.Valid() {
		return tr.Name
	}
	return "type(" + strconv.FormatUint(uint64(t), 10) + ")"
}

// RowSize returns the number of bytes that n elements of type t occupy.
// It fails with ErrUnknownType, ErrBlockMultiple or ErrRowSize.
func RowSize(t Type, n int) (int, error) {
	tr := TraitsOf(t)
	if !tr.Valid() {
		return 0, fmt.Errorf("%w: id %d", ErrUnknownType, uint32(t))
	}
	if n < 0 {
		return 0, fmt.Errorf("%w: %d elements", ErrRowSize, n)
	}
	if n%tr.BlockSize != 0 {
		return 0, fmt.Errorf("%w: %d elements of %s (block size %d)", ErrBlockMultiple, n, tr.Name, tr.BlockSize)
	}
	blocks := n / tr.BlockSize
	if blocks > maxInt/tr.TypeSize {
		return 0, fmt.Errorf("%w: %d elements of %s overflow", ErrRowSize, n, tr.Name)
	}
	return blocks * tr.TypeSize, nil
}

const maxInt = int(^uint(0) >> 1)

// Block sizes in elements: qk for the 32-element formats, qkK for the
// 256-element K-quant super-blocks.
const (
	qk  = 32
	qkK = 256
)

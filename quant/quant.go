// Package quant implements ggml's tensor element formats: their block
// layouts, dequantisers, quantisers and fused dot products.
//
// Every format is described once, by an entry in a single traits table
// indexed by its ggml type id (see TraitsOf). Each block format lives in its
// own file with its byte layout, bit rate and a compile-time size check.
//
// Dot products follow ggml's mul_mat: the activation vector is quantised once
// per matrix-vector product to the weight type's VecDotType (Q8_0, Q8_1 or
// Q8_K for the quantised formats), and the kernels are integer dot products
// over the quantised values, scaled per block exactly as ggml's generic C
// kernels do.
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

// Traits describes one ggml type.
//
// Dequantize, FromFloat and Dot expect whole blocks: len(dst), len(src) and n
// must be multiples of BlockSize and the byte slices must hold at least
// RowSize bytes for them (use RowSize to validate sizes coming from a file).
// A violated precondition is a programming error and panics with an index
// out of range, like any out-of-bounds slice access.
type Traits struct {
	Name       string // the type's name as in ggml's GGML_TYPE_ enum, e.g. "Q4_K"
	BlockSize  int    // elements per block
	TypeSize   int    // bytes per block
	VecDotType Type   // the activation format Dot takes

	// Dequantize decodes len(dst)/BlockSize blocks of src into dst.
	// nil if not implemented.
	Dequantize func(dst []float32, src []byte)
	// FromFloat quantises len(src)/BlockSize blocks of src into dst with
	// ggml's reference quantiser. nil if not implemented.
	FromFloat func(dst []byte, src []float32)
	// Dot returns the dot product of n elements of weights w (this type)
	// with n activations act (encoded as VecDotType). nil if not
	// implemented.
	Dot func(n int, w, act []byte) float32
	// DotN sets out[i] to Dot(n, w, acts[i]) for up to MaxDotN
	// activations, decoding each weight block once (see DotEach, which
	// falls back to Dot when it is nil).
	DotN func(n int, w []byte, acts [][]byte, out []float32)
	// DotRows sets out[r] to Dot(n, w[r*rowBytes:], act) for r < len(out),
	// rowBytes = n/BlockSize*TypeSize: a matrix-vector product over
	// consecutive rows, where a kernel can prepare the activation once and
	// share its loads between rows (see MatVec, which falls back to Dot per
	// row when it is nil).
	DotRows func(n int, w, act []byte, out []float32)
	// DotRowsN sets outs[i][at+r] to Dot(n, w[r*rowBytes:], acts[i]) for
	// up to MaxDotN activations and every row r < len(w)/rowBytes: a
	// matrix times a prefill batch, the activations prepared once per call
	// (see MatMul, which falls back to DotEach per row when it is nil).
	DotRowsN func(n int, w []byte, acts [][]byte, outs [][]float32, at int)
}

// traits is the one table of formats, indexed by type id. An entry with an
// empty Name is not a valid type. Adding a kernel is a one-field change here.
var traits = [...]Traits{
	F32:  {Name: "F32", BlockSize: 1, TypeSize: 4, VecDotType: F32, Dequantize: dequantizeF32, FromFloat: fromFloatF32, Dot: dotF32},
	F16:  {Name: "F16", BlockSize: 1, TypeSize: 2, VecDotType: F16, Dequantize: dequantizeF16, FromFloat: fromFloatF16, Dot: dotF16},
	BF16: {Name: "BF16", BlockSize: 1, TypeSize: 2, VecDotType: BF16, Dequantize: dequantizeBF16, FromFloat: fromFloatBF16, Dot: dotBF16},
	F64:  {Name: "F64", BlockSize: 1, TypeSize: 8, VecDotType: F64},
	I8:   {Name: "I8", BlockSize: 1, TypeSize: 1, VecDotType: I8},
	I16:  {Name: "I16", BlockSize: 1, TypeSize: 2, VecDotType: I16},
	I32:  {Name: "I32", BlockSize: 1, TypeSize: 4, VecDotType: I32},
	I64:  {Name: "I64", BlockSize: 1, TypeSize: 8, VecDotType: I64},

	Q4_0: {Name: "Q4_0", BlockSize: qk, TypeSize: q4_0Bytes, VecDotType: Q8_0, Dequantize: dequantizeQ4_0, FromFloat: quantizeQ4_0, Dot: dotQ4_0, DotN: dotNQ4_0, DotRows: dotRowsQ4_0, DotRowsN: dotRowsNQ4_0},
	Q4_1: {Name: "Q4_1", BlockSize: qk, TypeSize: q4_1Bytes, VecDotType: Q8_1, Dequantize: dequantizeQ4_1, FromFloat: quantizeQ4_1, Dot: dotQ4_1},
	Q5_0: {Name: "Q5_0", BlockSize: qk, TypeSize: q5_0Bytes, VecDotType: Q8_0, Dequantize: dequantizeQ5_0, FromFloat: quantizeQ5_0, Dot: dotQ5_0},
	Q5_1: {Name: "Q5_1", BlockSize: qk, TypeSize: q5_1Bytes, VecDotType: Q8_1, Dequantize: dequantizeQ5_1, FromFloat: quantizeQ5_1, Dot: dotQ5_1},
	Q8_0: {Name: "Q8_0", BlockSize: qk, TypeSize: q8_0Bytes, VecDotType: Q8_0, Dequantize: dequantizeQ8_0, FromFloat: quantizeQ8_0, Dot: dotQ8_0, DotN: dotNQ8_0, DotRows: dotRowsQ8_0, DotRowsN: dotRowsNQ8_0},
	Q8_1: {Name: "Q8_1", BlockSize: qk, TypeSize: q8_1Bytes, VecDotType: Q8_1, FromFloat: quantizeQ8_1},

	Q2_K: {Name: "Q2_K", BlockSize: qkK, TypeSize: q2_KBytes, VecDotType: Q8_K, Dequantize: dequantizeQ2_K, FromFloat: quantizeQ2_K, Dot: dotQ2_K},
	Q3_K: {Name: "Q3_K", BlockSize: qkK, TypeSize: q3_KBytes, VecDotType: Q8_K, Dequantize: dequantizeQ3_K, FromFloat: quantizeQ3_K, Dot: dotQ3_K},
	Q4_K: {Name: "Q4_K", BlockSize: qkK, TypeSize: q4_KBytes, VecDotType: Q8_K, Dequantize: dequantizeQ4_K, FromFloat: quantizeQ4_K, Dot: dotQ4_K, DotN: dotNQ4_K, DotRows: dotRowsQ4_K, DotRowsN: dotRowsNQ4_K},
	Q5_K: {Name: "Q5_K", BlockSize: qkK, TypeSize: q5_KBytes, VecDotType: Q8_K, Dequantize: dequantizeQ5_K, FromFloat: quantizeQ5_K, Dot: dotQ5_K},
	Q6_K: {Name: "Q6_K", BlockSize: qkK, TypeSize: q6_KBytes, VecDotType: Q8_K, Dequantize: dequantizeQ6_K, FromFloat: quantizeQ6_K, Dot: dotQ6_K, DotN: dotNQ6_K, DotRows: dotRowsQ6_K, DotRowsN: dotRowsNQ6_K},
	Q8_K: {Name: "Q8_K", BlockSize: qkK, TypeSize: q8_KBytes, VecDotType: Q8_K, FromFloat: quantizeQ8_K},

	IQ2_XXS: {Name: "IQ2_XXS", BlockSize: qkK, TypeSize: iq2_XXSBytes, VecDotType: Q8_K, Dequantize: dequantizeIQ2_XXS, Dot: dotIQ2_XXS},
	IQ2_XS:  {Name: "IQ2_XS", BlockSize: qkK, TypeSize: iq2_XSBytes, VecDotType: Q8_K, Dequantize: dequantizeIQ2_XS, Dot: dotIQ2_XS},
	IQ2_S:   {Name: "IQ2_S", BlockSize: qkK, TypeSize: iq2_SBytes, VecDotType: Q8_K, Dequantize: dequantizeIQ2_S, Dot: dotIQ2_S},
	IQ3_XXS: {Name: "IQ3_XXS", BlockSize: qkK, TypeSize: iq3_XXSBytes, VecDotType: Q8_K, Dequantize: dequantizeIQ3_XXS, Dot: dotIQ3_XXS},
	IQ3_S:   {Name: "IQ3_S", BlockSize: qkK, TypeSize: iq3_SBytes, VecDotType: Q8_K, Dequantize: dequantizeIQ3_S, Dot: dotIQ3_S},
	IQ1_S:   {Name: "IQ1_S", BlockSize: qkK, TypeSize: iq1_SBytes, VecDotType: Q8_K, Dequantize: dequantizeIQ1_S, Dot: dotIQ1_S},
	IQ1_M:   {Name: "IQ1_M", BlockSize: qkK, TypeSize: iq1_MBytes, VecDotType: Q8_K, Dequantize: dequantizeIQ1_M, Dot: dotIQ1_M},
	IQ4_NL:  {Name: "IQ4_NL", BlockSize: qk, TypeSize: iq4_NLBytes, VecDotType: Q8_0, Dequantize: dequantizeIQ4_NL, FromFloat: quantizeIQ4_NL, Dot: dotIQ4_NL},
	IQ4_XS:  {Name: "IQ4_XS", BlockSize: qkK, TypeSize: iq4_XSBytes, VecDotType: Q8_K, Dequantize: dequantizeIQ4_XS, FromFloat: quantizeIQ4_XS, Dot: dotIQ4_XS},
	TQ1_0:   {Name: "TQ1_0", BlockSize: qkK, TypeSize: tq1_0Bytes, VecDotType: Q8_K, Dequantize: dequantizeTQ1_0, FromFloat: quantizeTQ1_0, Dot: dotTQ1_0},
	TQ2_0:   {Name: "TQ2_0", BlockSize: qkK, TypeSize: tq2_0Bytes, VecDotType: Q8_K, Dequantize: dequantizeTQ2_0, FromFloat: quantizeTQ2_0, Dot: dotTQ2_0},
	E8_IQ3:  {Name: "E8_IQ3", BlockSize: qkK, TypeSize: e8iq3Bytes, VecDotType: Q8_K, Dequantize: dequantizeE8IQ3, FromFloat: quantizeE8IQ3, Dot: dotE8IQ3}, // picoLM's own: see e8iq3.go
}

// TraitsOf returns the traits of t, or nil if t is not a ggml type.
func TraitsOf(t Type) *Traits {
	if int(t) >= len(traits) || traits[t].Name == "" {
		return nil
	}
	return &traits[t]
}

// String returns the ggml name of t (e.g. "Q4_K"), or "type(N)" for an
// unknown id.
func (t Type) String() string {
	if tr := TraitsOf(t); tr != nil {
		return tr.Name
	}
	return "type(" + strconv.FormatUint(uint64(t), 10) + ")"
}

// RowSize returns the number of bytes that n elements of type t occupy.
// It fails with ErrUnknownType, ErrBlockMultiple or ErrRowSize.
func RowSize(t Type, n int) (int, error) {
	tr := TraitsOf(t)
	if tr == nil {
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

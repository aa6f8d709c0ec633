package quant

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Weight validation, as llama.cpp's ggml_validate_row_data: a NaN or an
// infinity in a block's scales (or in a float tensor's values) poisons every
// product that touches the block, and a model holding one generates garbage
// (token 0 at every step) without any other sign. Validate finds them. Only
// the scales of the quantized formats can hold one (their quants are
// integers), so it reads a few bytes per block.

// ErrNonFinite is matched (errors.Is) by every *NonFiniteError.
var ErrNonFinite = errors.New("quant: NaN or infinite value")

// NonFiniteError locates the first NaN or infinity Validate found.
type NonFiniteError struct {
	Type  Type
	Block int     // the block's index in the data (the element's, for F32, F16, BF16, F64)
	Field string  // the block field holding it ("d", "dmin", "m", "s"); "" for a float tensor's value
	Value float64 // the value, NaN or ±Inf
}

func (e *NonFiniteError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("quant: %s element %d is %v", e.Type, e.Block, e.Value)
	}
	return fmt.Sprintf("quant: %s block %d: scale %s is %v", e.Type, e.Block, e.Field, e.Value)
}

func (e *NonFiniteError) Is(target error) bool { return target == ErrNonFinite }

// scaleField is a block scale: its byte offset in the block and its name.
type scaleField struct {
	off  int
	name string
}

// blockScales lists, for each quantized format, where its scales are in a
// block (see each format's layout): fp16 unless the format is Q8_K (one
// float32 d). IQ1_M's fp16 scale is spread over the top nibbles of its four
// scale words (iq1MD); it is listed at the offset of the first. n is 0 for
// the float and integer types.
func blockScales(t Type) (f [2]scaleField, n int) {
	one := func(off int) ([2]scaleField, int) { return [2]scaleField{{off, "d"}}, 1 }
	two := func(name string) ([2]scaleField, int) { return [2]scaleField{{0, "d"}, {2, name}}, 2 }
	switch t {
	case Q4_0, Q5_0, Q8_0, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ4_NL, IQ4_XS, Q8_K:
		return one(0)
	case Q4_1, Q5_1:
		return two("m")
	case Q8_1:
		return two("s")
	case Q4_K, Q5_K:
		return two("dmin")
	case Q2_K:
		return [2]scaleField{{80, "d"}, {82, "dmin"}}, 2
	case Q3_K:
		return one(108)
	case Q6_K:
		return one(208)
	case TQ1_0:
		return one(52)
	case TQ2_0:
		return one(64)
	case E8_IQ3:
		return one(96)
	case IQ1_M:
		return one(48)
	}
	return f, 0
}

// Validate checks data, whole blocks of type t, for NaN and infinite values:
// every block scale of a quantized format, every value of F32, F16, BF16 and
// F64 data (integer types hold none). It returns a *NonFiniteError for the
// first it finds, an error for data that is not whole blocks or a type it
// does not know, and nil otherwise. It does not allocate.
func Validate(t Type, data []byte) error {
	tr := TraitsOf(t)
	if !tr.Valid() {
		return fmt.Errorf("%w: id %d", ErrUnknownType, uint32(t))
	}
	size := tr.TypeSize
	if len(data)%size != 0 {
		return fmt.Errorf("%w: %d bytes of %s are not whole blocks of %d", ErrRowSize, len(data), tr.Name, size)
	}
	bad := func(i int, field string, v float64) error { return nonFinite(t, i, field, v) }
	le := binary.LittleEndian
	switch t {
	case F32:
		for i := 0; i < len(data); i += 4 {
			if u := le.Uint32(data[i:]); u&0x7f800000 == 0x7f800000 {
				return bad(i/4, "", float64(math.Float32frombits(u)))
			}
		}
		return nil
	case F16:
		for i := 0; i < len(data); i += 2 {
			if h := le.Uint16(data[i:]); h&0x7c00 == 0x7c00 {
				return bad(i/2, "", float64(FP16ToFP32(h)))
			}
		}
		return nil
	case BF16:
		for i := 0; i < len(data); i += 2 {
			if h := le.Uint16(data[i:]); h&0x7f80 == 0x7f80 {
				return bad(i/2, "", float64(math.Float32frombits(uint32(h)<<16)))
			}
		}
		return nil
	case F64:
		for i := 0; i < len(data); i += 8 {
			if u := le.Uint64(data[i:]); u&0x7ff0000000000000 == 0x7ff0000000000000 {
				return bad(i/8, "", math.Float64frombits(u))
			}
		}
		return nil
	case Q8_K:
		for b := 0; b < len(data); b += size {
			if u := le.Uint32(data[b:]); u&0x7f800000 == 0x7f800000 {
				return bad(b/size, "d", float64(math.Float32frombits(u)))
			}
		}
		return nil
	case IQ1_M:
		for b := 0; b < len(data); b += size {
			if d := iq1MD(data[b : b+size]); math.IsNaN(float64(d)) || math.IsInf(float64(d), 0) {
				return bad(b/size, "d", float64(d))
			}
		}
		return nil
	}
	fields, n := blockScales(t)
	for b := 0; b < len(data); b += size {
		for _, f := range fields[:n] {
			if h := le.Uint16(data[b+f.off:]); h&0x7c00 == 0x7c00 {
				return bad(b/size, f.name, float64(FP16ToFP32(h)))
			}
		}
	}
	return nil
}

func nonFinite(t Type, block int, field string, v float64) error {
	return &NonFiniteError{Type: t, Block: block, Field: field, Value: v}
}

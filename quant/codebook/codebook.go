// Package codebook reads and writes the scale fields of ggml's codebook
// formats (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ4_XS, IQ4_NL, and
// picoLM's E8_IQ3) and splits
// every weight of a block into an effective scale and a small signed integer:
//
//	weight = Eff(d, s) · v
//
// exactly in float32, as ggml's dequantisers compute it. d is the block's
// fp16 scale (bytes 0-1 in every ggml format), s the integer scale of the weight's
// sub-block and v the codebook entry times its sign (the grid value for the
// IQ2/IQ3 formats, the IQ4_NL level for IQ4_NL and IQ4_XS). The bytes other
// than d and s are the codes; this package never changes them.
//
//	format   block sub  Eff(d, s)           s range  bytes  where s lives
//	IQ2_XXS  256   32   d·(0.5+s)·0.25      0..15    66     top 4 bits of the 2nd uint32 of each 8-byte sub-block (bytes 2..65)
//	IQ2_XS   256   16   d·(0.5+s)·0.25      0..15    74     16 nibbles at bytes 66..73 (low nibble first)
//	IQ2_S    256   16   d·(0.5+s)·0.25      0..15    82     16 nibbles at bytes 74..81
//	IQ3_XXS  256   32   d·(0.5+s)·0.5       0..15    98     top 4 bits of the 8 uint32 at bytes 66..97
//	IQ3_S    256   32   d·(1+2s)            0..15    110    8 nibbles at bytes 106..109
//	IQ4_XS   256   32   d·(s−32)            0..63    136    low 4 bits: nibbles at bytes 4..7; high 2 bits: uint16 at bytes 2..3
//	IQ4_NL   32    32   d                   —        18     (no sub-block scale)
//	E8_IQ3   256   32   d·(0.5+s)·0.25      0..15    98     top 4 bits of the 8 uint32 at bytes 64..95; d at bytes 96-97
//
// E8_IQ3 is picoLM's own container (see package quant); its v is IQ3_XXS's
// grid value (4..62) with its sign.
//
// Every product is exact in float32: d has 11 significant bits, the s factor
// at most 6 and v at most 7, and the constant factors are powers of two.
package codebook

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/picolm/picolm-wasm/quant"
)

// Sentinel errors.
var (
	// ErrFormat reports a type that is not one of the codebook formats.
	ErrFormat = errors.New("codebook: not a codebook format")
	// ErrScaleRange reports a sub-block scale beyond its format's range.
	ErrScaleRange = errors.New("codebook: sub-block scale out of range")
	// ErrNotInteger reports a decoded v that is not a small integer (which
	// would mean the format's dequantiser disagrees with this package).
	ErrNotInteger = errors.New("codebook: decoded value is not a small integer")
)

// Format describes one codebook format's scale fields.
type Format struct {
	Type  quant.Type
	Block int // weights per block (one fp16 d)
	Sub   int // weights per sub-block scale (= Block when there is none)
	Bytes int // bytes per block
	SMax  int // s is in 0..SMax; 0 when the format has no sub-block scale
	DOff  int // offset of d in the block: 0, except E8_IQ3's 96

	// Eff is d·A·(s+B), computed in float32 in ggml's order (see Eff).
	a, b    float32
	neutral uint8   // the s that makes Eff(1, s) == unit
	unit    float32 // Eff(1, neutral): a power of two
	maxV    int     // |v| <= maxV
}

var formats = [...]Format{
	{Type: quant.IQ2_XXS, Block: 256, Sub: 32, Bytes: 66, SMax: 15, a: 0.25, b: 0.5, neutral: 0, unit: 0.125, maxV: 43},
	{Type: quant.IQ2_XS, Block: 256, Sub: 16, Bytes: 74, SMax: 15, a: 0.25, b: 0.5, neutral: 0, unit: 0.125, maxV: 43},
	{Type: quant.IQ2_S, Block: 256, Sub: 16, Bytes: 82, SMax: 15, a: 0.25, b: 0.5, neutral: 0, unit: 0.125, maxV: 43},
	{Type: quant.IQ3_XXS, Block: 256, Sub: 32, Bytes: 98, SMax: 15, a: 0.5, b: 0.5, neutral: 0, unit: 0.25, maxV: 62},
	{Type: quant.IQ3_S, Block: 256, Sub: 32, Bytes: 110, SMax: 15, a: 2, b: 0.5, neutral: 0, unit: 1, maxV: 15},
	{Type: quant.IQ4_XS, Block: 256, Sub: 32, Bytes: 136, SMax: 63, a: 1, b: -32, neutral: 33, unit: 1, maxV: 127},
	{Type: quant.IQ4_NL, Block: 32, Sub: 32, Bytes: 18, SMax: 0, a: 1, b: 0, neutral: 0, unit: 1, maxV: 127},
	{Type: quant.E8_IQ3, Block: 256, Sub: 32, Bytes: 98, SMax: 15, DOff: 96, a: 0.25, b: 0.5, neutral: 0, unit: 0.125, maxV: 62},
}

// MaxSubs is the largest number of sub-blocks per block (IQ2_XS, IQ2_S).
const MaxSubs = 16

// Of returns the format of type t, or an error wrapping ErrFormat.
func Of(t quant.Type) (*Format, error) {
	for i := range formats {
		if formats[i].Type == t {
			return &formats[i], nil
		}
	}
	return nil, fmt.Errorf("%w: %v", ErrFormat, t)
}

// Formats returns the types this package knows.
func Formats() []quant.Type {
	ts := make([]quant.Type, len(formats))
	for i := range formats {
		ts[i] = formats[i].Type
	}
	return ts
}

// Subs returns the number of sub-block scales per block (0 for IQ4_NL).
func (f *Format) Subs() int {
	if f.SMax == 0 {
		return 0
	}
	return f.Block / f.Sub
}

// MaxV returns the largest |v| the format's codebook holds.
func (f *Format) MaxV() int { return f.maxV }

// D returns the fp16 bits of the block's scale d.
func (f *Format) D(blk []byte) uint16 { return binary.LittleEndian.Uint16(blk[:f.Bytes][f.DOff:]) }

// SetD writes the fp16 bits of d into the block.
func (f *Format) SetD(blk []byte, d uint16) { binary.LittleEndian.PutUint16(blk[:f.Bytes][f.DOff:], d) }

// S reads the block's sub-block scales into s[:f.Subs()].
func (f *Format) S(blk []byte, s []uint8) {
	blk = blk[:f.Bytes]
	switch f.Type {
	case quant.IQ2_XXS:
		for ib := range 8 {
			s[ib] = blk[2+8*ib+7] >> 4
		}
	case quant.IQ3_XXS:
		for ib := range 8 {
			s[ib] = blk[66+4*ib+3] >> 4
		}
	case quant.E8_IQ3:
		for ib := range 8 {
			s[ib] = blk[64+4*ib+3] >> 4
		}
	case quant.IQ2_XS:
		nibbles(s[:16], blk[66:74])
	case quant.IQ2_S:
		nibbles(s[:16], blk[74:82])
	case quant.IQ3_S:
		nibbles(s[:8], blk[106:110])
	case quant.IQ4_XS:
		h := binary.LittleEndian.Uint16(blk[2:])
		nibbles(s[:8], blk[4:8])
		for j := range 8 {
			s[j] |= uint8(h>>(2*j)&3) << 4
		}
	}
}

// SetS writes s[:f.Subs()] into the block. Every s must be in 0..SMax;
// otherwise SetS writes nothing and returns an error wrapping ErrScaleRange.
func (f *Format) SetS(blk []byte, s []uint8) error {
	blk = blk[:f.Bytes]
	for k, v := range s[:f.Subs()] {
		if int(v) > f.SMax {
			return fmt.Errorf("%w: %v sub-block %d: %d > %d", ErrScaleRange, f.Type, k, v, f.SMax)
		}
	}
	switch f.Type {
	case quant.IQ2_XXS:
		for ib := range 8 {
			p := &blk[2+8*ib+7]
			*p = *p&0x0f | s[ib]<<4
		}
	case quant.IQ3_XXS:
		for ib := range 8 {
			p := &blk[66+4*ib+3]
			*p = *p&0x0f | s[ib]<<4
		}
	case quant.E8_IQ3:
		for ib := range 8 {
			p := &blk[64+4*ib+3]
			*p = *p&0x0f | s[ib]<<4
		}
	case quant.IQ2_XS:
		packNibbles(blk[66:74], s[:16])
	case quant.IQ2_S:
		packNibbles(blk[74:82], s[:16])
	case quant.IQ3_S:
		packNibbles(blk[106:110], s[:8])
	case quant.IQ4_XS:
		var h uint16
		for j := range 8 {
			blk[4+j/2] = blk[4+j/2]&(0xf0>>(4*(j%2))) | (s[j]&15)<<(4*(j%2))
			h |= uint16(s[j]>>4) << (2 * j)
		}
		binary.LittleEndian.PutUint16(blk[2:], h)
	}
	return nil
}

func nibbles(s []uint8, b []byte) {
	for i := range s {
		s[i] = b[i/2] >> (4 * (i % 2)) & 15
	}
}

func packNibbles(b []byte, s []uint8) {
	for i := range b {
		b[i] = s[2*i] | s[2*i+1]<<4
	}
}

// Eff returns the effective scale of a sub-block with scale s in a block
// with fp16 scale bits d, in float32 exactly as ggml's dequantiser computes
// it (s is ignored for IQ4_NL).
func (f *Format) Eff(d uint16, s uint8) float32 {
	df := quant.FP16ToFP32(d)
	switch f.Type {
	case quant.IQ4_NL:
		return df
	case quant.IQ4_XS:
		return df * float32(int32(s)-32)
	case quant.IQ3_S:
		return df * float32(1+2*int32(s))
	}
	return df * (f.b + float32(s)) * f.a
}

// Values decodes each weight's v of the whole blocks in src into
// v[:len(src)/f.Bytes*f.Block]: the block is dequantised by package quant
// with d = 1 and every s neutral (so that Eff is a power of two) and divided
// by that Eff. It fails with ErrNotInteger if a result is not an integer in
// -MaxV..MaxV, which no valid code can produce.
func (f *Format) Values(v []int8, src []byte) error {
	n := len(src) / f.Bytes
	tmp := make([]byte, n*f.Bytes)
	copy(tmp, src)
	var s [MaxSubs]uint8
	for k := range s {
		s[k] = f.neutral
	}
	for b := range n {
		blk := tmp[b*f.Bytes : (b+1)*f.Bytes]
		f.SetD(blk, 0x3c00) // 1.0
		if err := f.SetS(blk, s[:]); err != nil {
			return err
		}
	}
	w := make([]float32, n*f.Block)
	quant.TraitsOf(f.Type).Dequantize(w, tmp)
	for i, x := range w {
		q := x / f.unit
		if q != float32(math.Round(float64(q))) || q > float32(f.maxV) || q < -float32(f.maxV) {
			return fmt.Errorf("%w: %v weight %d decodes to %v", ErrNotInteger, f.Type, i, q)
		}
		v[i] = int8(q)
	}
	return nil
}

// Dequantize writes the blocks' weights Eff(d, s)·v into dst, given their
// values v (from Values). It equals package quant's dequantiser bit for bit.
func (f *Format) Dequantize(dst []float32, src []byte, v []int8) {
	var s [MaxSubs]uint8
	for b := range len(dst) / f.Block {
		blk := src[b*f.Bytes : (b+1)*f.Bytes]
		d := f.D(blk)
		f.S(blk, s[:])
		for i := range f.Block {
			k := b*f.Block + i
			dst[k] = f.Eff(d, s[i/f.Sub]) * float32(v[k])
		}
	}
}

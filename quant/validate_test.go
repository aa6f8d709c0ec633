package quant

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// everyType lists the known types.
func everyType() []Type {
	var ts []Type
	for id := range Type(E8_IQ3 + 1) {
		if TraitsOf(id).Valid() {
			ts = append(ts, id)
		}
	}
	return ts
}

// TestValidateFindsEveryScale: for every format, a NaN or infinity written
// at each scale Validate knows of is found (in the right block), and it is
// a real scale: the dequantized block holds NaN or infinities then. Blocks
// quantized from finite weights (random bytes for formats with no
// quantizer) pass.
func TestValidateFindsEveryScale(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range everyType() {
		tr := TraitsOf(typ)
		const nb = 3
		clean := make([]byte, nb*tr.TypeSize)
		src := make([]float32, nb*tr.BlockSize)
		for i := range src {
			src[i] = float32(r.NormFloat64())
		}
		switch {
		case tr.HasFromFloat():
			tr.FromFloat(clean, src)
		case typ == I8 || typ == I16 || typ == I32 || typ == I64:
			for i := range clean {
				clean[i] = byte(r.IntN(256))
			}
		default:
			// Random codes with small finite fp16 scales.
			for i := range clean {
				clean[i] = byte(r.IntN(256))
			}
			for b := range nb {
				fs, n := blockScales(typ)
				for _, f := range fs[:n] {
					binary.LittleEndian.PutUint16(clean[b*tr.TypeSize+f.off:], 0x2c00) // 1/16
				}
			}
			if typ == IQ1_M {
				for b := range nb {
					putIQ1MD(clean[b*tr.TypeSize:], 0x2c00)
				}
			}
		}
		if err := Validate(typ, clean); err != nil {
			t.Fatalf("%s: clean data: %v", typ, err)
		}
		if err := Validate(typ, clean[:len(clean)-1]); tr.TypeSize > 1 && err == nil || errors.Is(err, ErrNonFinite) {
			t.Errorf("%s: partial block: %v", typ, err)
		}
		type spot struct {
			field string
			put   func(blk []byte, bits uint64)
		}
		var spots []spot
		switch typ {
		case I8, I16, I32, I64:
			continue
		case F32, Q8_K:
			spots = []spot{{"d", func(b []byte, v uint64) { binary.LittleEndian.PutUint32(b, uint32(v)) }}}
		case F64:
			spots = []spot{{"", func(b []byte, v uint64) { binary.LittleEndian.PutUint64(b, v) }}}
		case F16, BF16:
			spots = []spot{{"", func(b []byte, v uint64) { binary.LittleEndian.PutUint16(b, uint16(v)) }}}
		case IQ1_M:
			spots = []spot{{"d", func(b []byte, v uint64) { putIQ1MD(b, uint16(v)) }}}
		default:
			fs, n := blockScales(typ)
			for _, f := range fs[:n] {
				spots = append(spots, spot{f.name, func(b []byte, v uint64) { binary.LittleEndian.PutUint16(b[f.off:], uint16(v)) }})
			}
		}
		if len(spots) == 0 {
			t.Fatalf("%s: Validate knows no scale of it", typ)
		}
		nan, inf := map[Type]uint64{F32: 0x7fc00000, Q8_K: 0x7fc00000, F64: 0x7ff8000000000000, BF16: 0x7fc0}, map[Type]uint64{F32: 0xff800000, Q8_K: 0x7f800000, F64: 0x7ff0000000000000, BF16: 0xff80}
		for _, sp := range spots {
			for _, bits := range []uint64{valueOr(nan, typ, 0x7e00), valueOr(inf, typ, 0xfc00)} {
				b := append([]byte(nil), clean...)
				sp.put(b[tr.TypeSize:], bits) // block 1 (element 1 for the float types)
				var e *NonFiniteError
				if err := Validate(typ, b); !errors.As(err, &e) || !errors.Is(err, ErrNonFinite) || e.Block != 1 || e.Field != sp.field && tr.BlockSize > 1 {
					t.Errorf("%s %s=%#x: %v", typ, sp.field, bits, err)
					continue
				}
				if tr.HasDequantize() {
					out := make([]float32, nb*tr.BlockSize)
					tr.Dequantize(out, b)
					poisoned := false
					for _, v := range out[tr.BlockSize : 2*tr.BlockSize] {
						poisoned = poisoned || math.IsNaN(float64(v)) || math.IsInf(float64(v), 0)
					}
					if !poisoned {
						t.Errorf("%s: %s=%#x does not reach the dequantized block: not a scale", typ, sp.field, bits)
					}
				}
			}
		}
	}
}

func valueOr(m map[Type]uint64, t Type, def uint64) uint64 {
	if v, ok := m[t]; ok {
		return v
	}
	return def
}

// putIQ1MD spreads the fp16 scale h over the top nibbles of an IQ1_M block's
// four scale words (the inverse of iq1MD).
func putIQ1MD(blk []byte, h uint16) {
	for k := range 4 {
		w := binary.LittleEndian.Uint16(blk[48+2*k:])&0x0fff | (h>>(4*k)&0xf)<<12
		binary.LittleEndian.PutUint16(blk[48+2*k:], w)
	}
}

func TestValidateNoAllocs(t *testing.T) {
	data := make([]byte, 100*TraitsOf(Q4_K).TypeSize)
	if a := testing.AllocsPerRun(10, func() { _ = Validate(Q4_K, data) }); a != 0 {
		t.Errorf("%v allocations", a)
	}
}

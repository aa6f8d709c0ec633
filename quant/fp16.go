package quant

import "math"

// fp16ToFP32Table maps every IEEE binary16 bit pattern to its float32 value.
// It is generated once at package initialisation and never written again.
var fp16ToFP32Table = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for h := range t {
		t[h] = math.Float32frombits(fp16Bits(uint16(h)))
	}
	return &t
}()

// FP16ToFP32 converts an IEEE binary16 value to float32 exactly (a table
// lookup).
func FP16ToFP32(h uint16) float32 { return fp16ToFP32Table[h] }

// fp16Bits widens binary16 bits to binary32 bits exactly; it generates the
// lookup table.
func fp16Bits(h uint16) uint32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f && mant == 0: // infinity
		return sign | 0x7f800000
	case exp == 0x1f: // NaN: keep the payload, make it quiet (as F16C does)
		return sign | 0x7fc00000 | mant<<13
	case exp != 0: // normal
		return sign | (exp+127-15)<<23 | mant<<13
	case mant == 0: // signed zero
		return sign
	}
	// Subnormal: normalise the mantissa.
	e := uint32(127 - 15 + 1)
	for mant&0x400 == 0 {
		mant <<= 1
		e--
	}
	return sign | e<<23 | (mant&0x3ff)<<13
}

// FP32ToFP16 converts a float32 to IEEE binary16, rounding to nearest with
// ties to even (as the F16C instructions and ggml's software path do).
// Values too large for binary16 become infinities; NaNs become a quiet NaN.
func FP32ToFP16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15 // binary16 biased exponent
	if e >= 31 {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal (or zero) in binary16: value = m * 2^(e-25) with the
		// implicit bit, i.e. m >> (14-e) units of 2^-24.
		if e < -10 {
			return sign // below half the smallest subnormal
		}
		m := mant | 0x800000
		shift := uint32(14 - e)
		r := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++ // may carry into the exponent, up to infinity: correct
	}
	return sign | uint16(r)
}

// BF16ToFP32 converts a bfloat16 value (the top half of a binary32) to
// float32 exactly.
func BF16ToFP32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// FP32ToBF16 converts a float32 to bfloat16 as ggml does: round to nearest,
// ties to even; NaNs are kept and made quiet.
func FP32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 64
	}
	return uint16((u + (0x7fff + (u>>16)&1)) >> 16)
}

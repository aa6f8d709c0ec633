package quant

import "math"

// fma32Fast is fma32 (x86order.go) with a cheaper common case, for the
// portable kernels that reproduce ggml code built with fused multiply-adds
// (ggml_v_expf, RoPE): WebAssembly and portable Go have no float32 fused
// multiply-add.
//
// a·b is exact in float64 (two 24-bit significands), so rounding p+c to
// float64 and then to float32 differs from rounding it once only when the
// float64 sum s falls exactly halfway between two float32s and p+c does
// not: every float32 halfway point is a float64, so none lies strictly
// between p+c and s, and both round to the same float32 otherwise.
// fma32Halfway settles that rare case with the exact error of s.
func fma32Fast(a, b, c float32) float32 {
	p := float64(float64(a) * float64(b)) // exact (the conversion keeps Go from fusing it with the add)
	s := p + float64(c)
	// For |s| ≥ 2^-126 (float32's normals and beyond) the halfway points are
	// the float64s whose 29 low significand bits are 1 followed by zeros.
	if u := math.Float64bits(s); u&(1<<29-1) != 1<<28 && u&(0x7ff<<52) >= (1023-126)<<52 {
		return float32(s)
	}
	return fma32Halfway(p, float64(c), s)
}

// fma64 returns a·b + c rounded to float64, and whether that sum is halfway
// between two float32s if it is at least 2^-126 in magnitude: where it is
// neither, rounding it to float32 gives fma32(a, b, c) (see fma32Fast).
// It inlines, for the kernels that check the flag once for several.
func fma64(a, b, c float32) (s float64, halfway bool) {
	s = float64(float64(a)*float64(b)) + float64(c)
	return s, math.Float64bits(s)&(1<<29-1) == 1<<28
}

// fma32Halfway is fma32Fast for the sums s = p+c rounded to float64 that are
// halfway between two float32s or below float32's normals.
func fma32Halfway(p, c, s float64) float32 {
	r := float32(s)
	if math.IsInf(s, 0) || s != s || !halfway32(s) {
		return r
	}
	t := s - p
	e := (p - (s - t)) + (c - t) // p + c = s + e exactly (Knuth's TwoSum)
	switch {
	case e > 0 && float64(r) < s:
		return math.Nextafter32(r, float32(math.Inf(1)))
	case e < 0 && float64(r) > s:
		return math.Nextafter32(r, float32(math.Inf(-1)))
	}
	return r // p+c is on r's side of s, or is s itself: r, the even neighbour
}

// halfway32 reports whether the finite s is exactly halfway between two
// consecutive float32s (the largest float32 and 2^128 included, the
// halfway point above which float32 rounding overflows).
func halfway32(s float64) bool {
	a := math.Abs(s)
	if a >= 0x1p-126 {
		return math.Float64bits(a)&(1<<29-1) == 1<<28 && a < 0x1p128
	}
	// Below the normals float32s are the multiples of 2^-149: the halfway
	// points are the odd multiples of 2^-150.
	m := a * 0x1p150 // exact: a power of two, in float64's range
	return m == math.Trunc(m) && math.Mod(m, 2) == 1
}

// FMA32 returns a·b + c rounded once to float32, IEEE 754's fused
// multiply-add (x86's VFMADD), on every platform.
func FMA32(a, b, c float32) float32 { return fma32Fast(a, b, c) }

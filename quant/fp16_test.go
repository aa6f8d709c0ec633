package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFP16ToFP32 checks every binary16 value against its value computed in
// float64 from the fields: (-1)^s · m·2^-24 for exponent 0, (1024+m)·2^(e-25)
// otherwise; infinities; NaNs quiet, with the payload in the top mantissa
// bits (as F16C widens them).
func TestFP16ToFP32(t *testing.T) {
	for h := range 1 << 16 {
		sign, e, m := h>>15, h>>10&0x1f, h&0x3ff
		var want uint32
		switch {
		case e == 0x1f && m != 0:
			want = uint32(sign)<<31 | 0x7fc00000 | uint32(m)<<13
		case e == 0x1f:
			want = math.Float32bits(float32(math.Copysign(math.Inf(1), float64(-sign))))
		default:
			v := math.Ldexp(float64(m), -24)
			if e != 0 {
				v = math.Ldexp(float64(1024+m), e-25)
			}
			if sign == 1 {
				v = -v
			}
			want = math.Float32bits(float32(v))
		}
		if got := math.Float32bits(FP16ToFP32(uint16(h))); got != want {
			t.Fatalf("FP16ToFP32(%#04x) = %#08x, want %#08x", h, got, want)
		}
	}
}

// fp16Nearest is the binary16 nearest to the non-NaN float32 f, ties to
// even, found on the binary16 grid in float64 (exactly: the steps are powers
// of two): the reference of FP32ToFP16.
func fp16Nearest(f float32) uint16 {
	var sign uint16
	if math.Signbit(float64(f)) {
		sign = 0x8000
	}
	a := math.Abs(float64(f))
	if a >= 65520 { // halfway to 2^16, and beyond: rounds to infinity
		return sign | 0x7c00
	}
	e := -14 // the binade: subnormals have the step of the first one
	if a >= 0x1p-14 {
		_, e2 := math.Frexp(a)
		e = e2 - 1
	}
	r := int(math.RoundToEven(a / math.Ldexp(1, e-10))) // units of the step
	if a < 0x1p-14 {
		return sign | uint16(r) // up to 1024: the smallest normal
	}
	return sign | uint16((e+15)<<10+r-1024) // r = 2048 carries into the next binade
}

// TestFP32ToFP16 checks round-to-nearest-even against fp16Nearest on every
// binary16 value, every midpoint between neighbours (and one ulp either
// side), the edges of the range and random float32 bit patterns; NaNs give
// the quiet NaN 0x7e00 with their sign. (An exhaustive run over all 2^32
// float32 values found it bit-identical to github.com/x448/float16, which
// the engine used before, on every non-NaN value.)
func TestFP32ToFP16(t *testing.T) {
	check := func(f float32) {
		want := uint16(0x7e00)
		if math.IsNaN(float64(f)) {
			if math.Signbit(float64(f)) {
				want |= 0x8000
			}
		} else {
			want = fp16Nearest(f)
		}
		if got := FP32ToFP16(f); got != want {
			t.Fatalf("FP32ToFP16(%g = %#08x) = %#04x, want %#04x", f, math.Float32bits(f), got, want)
		}
	}
	for h := range 1<<16 - 1 {
		a, b := FP16ToFP32(uint16(h)), FP16ToFP32(uint16(h+1))
		check(a)
		if math.IsNaN(float64(a)) || math.IsNaN(float64(b)) || math.IsInf(float64(a), 0) || math.IsInf(float64(b), 0) {
			continue
		}
		mid := float32((float64(a) + float64(b)) / 2) // exact in float32
		check(mid)
		check(math.Nextafter32(mid, float32(math.Inf(1))))
		check(math.Nextafter32(mid, float32(math.Inf(-1))))
	}
	for _, f := range []float32{65504, 65519.996, 65520, 1e6, -1e-8, 2.9802322e-08, 2.9802326e-08, 0x1p-25, 0x1.000002p-25, float32(math.Inf(1)), float32(math.Inf(-1)), math.MaxFloat32, math.SmallestNonzeroFloat32} {
		check(f)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 1 << 20 {
		check(math.Float32frombits(rng.Uint32()))
	}
}

func TestBF16(t *testing.T) {
	for _, c := range []struct {
		f    float32
		want uint16
	}{{1, 0x3f80}, {-2, 0xc000}, {math.Float32frombits(0x3f808000), 0x3f80}, {math.Float32frombits(0x3f818000), 0x3f82}, {math.Float32frombits(0x3f808001), 0x3f81}} {
		if got := FP32ToBF16(c.f); got != c.want {
			t.Errorf("FP32ToBF16(%#08x) = %#04x, want %#04x", math.Float32bits(c.f), got, c.want)
		}
		if back := FP32ToBF16(BF16ToFP32(c.want)); back != c.want {
			t.Errorf("round trip of %#04x gave %#04x", c.want, back)
		}
	}
}

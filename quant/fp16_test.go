package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/x448/float16"
)

// TestFP16ToFP32 checks every binary16 value against x448/float16.
func TestFP16ToFP32(t *testing.T) {
	for h := range 1 << 16 {
		got := math.Float32bits(FP16ToFP32(uint16(h)))
		want := math.Float32bits(float16.Frombits(uint16(h)).Float32())
		if got != want {
			t.Fatalf("FP16ToFP32(%#04x) = %#08x, want %#08x", h, got, want)
		}
	}
}

// TestFP32ToFP16 checks round-to-nearest-even against x448/float16 on
// every binary16 value, every midpoint between neighbours (and one ulp
// either side), and random float32 bit patterns.
func TestFP32ToFP16(t *testing.T) {
	check := func(f float32) {
		if math.IsNaN(float64(f)) {
			if h := FP32ToFP16(f); h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
				t.Fatalf("FP32ToFP16(NaN %#08x) = %#04x, not a NaN", math.Float32bits(f), h)
			}
			return
		}
		got, want := FP32ToFP16(f), float16.Fromfloat32(f).Bits()
		if got != want {
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
	for _, f := range []float32{65504, 65519.996, 65520, 1e6, -1e-8, 2.9802322e-08, 2.9802326e-08, float32(math.Inf(1))} {
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

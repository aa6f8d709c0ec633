package quant

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// fmafExact is a·b + c rounded once to float32, through big.Float (exact
// with 200 bits for any float32 operands, then rounded to nearest even).
func fmafExact(a, b, c float32) float32 {
	if math.IsInf(float64(a), 0) || math.IsInf(float64(b), 0) || math.IsInf(float64(c), 0) ||
		a != a || b != b || c != c {
		return float32(float64(a)*float64(b) + float64(c)) // IEEE special cases: exact here
	}
	x := new(big.Float).SetPrec(200).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetPrec(200).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(200).SetFloat64(float64(c)))
	f, _ := x.Float32()
	if f == 0 { // big.Float has no signed zero from a sum: IEEE's rules
		return float32(float64(a)*float64(b) + float64(c))
	}
	return f
}

// TestFMAF checks fmaf against the exactly rounded a·b + c: a case where
// rounding the float64 sum and then to float32 would be wrong (the exact
// sum just below a float32 midpoint, the float64 sum on it), cancellations,
// operands far apart in magnitude, and specials.
func TestFMAF(t *testing.T) {
	x := float32(math.Ldexp(1, -23))
	a, b, c := float32(math.Ldexp(1, -12))*(1+x), float32(math.Ldexp(1, -12))*(1-x), 1+x
	if got, want := fmaf(a, b, c), float32(1+x); got != want {
		t.Errorf("fmaf(%g, %g, %g) = %g, want %g (double rounding)", a, b, c, got, want)
	}
	if twice := float32(float64(a)*float64(b) + float64(c)); twice == c {
		t.Errorf("the double-rounding case rounds correctly in float64 too: it tests nothing")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	r := func(spread int) float32 {
		return float32(rng.NormFloat64() * math.Ldexp(1, rng.IntN(2*spread+1)-spread))
	}
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.MaxFloat32, math.SmallestNonzeroFloat32}
	for i := range 400000 {
		a, b := r(20), r(20)
		var c float32
		switch i % 5 {
		case 0:
			c = r(20)
		case 1:
			c = -a * b // cancellation
		case 2:
			c = float32(float64(a)*float64(b)) * float32(math.Ldexp(1, 20+rng.IntN(20))) // product far below c
		case 3:
			c = float32(float64(a)*float64(b)) * float32(math.Ldexp(1, -20-rng.IntN(20))) // c far below the product
		case 4:
			c = specials[rng.IntN(len(specials))]
			if rng.IntN(2) == 0 {
				a = specials[rng.IntN(len(specials))]
			}
		}
		if got, want := fmaf(a, b, c), fmafExact(a, b, c); !sameFloat(got, want) {
			t.Fatalf("fmaf(%g, %g, %g) = %g (%#08x), want %g (%#08x)", a, b, c, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
}

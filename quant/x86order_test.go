package quant

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// fma32Exact is a·b + c computed exactly and rounded once to float32.
func fma32Exact(a, b, c float32) float32 {
	if math.IsInf(float64(a), 0) || math.IsInf(float64(b), 0) || math.IsInf(float64(c), 0) || a != a || b != b || c != c {
		return float32(float64(a)*float64(b) + float64(c))
	}
	x := new(big.Float).SetPrec(600).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetPrec(600).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(600).SetFloat64(float64(c)))
	if f, _ := x.Float32(); f != 0 {
		return f
	}
	return float32(float64(a)*float64(b) + float64(c)) // a zero's sign, as IEEE adds give it
}

// TestFMA32: fma32 rounds a·b + c once, on random operands of every
// magnitude and on operands built so that a·b is within a float64 rounding
// of half a float32 step of c (where rounding the float64 sum to float32
// would round twice and, for some of them, wrongly: the test checks that
// such cases occur).
func TestFMA32(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 31))
	rnd := func() float32 {
		return float32(rng.NormFloat64() * math.Pow(2, float64(rng.IntN(80)-40)))
	}
	check := func(a, b, c float32) {
		t.Helper()
		if got, want := fma32(a, b, c), fma32Exact(a, b, c); !sameFloat(got, want) {
			t.Fatalf("fma32(%g, %g, %g) = %g (%#x), exact %g (%#x)", a, b, c, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	for range 200000 {
		check(rnd(), rnd(), rnd())
	}
	twice := 0
	for range 200000 {
		c := rnd()
		half := math.Ldexp(1, math.Ilogb(float64(c))-24) // half of c's float32 step
		if rng.IntN(2) == 0 {
			half = -half
		}
		a := rnd()
		b := float32(half / float64(a))
		for d := range 8 { // b and its neighbours
			bb := math.Float32frombits(math.Float32bits(b) + uint32(d) - 4)
			check(a, bb, c)
			if naive := float32(float64(float64(a)*float64(bb)) + float64(c)); !sameFloat(naive, fma32Exact(a, bb, c)) {
				twice++
			}
		}
	}
	if twice == 0 {
		t.Error("no operands where rounding the float64 sum would round twice wrongly")
	}
	t.Logf("%d double-rounding cases", twice)
	for _, v := range []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1, -1, math.MaxFloat32, math.SmallestNonzeroFloat32} {
		for _, w := range []float32{0, 1, -2.5, float32(math.Inf(1)), math.MaxFloat32, math.SmallestNonzeroFloat32} {
			check(v, w, 1)
			check(w, 1, v)
			check(v, w, v)
		}
	}
}

// TestQ5_0DoubleRounding: a Q5_0 row whose second block's fused
// multiply-add lands in float64 on a float32 midpoint, inexactly: lane 0
// holds 64 after block 0, and block 1 adds 6605·d with d = (533·2^-24)·
// (305·2^-24), so the exact sum is 64 + 2^-18 + 2^-48, which rounds to
// 64 + 2^-17; the float64 sum rounds to the midpoint 64 + 2^-18, which
// would round to 64. Every kernel set must give 64 + 2^-17.
func TestQ5_0DoubleRounding(t *testing.T) {
	w := make([]byte, 2*q5_0Bytes)
	act := make([]byte, 2*q8_0Bytes)
	// every quant 16 (q-16 = 0): nibbles 0, 5th bits set
	for b := range 2 {
		binary.LittleEndian.PutUint32(w[b*q5_0Bytes+2:], 0xffffffff)
	}
	// block 0: d = dy = 1, weight 0 is 17 against 64
	binary.LittleEndian.PutUint16(w, 0x3c00)
	binary.LittleEndian.PutUint16(act, 0x3c00)
	w[6] = 1
	act[2] = 64
	// block 1: d = 533·2^-24, dy = 305·2^-24 (fp16 subnormals); weights
	// 0..3 are 0, 0, 31, 28 (q-16 = -16, -16, 15, 12) against -127, -127,
	// 127, 53: lane 0 is 2032+2032+1905+636 = 6605
	x, y := w[q5_0Bytes:], act[q8_0Bytes:]
	binary.LittleEndian.PutUint16(x, 533)
	binary.LittleEndian.PutUint16(y, 305)
	qh := binary.LittleEndian.Uint32(x[2:]) &^ 0b11 // weights 0, 1: q = 0
	binary.LittleEndian.PutUint32(x[2:], qh)
	x[6+2], x[6+3] = 15, 12
	for i, v := range []int8{-127, -127, 127, 53} {
		y[2+i] = byte(v)
	}
	want := float32(64 + 0x1p-17)
	if got := dotQ5_0Ref(2*qk, w, act); got != want {
		t.Fatalf("reference %g (%#x), want %g", got, math.Float32bits(got), want)
	}
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		if got := ks.traits(Q5_0).Dot(2*qk, w, act); got != want {
			t.Errorf("Dot %g (%#x), want %g", got, math.Float32bits(got), want)
		}
	})
}

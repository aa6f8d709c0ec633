package quant

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestUnknownTypes(t *testing.T) {
	for _, id := range []Type{4, 5, 31, 32, 33, 36, 39, 1000, math.MaxUint32} {
		if tr := TraitsOf(id); tr.Valid() {
			t.Errorf("TraitsOf(%d) = %+v, want the zero Traits", id, tr)
		}
		if _, err := RowSize(id, 256); !errors.Is(err, ErrUnknownType) {
			t.Errorf("RowSize(%d) error = %v, want ErrUnknownType", id, err)
		}
		if s, want := id.String(), "type("+itoa(uint32(id))+")"; s != want {
			t.Errorf("String() = %q, want %q", s, want)
		}
	}
}

func itoa(v uint32) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for ; v > 0; v /= 10 {
		b = append([]byte{byte('0' + v%10)}, b...)
	}
	return string(b)
}

func TestTableConsistent(t *testing.T) {
	n := 0
	for id := range Type(64) {
		tr := TraitsOf(id)
		if !tr.Valid() {
			continue
		}
		n++
		if tr.BlockSize <= 0 || tr.TypeSize <= 0 {
			t.Errorf("%v: bad sizes %d/%d", id, tr.BlockSize, tr.TypeSize)
		}
		if vt := TraitsOf(tr.VecDotType); !vt.Valid() {
			t.Errorf("%v: VecDotType %v unknown", id, tr.VecDotType)
		} else if tr.HasDot() && !vt.HasFromFloat() {
			t.Errorf("%v: has Dot but activation type %v has no FromFloat", id, tr.VecDotType)
		}
	}
	if n != 31 { // every id of ggml_type except the removed 4, 5 and 31-33
		t.Errorf("%d types in the table, want 31", n)
	}
}

func TestRowSize(t *testing.T) {
	cases := []struct {
		t    Type
		n    int
		want int
		err  error
	}{
		{F32, 7, 28, nil},
		{Q4_0, 64, 36, nil},
		{Q4_K, 512, 288, nil},
		{Q4_K, 0, 0, nil},
		{Q4_K, 100, 0, ErrBlockMultiple},
		{Q8_0, 172, 0, ErrBlockMultiple},
		{F16, -2, 0, ErrRowSize},
		{F32, math.MaxInt / 2, 0, ErrRowSize},
		{Q6_K, (math.MaxInt/256 - 1) * 256, (math.MaxInt/256 - 1) * 210, nil}, // 7.5e18 bytes: fits
		{Q8_K, (math.MaxInt/256 - 1) * 256, 0, ErrRowSize},
		{4, 32, 0, ErrUnknownType},
	}
	for _, c := range cases {
		got, err := RowSize(c.t, c.n)
		if got != c.want || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("RowSize(%v, %d) = %d, %v; want %d, %v", c.t, c.n, got, err, c.want, c.err)
		}
	}
}

// TestF32 checks the F32 entry, which has no golden file: a lossless round
// trip, and a dot equal to a float64 reference accumulation.
func TestF32(t *testing.T) {
	tr := TraitsOf(F32)
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 300)
	y := make([]float32, 300)
	for i := range x {
		x[i], y[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	x[0] = float32(math.Inf(-1))
	x[1] = float32(math.Copysign(0, -1))
	wb := make([]byte, 4*len(x))
	ab := make([]byte, 4*len(y))
	tr.FromFloat(wb, x)
	tr.FromFloat(ab, y)
	back := make([]float32, len(x))
	tr.Dequantize(back, wb)
	for i := range x {
		if math.Float32bits(back[i]) != math.Float32bits(x[i]) {
			t.Fatalf("element %d: %g != %g", i, back[i], x[i])
		}
	}
	// ggml's lane order (float.go) stays within n·2^-24·Σ|x·y| of the
	// exact dot; TestFloatDotTwinsRandom checks its bits.
	var want, mag float64
	for i := 2; i < len(x); i++ {
		want += float64(x[i]) * float64(y[i])
		mag += math.Abs(float64(x[i]) * float64(y[i]))
	}
	if got := tr.Dot(len(x)-2, wb[8:], ab[8:]); math.Abs(float64(got)-want) > float64(len(x))*0x1p-24*mag {
		t.Errorf("Dot = %g, want %g", got, want)
	}
}

func TestNearestInt(t *testing.T) {
	for _, c := range []struct {
		x    float32
		want int32
	}{{0.5, 0}, {1.5, 2}, {2.5, 2}, {-0.5, 0}, {-1.5, -2}, {-2.5, -2}, {126.49, 126}, {-127.6, -128}, {3.0000002, 3}} {
		if got := nearestInt(c.x); got != c.want {
			t.Errorf("nearestInt(%g) = %d, want %d", c.x, got, c.want)
		}
	}
}

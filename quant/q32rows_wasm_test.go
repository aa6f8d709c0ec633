//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestFMALanes checks fmaLanes against fma32, term by term and lane by
// lane: runs of random sums, scales and accumulators (zeros, subnormals,
// infinities and NaNs among them), and halfway cases, where the float64
// sum p+a is a float32 midpoint and the exact one is not: s = 2^23+k, d =
// ±2^(e-23)·(1-k·2^-23), so p = ±2^e·(1-k²·2^-46), against an accumulator
// a with an odd last bit and ulp 2^(e+1) (see halfwayCases). Rounding the
// float64 sum gives the wrong neighbour there.
func TestFMALanes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 64
	var s [4 * n]int32
	var d [4 * n]float32
	check := func(what string, acc [4]float32, terms int) {
		t.Helper()
		want := acc
		for i := range terms {
			for l := range want {
				want[l] = fma32(float32(s[4*i+l]), d[4*i+l], want[l])
			}
		}
		got := acc
		fmaLanes(&s[0], &d[0], terms, 16, &got)
		for l := range got {
			if !sameFloat(got[l], want[l]) {
				t.Fatalf("%s, lane %d: fmaLanes %g (%#x), fma32 %g (%#x)", what, l, got[l], math.Float32bits(got[l]), want[l], math.Float32bits(want[l]))
			}
		}
	}
	for iter := range 300 {
		var acc [4]float32
		if iter%4 != 0 {
			for l := range acc {
				acc[l] = float32(rng.NormFloat64())
			}
		}
		for i := range s {
			switch rng.IntN(10) {
			case 0:
				s[i], d[i] = 0, 0
			case 1:
				s[i], d[i] = int32(rng.IntN(1<<20)), math.Float32frombits(rng.Uint32()) // any pattern
			default:
				s[i] = int32(rng.IntN(1<<24)) - 1<<23
				d[i] = float32(math.Ldexp(rng.NormFloat64(), rng.IntN(60)-50))
			}
		}
		check("random", acc, n-iter%3)
	}
	twice := 0
	for range 5000 {
		var acc [4]float32
		for l := range acc {
			k := 1 + rng.IntN(300)
			e := -30 + rng.IntN(40)
			a := math.Float32frombits(uint32(1+rng.IntN(200)+int(math.Float32bits(float32(math.Ldexp(1, e+24))))) | 1)
			s[l], d[l] = 1<<23+int32(k), float32(math.Ldexp(1-float64(k)*0x1p-23, e-23))
			if rng.IntN(2) == 0 {
				a, d[l] = -a, -d[l]
			}
			acc[l] = a
			if float32(float64(s[l])*float64(d[l])+float64(a)) != fma32(float32(s[l]), d[l], a) {
				twice++
			}
		}
		check("halfway", acc, 1)
	}
	if twice == 0 {
		t.Error("no halfway case trips the float64 sum: the cases test nothing")
	}
	t.Logf("%d of 20000 halfway cases round the float64 sum wrongly", twice)
}

// TestQ5_0DoubleRoundingRows is TestQ5_0DoubleRounding for the DotRows and
// DotRowsN kernels: rows whose second block's fused multiply-add lands in
// float64 on a float32 midpoint, inexactly (lane 0: 64 + 2^-18 + 2^-48,
// which rounds to 64 + 2^-17), among rows that do not, against one and
// several activations.
func TestQ5_0DoubleRoundingRows(t *testing.T) {
	w := make([]byte, 2*q5_0Bytes)
	act := make([]byte, 2*q8_0Bytes)
	for b := range 2 {
		binary.LittleEndian.PutUint32(w[b*q5_0Bytes+2:], 0xffffffff)
	}
	binary.LittleEndian.PutUint16(w, 0x3c00)
	binary.LittleEndian.PutUint16(act, 0x3c00)
	w[6] = 1
	act[2] = 64
	x, y := w[q5_0Bytes:], act[q8_0Bytes:]
	binary.LittleEndian.PutUint16(x, 533)
	binary.LittleEndian.PutUint16(y, 305)
	qh := binary.LittleEndian.Uint32(x[2:]) &^ 0b11
	binary.LittleEndian.PutUint32(x[2:], qh)
	x[6+2], x[6+3] = 15, 12
	for i, v := range []int8{-127, -127, 127, 53} {
		y[2+i] = byte(v)
	}
	want := float32(64 + 0x1p-17)
	rng := rand.New(rand.NewPCG(7, 8))
	const rows = 7
	m := randBlocks(rng, Q5_0, 2*rows)
	for _, r := range []int{0, 3, 6} {
		copy(m[r*len(w):], w)
	}
	acts := [][]byte{act, randBlocks(rng, Q8_0, 2), act}
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		tr := ks.traits(Q5_0)
		out := make([]float32, rows)
		tr.MatVec(2*qk, m, act, out)
		outs := [][]float32{make([]float32, rows), make([]float32, rows), make([]float32, rows)}
		tr.MatMul(2*qk, m, acts, outs, 0)
		for _, r := range []int{0, 3, 6} {
			if out[r] != want {
				t.Errorf("MatVec row %d: %g (%#x), want %g", r, out[r], math.Float32bits(out[r]), want)
			}
			for _, i := range []int{0, 2} {
				if outs[i][r] != want {
					t.Errorf("MatMul row %d activation %d: %g (%#x), want %g", r, i, outs[i][r], math.Float32bits(outs[i][r]), want)
				}
			}
		}
	})
}

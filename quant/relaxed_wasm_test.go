//go:build goexperiment.simd && relaxedsimd

package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestQ8_0RelaxedPaths checks the parts of the relaxed Q8_0 DotRows kernel
// directly (the twin tests only see its results): absSignQ8_0's magnitudes
// and signs, and that it refuses an activation of -128; q8_0Rows4Relaxed's
// rows against the reference, and that it reports a weight byte of -128.
func TestQ8_0RelaxedPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 128))
	const nb, rows = 5, 12
	rowBytes := nb * q8_0Bytes
	act := randBlocks(rng, Q8_0, nb)
	w := randBlocks(rng, Q8_0, nb*rows)
	for b := range nb * rows {
		copy(w[b*q8_0Bytes+2:(b+1)*q8_0Bytes], q8Bytes(rng, qk))
	}
	for b := range nb {
		copy(act[b*q8_0Bytes+2:(b+1)*q8_0Bytes], q8Bytes(rng, qk))
	}
	var a q8_0Act
	if !a.prepareScales(nb*qk, q8_0Bytes, w, act, make([]float32, rows)) {
		t.Fatal("prepareScales refused the rows")
	}
	if !absSignQ8_0(&a.yp[0], &act[0], nb) {
		t.Fatal("absSignQ8_0 refused an activation in -127..127")
	}
	for b := range nb {
		for j := range qk {
			y := int8(act[b*q8_0Bytes+2+j])
			mag, sign := a.yp[b*64+j], a.yp[b*64+32+j]
			if int(mag) != max(int(y), -int(y)) || (sign == 0xff) != (y < 0) || (sign != 0 && sign != 0xff) {
				t.Fatalf("block %d activation %d (%d): magnitude %d, sign byte %#x", b, j, y, mag, sign)
			}
		}
	}
	out := make([]float32, rows)
	if !q8_0Rows4Relaxed(&w[0], &a.yp[0], &a.yd[0], &a.ysum[0], &fp16ToFP32Table[0], nb, rowBytes, rows/4, &out[0]) {
		t.Fatal("q8_0Rows4Relaxed reported a weight of -128 in rows without one")
	}
	for r := range rows {
		if want := dotQ8_0Ref(nb*qk, w[r*rowBytes:], act); math.Float32bits(out[r]) != math.Float32bits(want) {
			t.Fatalf("row %d: %g, reference %g", r, out[r], want)
		}
	}
	w[7*rowBytes+3*q8_0Bytes+2+17] = 0x80
	if q8_0Rows4Relaxed(&w[0], &a.yp[0], &a.yd[0], &a.ysum[0], &fp16ToFP32Table[0], nb, rowBytes, rows/4, &out[0]) {
		t.Fatal("q8_0Rows4Relaxed did not report a weight of -128")
	}
	act[2*q8_0Bytes+2+30] = 0x80
	if absSignQ8_0(&a.yp[0], &act[0], nb) {
		t.Fatal("absSignQ8_0 accepted an activation of -128")
	}
}

// TestExpRelaxedFallback checks where the relaxed exponential kernels stop
// (the twin tests only see the results with the callers' fallback): at
// the first group of four (SwiGLU) or block of 16 (ExpShift) with a lane
// whose n is beyond ±126 or NaN, leaving it as it was, with the groups
// before it done as the references do them.
func TestExpRelaxedFallback(t *testing.T) {
	for _, bad := range []float32{-88, 130, float32(math.NaN()), float32(math.Inf(1))} {
		gate, up := make([]float32, 32), make([]float32, 32)
		for i := range gate {
			gate[i], up[i] = float32(i)/7-2, 1.5
		}
		gate[13] = -bad // SwiGLU takes e^(0−gate)
		want := append([]float32(nil), gate...)
		for i := range 12 { // the groups before 13's, as swigluRef does whole blocks
			want[i] = gate[i] / (1 + expfV(0-gate[i])) * up[i]
		}
		got := append([]float32(nil), gate...)
		if n := swigluRelaxed4(&got[0], &up[0], len(got)); n != 12 {
			t.Fatalf("gate[13] = %g: swigluRelaxed4 did %d elements, want 12", gate[13], n)
		}
		for i := range got {
			if !sameFloat(got[i], want[i]) {
				t.Fatalf("gate[13] = %g: [%d] %g, want %g", gate[13], i, got[i], want[i])
			}
		}

		x := make([]float32, 48)
		for i := range x {
			x[i] = float32(i)/5 - 4
		}
		x[16+9] = bad + 1 // block 1; m = 1
		wantX := append([]float32(nil), x...)
		wantSum := expShiftRef(wantX[:16], 1, 0.25)
		gotX := append([]float32(nil), x...)
		done, sum := expShiftRelaxed16(&gotX[0], 1, 3, 0.25)
		if done != 1 || math.Float64bits(sum) != math.Float64bits(wantSum) {
			t.Fatalf("x[25] = %g: expShiftRelaxed16 did %d blocks, sum %g; want 1, %g", x[25], done, sum, wantSum)
		}
		for i := range gotX[16:] {
			if !sameFloat(gotX[16+i], x[16+i]) {
				t.Fatalf("x[25] = %g: block 1 changed at %d: %g, was %g", x[25], i, gotX[16+i], x[16+i])
			}
		}
		for i := range 16 {
			if !sameFloat(gotX[i], wantX[i]) {
				t.Fatalf("x[25] = %g: [%d] %g, want %g", x[25], i, gotX[i], wantX[i])
			}
		}
	}
}

package quant

import (
	"encoding/binary"
	"math"
	"testing"
)

// TestQ5_KDoubleRounding: two Q5_K rows of two blocks whose second block's
// fused multiply-add lands in float64 on a float32 midpoint, inexactly,
// once in the min sums (row 0) and once in lane 0 (row 1), as in
// TestQ5_0DoubleRounding: 64 after block 0, then 6605·d with d =
// (533·2^-24)·(305·2^-24), an exact sum of 64 + 2^-18 + 2^-48, which
// rounds to 64 + 2^-17 (the float64 sum, 64 + 2^-18, would round to 64).
// Every kernel set's Dot, MatVec and MatMul (five activations) must give
// 64 + 2^-17 for both rows.
func TestQ5_KDoubleRounding(t *testing.T) {
	const rowBytes = 2 * q5_KBytes
	w := make([]byte, 2*rowBytes)
	act := make([]byte, 2*q8_KBytes)
	// the activation: block 0 yd = 1, y0 = 64, bsum 0 = 64; block 1 yd =
	// 305·2^-24, y0 = 42, y1 = 19, bsum 0 = 6605 (the references read the
	// stored bsums)
	binary.LittleEndian.PutUint32(act, math.Float32bits(1))
	act[4] = 64
	binary.LittleEndian.PutUint16(act[4+qkK:], 64)
	y := act[q8_KBytes:]
	binary.LittleEndian.PutUint32(y, math.Float32bits(305*0x1p-24))
	y[4], y[5] = 42, 19
	binary.LittleEndian.PutUint16(y[4+qkK:], 6605)
	// row 0: every quant 0, d = 0; min 0 is 1, dmin -1 in block 0 (summs
	// 64) and -533·2^-24 in block 1 (-yd·dmin = 533·305·2^-48)
	r0 := w[:rowBytes]
	binary.LittleEndian.PutUint16(r0[2:], 0xbc00)
	r0[8] = 1
	binary.LittleEndian.PutUint16(r0[q5_KBytes+2:], 0x8000|533)
	r0[q5_KBytes+8] = 1
	// row 1: no mins; block 0 d = 1, scale 0 is 1, weight 0 is 1 (lane 0:
	// 64); block 1 d = 533·2^-24, scale 0 is 5, weights 0 and 1 are 31
	// (nibble 15 and its fifth bit) and 1 (lane 0: 5·(31·42 + 19) = 6605)
	r1 := w[rowBytes:]
	binary.LittleEndian.PutUint16(r1, 0x3c00)
	r1[4] = 1
	r1[48] = 1
	x := r1[q5_KBytes:]
	binary.LittleEndian.PutUint16(x, 533)
	x[4] = 5
	x[16] = 1
	x[48], x[49] = 15, 1
	want := float32(64 + 0x1p-17)
	for r := range 2 {
		if got := dotQ5_KRef(2*qkK, w[r*rowBytes:(r+1)*rowBytes], act); got != want {
			t.Fatalf("row %d: reference %g (%#x), want %g", r, got, math.Float32bits(got), want)
		}
	}
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		tr := ks.traits(Q5_K)
		out := make([]float32, 2)
		tr.MatVec(2*qkK, w, act, out)
		acts := [][]byte{act, act, act, act, act}
		outs := make([][]float32, len(acts))
		for i := range outs {
			outs[i] = make([]float32, 2)
		}
		tr.MatMul(2*qkK, w, acts, outs, 0)
		for i, o := range outs {
			for r, got := range o {
				if got != want {
					t.Errorf("activation %d row %d: MatMul %g (%#x), want %g", i, r, got, math.Float32bits(got), want)
				}
			}
		}
		for r := range 2 {
			if got := tr.Dot(2*qkK, w[r*rowBytes:], act); got != want {
				t.Errorf("row %d: Dot %g (%#x), want %g", r, got, math.Float32bits(got), want)
			}
			if out[r] != want {
				t.Errorf("row %d: MatVec %g (%#x), want %g", r, out[r], math.Float32bits(out[r]), want)
			}
		}
	})
}

// TestQ3_KDoubleRounding: TestQ5_KDoubleRounding's case in lane 0 of a
// Q3_K row. Every scale is 0 (stored 32: high bits 2 in bytes 104..107)
// but scale 0: block 0 has d = 1, scale 1, weight 0 is 1 against 64;
// block 1 has d = 533·2^-24, scale 5, weights 0..3 are 3, 3, 3, 2 (low
// bits and the high bit set) against 127, 127, 127, 89: 5·1321 = 6605.
// Dot, MatVec and MatMul must give 64 + 2^-17.
func TestQ3_KDoubleRounding(t *testing.T) {
	w := make([]byte, 2*q3_KBytes)
	act := make([]byte, 2*q8_KBytes)
	for b := range 2 {
		x := w[b*q3_KBytes:]
		for i := 104; i < 108; i++ {
			x[i] = 0xaa
		}
	}
	binary.LittleEndian.PutUint32(act, math.Float32bits(1))
	act[4] = 64
	binary.LittleEndian.PutUint16(w[108:], 0x3c00)
	w[96], w[32], w[0] = 1, 1, 1
	x, y := w[q3_KBytes:], act[q8_KBytes:]
	binary.LittleEndian.PutUint32(y, math.Float32bits(305*0x1p-24))
	binary.LittleEndian.PutUint16(x[108:], 533)
	x[96] = 5
	for i, q := range []byte{3, 3, 3, 2} {
		x[32+i], x[i] = q, 1
	}
	y[4], y[5], y[6], y[7] = 127, 127, 127, 89
	checkDoubleRounding(t, Q3_K, w, act)
}

// checkDoubleRounding checks that the reference and every kernel set's
// Dot, MatVec and MatMul (five activations) give 64 + 2^-17 for the row w
// (two blocks of t) against act.
func checkDoubleRounding(t *testing.T, typ Type, w, act []byte) {
	t.Helper()
	want := float32(64 + 0x1p-17)
	if got := refDots[typ](2*qkK, w, act); got != want {
		t.Fatalf("reference %g (%#x), want %g", got, math.Float32bits(got), want)
	}
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		tr := ks.traits(typ)
		if got := tr.Dot(2*qkK, w, act); got != want {
			t.Errorf("Dot %g (%#x), want %g", got, math.Float32bits(got), want)
		}
		out := make([]float32, 1)
		tr.MatVec(2*qkK, w, act, out)
		if out[0] != want {
			t.Errorf("MatVec %g (%#x), want %g", out[0], math.Float32bits(out[0]), want)
		}
		acts := [][]byte{act, act, act, act, act}
		outs := make([][]float32, len(acts))
		for i := range outs {
			outs[i] = make([]float32, 1)
		}
		tr.MatMul(2*qkK, w, acts, outs, 0)
		for i, o := range outs {
			if o[0] != want {
				t.Errorf("activation %d: MatMul %g (%#x), want %g", i, o[0], math.Float32bits(o[0]), want)
			}
		}
	})
}

// TestQ2_KDoubleRounding: TestQ5_KDoubleRounding's case in lane 0 of a
// Q2_K row, in its min lanes (the first row: quants 0; min 0 is 1, dmin
// -1 in block 0 against bsum 64, min 5, dmin -533·2^-24 in block 1
// against bsum 1321) and in its lanes (the second: block 0 d = 1, scale
// 1, weight 0 is 1 against 64; block 1 d = 533·2^-24, scale 5, weights
// 0..3 are 3, 3, 3, 2 against 127, 127, 127, 89).
func TestQ2_KDoubleRounding(t *testing.T) {
	act := func() []byte {
		a := make([]byte, 2*q8_KBytes)
		binary.LittleEndian.PutUint32(a, math.Float32bits(1))
		binary.LittleEndian.PutUint32(a[q8_KBytes:], math.Float32bits(305*0x1p-24))
		return a
	}
	w, a := make([]byte, 2*q2_KBytes), act()
	w[0], w[q2_KBytes] = 0x10, 0x50
	binary.LittleEndian.PutUint16(w[82:], 0xbc00)
	binary.LittleEndian.PutUint16(w[q2_KBytes+82:], 0x8000|533)
	binary.LittleEndian.PutUint16(a[4+qkK:], 64)
	binary.LittleEndian.PutUint16(a[q8_KBytes+4+qkK:], 1321)
	t.Run("mins", func(t *testing.T) { checkDoubleRounding(t, Q2_K, w, a) })

	w, a = make([]byte, 2*q2_KBytes), act()
	w[0], w[16] = 1, 1
	binary.LittleEndian.PutUint16(w[80:], 0x3c00)
	a[4] = 64
	x, y := w[q2_KBytes:], a[q8_KBytes:]
	x[0] = 5
	binary.LittleEndian.PutUint16(x[80:], 533)
	for i, q := range []byte{3, 3, 3, 2} {
		x[16+i] = q
	}
	y[4], y[5], y[6], y[7] = 127, 127, 127, 89
	t.Run("lanes", func(t *testing.T) { checkDoubleRounding(t, Q2_K, w, a) })
}

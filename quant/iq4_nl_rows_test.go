package quant

import (
	"encoding/binary"
	"math"
	"testing"
)

// TestIQ4_NLDoubleRounding: IQ4_NL rows whose second block's fused
// multiply-add lands in float64 on a float32 midpoint, inexactly (as in
// TestQ5_0DoubleRounding): block 0 leaves 64, block 1 adds 6605·d with d =
// (533·2^-24)·(305·2^-24) (fp16 subnormals), the exact sum 64 + 2^-18 +
// 2^-48 rounds to 64 + 2^-17, the float64 one to the midpoint 64 + 2^-18.
// Every kernel set's MatVec (five rows: a group of four and one more) and
// MatMul must give 64 + 2^-17.
func TestIQ4_NLDoubleRounding(t *testing.T) {
	const rows = 5
	row := make([]byte, 2*iq4_NLBytes)
	act := make([]byte, 2*q8_0Bytes)
	// every weight level 1 (index 8), against 0 but where set below
	for i := range 2 {
		for j := range qk / 2 {
			row[i*iq4_NLBytes+2+j] = 0x88
		}
	}
	binary.LittleEndian.PutUint16(row, 0x3c00) // block 0: dx = dy = 1
	binary.LittleEndian.PutUint16(act, 0x3c00)
	act[2] = 64 // 1·64
	x, y := row[iq4_NLBytes:], act[q8_0Bytes:]
	binary.LittleEndian.PutUint16(x, 533)
	binary.LittleEndian.PutUint16(y, 305)
	x[2] = 0x8f         // weight 0: level 113 (index 15)
	y[2], y[3] = 58, 51 // 113·58 + 1·51 = 6605
	w := make([]byte, 0, rows*len(row))
	for range rows {
		w = append(w, row...)
	}
	want := float32(64 + 0x1p-17)
	if got := dotIQ4_NLRef(2*qk, row, act); got != want {
		t.Fatalf("reference %g (%#x), want %g", got, math.Float32bits(got), want)
	}
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		tr := ks.traits(IQ4_NL)
		out := make([]float32, rows)
		tr.MatVec(2*qk, w, act, out)
		outs := make([][]float32, 6)
		acts := make([][]byte, len(outs))
		for i := range outs {
			outs[i], acts[i] = make([]float32, rows), act
		}
		tr.MatMul(2*qk, w, acts, outs, 0)
		for r := range rows {
			if out[r] != want {
				t.Fatalf("MatVec row %d: %g (%#x), want %g", r, out[r], math.Float32bits(out[r]), want)
			}
			for i := range outs {
				if outs[i][r] != want {
					t.Fatalf("MatMul row %d activation %d: %g, want %g", r, i, outs[i][r], want)
				}
			}
		}
	})
}

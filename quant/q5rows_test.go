package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestMatVecX86Midpoint checks Q4_1, Q5_0 and Q5_1 (ggml's x86 order: a
// fused multiply-add per block and lane) on a row whose second block's
// product, added to the first's, has more bits than a float64 holds and
// lands, rounded to float64, on a float32 midpoint the exact sum lies just
// above: lane 0 is 1·64 times d = 1, then 13·41 = 533 times d = 1321·2^-24
// · 1525·2^-24, so the exact sum is 64 + 2^-18·(1+2^-30), whose float64
// sum 64 + 2^-18 rounds to even (64) where the fused multiply-add gives
// 64 + 2^-17. A kernel that sums in float64 must notice (the wasm kernels'
// fast step must not run on this row, and their checked step must take the
// exact path). The row sits among random rows, in MatVec and MatMul.
func TestMatVecX86Midpoint(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		for _, typ := range []Type{Q4_1, Q5_0, Q5_1} {
			tr := ks.traits(typ)
			at := TraitsOf(tr.VecDotType)
			const nb, rows = 4, 6
			n := nb * qk
			rowBytes := nb * tr.TypeSize
			w := randBlocks(rand.New(rand.NewPCG(31, uint64(typ))), typ, nb*rows)
			row := w[2*rowBytes : 3*rowBytes]
			clear(row)
			act := make([]byte, nb*at.TypeSize)
			// block 0: dx = dy = 1, lane 0 = 1·64; block 1: lane 0 = 13·41
			for b, c := range []struct {
				dx, dy uint16
				q      byte
				y      int8
			}{{0x3c00, 0x3c00, 1, 64}, {0x0400 | (1321 - 1024), 0x0400 | (1525 - 1024), 13, 41}} {
				x, y := row[b*tr.TypeSize:], act[b*at.TypeSize:]
				binary.LittleEndian.PutUint16(x, c.dx)
				binary.LittleEndian.PutUint16(y, c.dy)
				qs := x[tr.TypeSize-qk/2:]
				switch typ {
				case Q5_0: // quants q-16: q = 16 is zero, 16+c.q needs the 5th bit
					binary.LittleEndian.PutUint32(x[2:], 0xffffffff)
					for j := range qs {
						qs[j] = 0
					}
					qs[0] = c.q
				default:
					qs[0] = c.q
				}
				y[at.TypeSize-qk] = byte(c.y)
			}
			if typ == Q5_0 {
				for b := 2; b < nb; b++ { // zero quants (16) in the other blocks
					binary.LittleEndian.PutUint32(row[b*tr.TypeSize+2:], 0xffffffff)
				}
			}
			want := refDots[typ](n, row, act)
			if want != 64+1.0/(1<<17) {
				t.Fatalf("%v: reference %g, want 64+2^-17 (the test's blocks are wrong)", typ, want)
			}
			out := make([]float32, rows)
			tr.MatVec(n, w, act, out)
			if math.Float32bits(out[2]) != math.Float32bits(want) {
				t.Errorf("%v: MatVec %g, reference %g", typ, out[2], want)
			}
			outs := [][]float32{make([]float32, rows), make([]float32, rows)}
			tr.MatMul(n, w, [][]byte{act, act}, outs, 0)
			for i := range outs {
				if math.Float32bits(outs[i][2]) != math.Float32bits(want) {
					t.Errorf("%v: MatMul activation %d: %g, reference %g", typ, i, outs[i][2], want)
				}
			}
		}
	})
}

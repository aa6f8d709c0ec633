//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestMatMulKSpecials: the K-quant DotRowsN kernels give what Dot gives
// with special scales where TestMatMul puts none: Q6_K's d (offset 208),
// Q4_K's dmin, and the activations' float32 scales (zero, subnormal,
// infinite, NaN), for every activation count the kernels pad.
func TestMatMulKSpecials(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		rng := rand.New(rand.NewPCG(4, 6))
		halves := []uint16{0, 0x0001, 0x03ff, 0x7c00, 0xfc00, 0x7e00, 0x8000}
		floats := []float32{0, float32(math.SmallestNonzeroFloat32), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), -0}
		for _, typ := range []Type{Q4_K, Q6_K} {
			tr := ks.traits(typ)
			for nacts := 1; nacts <= MaxDotN; nacts++ {
				const nb, rows = 3, 21
				n := nb * qkK
				rowBytes := nb * tr.TypeSize
				w := randBlocks(rng, typ, nb*rows)
				for range 4 {
					blk := w[rng.IntN(nb*rows)*tr.TypeSize:]
					off := 208
					if typ == Q4_K {
						off = 2 * rng.IntN(2)
					}
					binary.LittleEndian.PutUint16(blk[off:], halves[rng.IntN(len(halves))])
				}
				acts := make([][]byte, nacts)
				for i := range acts {
					acts[i] = randBlocks(rng, Q8_K, nb)
					if rng.IntN(3) == 0 {
						binary.LittleEndian.PutUint32(acts[i][rng.IntN(nb)*q8_KBytes:], math.Float32bits(floats[rng.IntN(len(floats))]))
					}
				}
				outs := make([][]float32, nacts)
				for i := range outs {
					outs[i] = make([]float32, rows)
				}
				tr.MatMul(n, w, acts, outs, 0)
				for i := range acts {
					for r := range rows {
						got, want := outs[i][r], tr.Dot(n, w[r*rowBytes:(r+1)*rowBytes], acts[i])
						if math.Float32bits(got) != math.Float32bits(want) && !(math.IsNaN(float64(got)) && math.IsNaN(float64(want))) {
							t.Fatalf("%v acts=%d: row %d activation %d: MatMul %g, Dot %g", typ, nacts, r, i, got, want)
						}
					}
				}
			}
		}
	})
}

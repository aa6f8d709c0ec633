package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMatVec: for every type with a dot, MatVec over 1 to 9 consecutive
// rows (with its DotRows kernel where the type has one) gives each row
// exactly what Dot gives for it alone.
func TestMatVec(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		rng := rand.New(rand.NewPCG(12, 12))
		for _, typ := range dotTypes() {
			tr := ks.traits(typ)
			at := TraitsOf(tr.VecDotType)
			for iter := range 24 {
				nb := []int{1, 2, 3, 4, 5, 8, 9, 64}[iter%8]
				if tr.BlockSize == 1 {
					nb *= 32
				}
				rows := 1 + iter%9
				n := nb * tr.BlockSize
				rowBytes := nb * tr.TypeSize
				w := randBlocks(rng, typ, nb*rows)
				act := randBlocks(rng, tr.VecDotType, n/at.BlockSize)
				out := make([]float32, rows)
				tr.MatVec(n, w, act, out)
				for r := range rows {
					want := tr.Dot(n, w[r*rowBytes:(r+1)*rowBytes], act)
					if math.Float32bits(out[r]) != math.Float32bits(want) && !(math.IsNaN(float64(out[r])) && math.IsNaN(float64(want))) {
						t.Fatalf("%v n=%d rows=%d row %d: MatVec %g, Dot %g", typ, n, rows, r, out[r], want)
					}
				}
				if n := testing.AllocsPerRun(5, func() { tr.MatVec(n, w, act, out) }); n != 0 {
					t.Fatalf("%v: MatVec allocates %v times", typ, n)
				}
			}
		}
	})
}

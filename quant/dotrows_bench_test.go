package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkMatVec measures MatVec (the DotRows kernels where a type has
// one) against Dot per row, over 256 rows of TinyLlama's row lengths;
// ns/row is the time per weight row.
func BenchmarkMatVec(b *testing.B) {
	const rows = 256
	for _, typ := range twinTypes {
		tr := TraitsOf(typ)
		at := TraitsOf(tr.VecDotType)
		for _, n := range []int{2048, 5632} {
			rng := rand.New(rand.NewPCG(uint64(n), uint64(typ)))
			nb := n / tr.BlockSize
			rowBytes := nb * tr.TypeSize
			w := randBlocks(rng, typ, nb*rows)
			act := randBlocks(rng, tr.VecDotType, n/at.BlockSize)
			out := make([]float32, rows)
			b.Run(fmt.Sprintf("%v/%d/MatVec", typ, n), func(b *testing.B) {
				for b.Loop() {
					tr.MatVec(n, w, act, out)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
			})
			b.Run(fmt.Sprintf("%v/%d/Dot", typ, n), func(b *testing.B) {
				for b.Loop() {
					dotRows(tr.Dot, n, rowBytes, w, act, out)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
			})
		}
	}
}

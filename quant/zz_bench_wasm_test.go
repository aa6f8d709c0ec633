//go:build goexperiment.simd

package quant

import (
	"math/rand/v2"
	"testing"
)

func BenchmarkZZ(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, rows = 2048, 256
	for _, typ := range []Type{Q4_K, IQ4_XS, Q5_K} {
		tr := TraitsOf(typ)
		w := randBlocks(rng, typ, n/256*rows)
		act := randBlocks(rng, Q8_K, n/256)
		out := make([]float32, rows)
		rb := n / 256 * tr.TypeSize
		b.Run("MatVec/"+typ.String(), func(b *testing.B) {
			for b.Loop() {
				tr.MatVec(n, w, act, out)
			}
			b.SetBytes(int64(len(w)))
		})
		b.Run("Dot/"+typ.String(), func(b *testing.B) {
			for b.Loop() {
				for r := range rows {
					out[r] = tr.Dot(n, w[r*rb:], act)
				}
			}
			b.SetBytes(int64(len(w)))
		})
		if typ == IQ4_XS {
			var yp [8 * q8KPrepBytes]byte
			prepareQ8_KX86(yp[:], act, 8)
			var yd [8]float32
			var d [16]float32
			var ms [8]int32
			var acc [MaxDotN][8]float32
			var wd [x86Decoded]byte
			b.Run("asm/"+typ.String(), func(b *testing.B) {
				for b.Loop() {
					for r := range rows {
						iq4XSRowN(&w[r*rb], 8, &yp[0], 1, &d[0], &acc, &ms[0], &wd)
					}
				}
				b.SetBytes(int64(len(w)))
			})
			b.Run("row/"+typ.String(), func(b *testing.B) {
				var sm [MaxDotN]float32
				for b.Loop() {
					for r := range rows {
						x86Row(IQ4_XS, w[r*rb:], 8, yp[:], yd[:], 1, &acc, &sm, d[:], ms[:], &wd, nil)
					}
				}
				b.SetBytes(int64(len(w)))
			})
		}
	}
}

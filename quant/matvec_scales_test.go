package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestMatVecScalesAllFP16: MatVec (the DotRows kernels, which convert the
// weight scales of several rows at once) with every fp16 value (zeros,
// subnormals, infinities, NaNs) as a weight block's scale, one value a
// row, in one call: each row exactly the reference's (or both NaN). (The
// portable set's MatVec is its Dot per row, which TestDotScalesAllFP16
// covers.)
func TestMatVecScalesAllFP16(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		if ks.name == "Go" {
			t.Skip("the portable MatVec is Dot per row")
		}
		rng := rand.New(rand.NewPCG(31, 31))
		for _, typ := range []Type{Q4_0, Q8_0, Q4_K, Q6_K, Q5_K, Q3_K, Q2_K} {
			tr := ks.traits(typ)
			at := TraitsOf(tr.VecDotType)
			ref := refDots[typ]
			off := map[Type][]int{Q4_0: {0}, Q8_0: {0}, Q4_K: {0, 2}, Q6_K: {208}, Q5_K: {0, 2}, Q3_K: {108}, Q2_K: {80, 82}}[typ]
			const nb, rows = 1, 1 << 16
			n, rowBytes := nb*tr.BlockSize, nb*tr.TypeSize
			w := randBlocks(rng, typ, nb*rows)
			for h := range rows { // row h: scale h
				binary.LittleEndian.PutUint16(w[h*rowBytes+off[h%len(off)]:], uint16(h))
			}
			act := randBlocks(rng, tr.VecDotType, n/at.BlockSize)
			out := make([]float32, rows)
			tr.MatVec(n, w, act, out)
			for h, got := range out {
				want := ref(n, w[h*rowBytes:(h+1)*rowBytes], act)
				if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
					t.Fatalf("%v fp16 scale %#04x: MatVec %g, reference %g", typ, h, got, want)
				}
			}
		}
	})
}

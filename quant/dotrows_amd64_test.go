//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestDotRowsKernels: the AVX2 DotRows kernels against the reference dot
// per row, on rows whose blocks come in eights (the kernels' fast path) and
// not, 1 to 13 rows (four at a time and the rest), with special scales in
// the weights and the activation, and Q8_0 activations with and without a
// -128 quant (without: the VPMADDUBSW path).
func TestDotRowsKernels(t *testing.T) {
	requireTable(t, "AVX2")
	testDotRowsKernels(t, map[Type]func(n int, w, act []byte, out []float32){Q4_0: dotRowsQ4_0AVX2, Q8_0: dotRowsQ8_0AVX2})
}

// TestDotRowsVNNI: the same for the 512-bit VNNI DotRows kernels (their
// fast path: blocks in sixteens, eight rows at a time; 7..13 rows have a
// remainder through the AVX2 kernels). About 0.1 s.
func TestDotRowsVNNI(t *testing.T) {
	requireTable(t, "AVX512-VBMI-VNNI")
	testDotRowsKernels(t, map[Type]func(n int, w, act []byte, out []float32){Q4_0: dotRowsQ4_0VNNI, Q8_0: dotRowsQ8_0VNNI})
}

func testDotRowsKernels(t *testing.T, kernels map[Type]func(n int, w, act []byte, out []float32)) {
	rng := rand.New(rand.NewPCG(7, 17))
	for _, typ := range []Type{Q4_0, Q8_0} {
		tr := TraitsOf(typ)
		ref, kernel := refDots[typ], kernels[typ]
		for iter := range 240 {
			nb := []int{8, 16, 64, 176, 7, 9, 24, 512, 520, 32}[iter%10]
			rows := 1 + iter%13
			n := nb * qk
			rowBytes := nb * tr.TypeSize
			w := randBlocks(rng, typ, nb*rows)
			act := randBlocks(rng, Q8_0, nb)
			if iter%4 != 3 { // activation quants in -127..127, as quantizeQ8_0 makes them
				for b := range nb {
					for j := 2; j < q8_0Bytes; j++ {
						if act[b*q8_0Bytes+j] == 0x80 {
							act[b*q8_0Bytes+j] = byte(rng.IntN(2) * 0x7f)
						}
					}
				}
			}
			if iter%3 == 0 { // special scales in some rows
				for range 1 + rng.IntN(3) {
					b := rng.IntN(nb * rows)
					binary.LittleEndian.PutUint16(w[b*tr.TypeSize:], specialHalves[rng.IntN(len(specialHalves))])
				}
			}
			if iter%5 == 0 { // and in the activation
				b := rng.IntN(nb)
				binary.LittleEndian.PutUint16(act[b*q8_0Bytes:], specialHalves[rng.IntN(len(specialHalves))])
			}
			out := make([]float32, rows)
			kernel(n, w, act, out)
			for r := range rows {
				if want := ref(n, w[r*rowBytes:(r+1)*rowBytes], act); !sameFloat(out[r], want) {
					t.Fatalf("%v nb=%d rows=%d iter %d row %d: DotRows %g, reference %g", typ, nb, rows, iter, r, out[r], want)
				}
			}
			if a := testing.AllocsPerRun(3, func() { kernel(n, w, act, out) }); a != 0 {
				t.Fatalf("%v: DotRows allocates %v times", typ, a)
			}
		}
	}
}

package quant

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// q8Activation returns an activation of nb blocks of vt (Q8_0 or Q8_K)
// with quants in -127..127, as ggml's quantizers write them (random blocks
// nearly always hold a -128), or all equal to q when q is not 0; Q8_K's
// bsums are its quants' sums.
func q8Activation(rng *rand.Rand, vt Type, nb int, q int8) []byte {
	act := randBlocks(rng, vt, nb)
	size, off, n := q8_0Bytes, 2, qk
	if vt == Q8_K {
		size, off, n = q8_KBytes, 4, qkK
	}
	for b := range nb {
		qs := act[b*size+off : b*size+off+n]
		copy(qs, q8Bytes(rng, n))
		if q != 0 {
			for i := range qs {
				qs[i] = byte(q)
			}
		}
		if vt == Q8_K {
			for j := range qkK / 16 {
				var s int32
				for _, v := range qs[16*j : 16*j+16] {
					s += int32(int8(v))
				}
				binary.LittleEndian.PutUint16(act[b*size+4+qkK+2*j:], uint16(int16(s)))
			}
		}
	}
	return act
}

// TestIQ4Signs checks IQ4_XS's and IQ4_NL's Dot, MatVec and MatMul on
// activations as ggml writes them (-127..127), where the relaxed kernels
// move the activation's signs onto the levels and take its magnitudes:
// random blocks, extreme ones (every level -127 or 113, the scales at
// their ends, activations ±127), zero ones, and then one activation byte of
// -128, which the relaxed kernels must notice (they fall back) and still
// give the reference's bits. Row lengths past DotRows' buffer take the
// Dot.
func TestIQ4Signs(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		rng := rand.New(rand.NewPCG(4, 128))
		for _, c := range []struct {
			typ     Type
			n, rows int
		}{{IQ4_XS, 2048, 67}, {IQ4_XS, 256, 5}, {IQ4_XS, 5632, 9}, {IQ4_XS, 65 * 256, 4}, {IQ4_NL, 2048, 67}, {IQ4_NL, 32, 7}, {IQ4_NL, 96, 33}} {
			tr := ks.traits(c.typ)
			ref := refDots[c.typ]
			vt := tr.VecDotType
			nb := c.n / tr.BlockSize
			rowBytes := nb * tr.TypeSize
			actBlocks := c.n / TraitsOf(vt).BlockSize
			check := func(what string, w []byte, acts [][]byte) {
				t.Helper()
				for r := range c.rows {
					row := w[r*rowBytes : (r+1)*rowBytes]
					if got, want := tr.Dot(c.n, row, acts[0]), ref(c.n, row, acts[0]); math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("%v n=%d %s: row %d: Dot %g, reference %g", c.typ, c.n, what, r, got, want)
					}
				}
				out := make([]float32, c.rows)
				tr.MatVec(c.n, w, acts[0], out)
				outs := make([][]float32, len(acts))
				for i := range outs {
					outs[i] = make([]float32, c.rows)
				}
				tr.MatMul(c.n, w, acts, outs, 0)
				for r := range c.rows {
					row := w[r*rowBytes : (r+1)*rowBytes]
					if want := ref(c.n, row, acts[0]); math.Float32bits(out[r]) != math.Float32bits(want) {
						t.Fatalf("%v n=%d rows=%d %s: row %d: MatVec %g, reference %g", c.typ, c.n, c.rows, what, r, out[r], want)
					}
					for i, a := range acts {
						if want := ref(c.n, row, a); math.Float32bits(outs[i][r]) != math.Float32bits(want) {
							t.Fatalf("%v n=%d rows=%d %s: row %d activation %d: MatMul %g, reference %g", c.typ, c.n, c.rows, what, r, i, outs[i][r], want)
						}
					}
				}
			}
			acts := func(q int8) [][]byte {
				a := make([][]byte, 1+rng.IntN(MaxDotN))
				for i := range a {
					a[i] = q8Activation(rng, vt, actBlocks, q)
				}
				return a
			}
			w := randBlocks(rng, c.typ, nb*c.rows)
			check("random blocks", w, acts(0))
			// extremes: every level -127 or 113, scales 0 or 63 (-32, +31)
			wx := slices.Clone(w)
			for b := range nb * c.rows {
				blk := wx[b*tr.TypeSize : (b+1)*tr.TypeSize]
				qs := blk[2:]
				if c.typ == IQ4_XS {
					v := byte(0xff * rng.IntN(2))
					for i := 2; i < 8; i++ {
						blk[i] = v
					}
					qs = blk[8:]
				}
				for i := range qs {
					qs[i] = []byte{0x00, 0xff, 0x0f, 0xf0}[rng.IntN(4)]
				}
			}
			check("extreme levels, activations 127", wx, acts(127))
			check("extreme levels, activations -127", wx, acts(-127))
			check("extreme levels", wx, acts(0))
			check("zero blocks", make([]byte, len(w)), [][]byte{make([]byte, actBlocks*TraitsOf(vt).TypeSize)})
			for _, q := range []int8{-128, 0} {
				a := acts(q)
				if q == 0 {
					a[0][rng.IntN(actBlocks)*TraitsOf(vt).TypeSize+4] = 0x80 // -128 (Q8_0: weight 2, Q8_K: 0)
				}
				check(fmt.Sprintf("an activation of -128 (%d)", q), w, a)
			}
		}
	})
}

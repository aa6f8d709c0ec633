package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestMatMul: for every type with a dot, MatMul of 1 to 19 rows with 1 to
// 20 activations (with the type's DotRowsN kernel where it has one) gives
// every row and activation exactly what Dot gives for them alone. The
// activations are random blocks or quantised from random floats (a kernel
// may take a fast path only for what the quantiser produces); some blocks
// get a zero, subnormal, infinite or NaN scale.
func TestMatMul(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		for _, typ := range dotTypes() {
			tr := ks.traits(typ)
			checkMatMul(t, tr, typ, tr.MatMul)
		}
	})
}

// checkMatMul runs TestMatMul's cases through matMul, a MatMul of typ,
// against the Dot of tr, typ's traits.
func checkMatMul(t *testing.T, tr Traits, typ Type, matMul func(n int, w []byte, acts [][]byte, outs [][]float32, at int)) {
	t.Helper()
	rng := rand.New(rand.NewPCG(13, uint64(typ)))
	specials := []uint16{0, 0x0001, 0x03ff, 0x7c00, 0xfc00, 0x7e00}
	at := TraitsOf(tr.VecDotType)
	{
		for iter := range 48 {
			nb := []int{1, 2, 3, 4, 5, 8, 9, 16, 24, 64, 65, 130}[iter%12]
			if tr.BlockSize == 1 {
				nb *= 32
			}
			rows := 1 + (iter*7)%19
			nacts := 1 + (iter*5)%20
			n := nb * tr.BlockSize
			rowBytes := nb * tr.TypeSize
			w := randBlocks(rng, typ, nb*rows)
			acts := make([][]byte, nacts)
			for i := range acts {
				if iter%2 == 0 || !at.HasFromFloat() {
					acts[i] = randBlocks(rng, tr.VecDotType, n/at.BlockSize)
					continue
				}
				f := make([]float32, n)
				for j := range f {
					f[j] = float32(rng.NormFloat64())
				}
				acts[i] = make([]byte, n/at.BlockSize*at.TypeSize)
				at.FromFloat(acts[i], f)
			}
			if iter%5 == 4 && tr.BlockSize > 1 && (typ == Q4_0 || typ == Q8_0 || typ == Q4_K || typ == IQ4_XS) {
				// a special scale in one weight block and one activation block
				// (the fp16 d at offset 0 of the formats that have one there)
				h := specials[rng.IntN(len(specials))]
				binary.LittleEndian.PutUint16(w[rng.IntN(nb*rows)*tr.TypeSize:], h)
				if at.TypeSize == q8_0Bytes {
					binary.LittleEndian.PutUint16(acts[rng.IntN(nacts)][rng.IntN(nb)*at.TypeSize:], specials[rng.IntN(len(specials))])
				}
			}
			const at0 = 3 // results go to outs[i][at0:]
			outs := make([][]float32, nacts)
			for i := range outs {
				outs[i] = make([]float32, at0+rows+2)
				outs[i][at0+rows] = 42
			}
			matMul(n, w, acts, outs, at0)
			for i := range acts {
				for r := range rows {
					got, want := outs[i][at0+r], tr.Dot(n, w[r*rowBytes:(r+1)*rowBytes], acts[i])
					if math.Float32bits(got) != math.Float32bits(want) && !(math.IsNaN(float64(got)) && math.IsNaN(float64(want))) {
						t.Fatalf("%v n=%d rows=%d acts=%d: row %d activation %d: MatMul %g, Dot %g", typ, n, rows, nacts, r, i, got, want)
					}
				}
				if outs[i][at0-1] != 0 || outs[i][at0+rows] != 42 {
					t.Fatalf("%v: MatMul wrote outside rows [%d, %d)", typ, at0, at0+rows)
				}
			}
			if n := testing.AllocsPerRun(3, func() { matMul(n, w, acts, outs, at0) }); n != 0 {
				t.Fatalf("%v: MatMul allocates %v times", typ, n)
			}
		}
	}
}

// TestMatMulManyRows: MatMul of more rows than a batched kernel computes
// per call (and not a multiple of it), with every number of activations
// from 1 to MaxDotN (so every count of full and short quads of four),
// gives each row and activation the bits of the portable Dot, for the
// formats whose wasm kernels batch rows that way (Q4_0, Q8_0, Q4_K,
// Q6_K) or call their row kernels a number of rows at a time (TQ2_0,
// TQ1_0, IQ1_S, IQ1_M, E8_IQ3), on random blocks and on rows of extreme
// quants.
func TestMatMulManyRows(t *testing.T) {
	portable := newTable(nil)
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		for _, typ := range []Type{Q4_0, Q8_0, Q4_K, Q6_K, TQ2_0, TQ1_0, IQ1_S, IQ1_M, E8_IQ3} {
			tr, p := ks.traits(typ), portable.traits(typ)
			at := TraitsOf(tr.VecDotType)
			rng := rand.New(rand.NewPCG(17, uint64(typ)))
			const rows = 133
			nb := 3
			if tr.BlockSize == qk {
				nb = 9
			}
			n := nb * tr.BlockSize
			rowBytes := nb * tr.TypeSize
			w := randBlocks(rng, typ, nb*rows)
			for i := range w[:len(w)/3] { // extreme quants in the first rows
				w[i] |= 0x88
			}
			for nacts := 1; nacts <= MaxDotN; nacts++ {
				acts := make([][]byte, nacts)
				outs := make([][]float32, nacts)
				for i := range acts {
					acts[i] = randBlocks(rng, tr.VecDotType, n/at.BlockSize)
					outs[i] = make([]float32, rows+1)
				}
				tr.MatMul(n, w, acts, outs, 1)
				for i, a := range acts {
					for r := range rows {
						got, want := outs[i][1+r], p.Dot(n, w[r*rowBytes:(r+1)*rowBytes], a)
						if !sameFloat(got, want) {
							t.Fatalf("%v acts=%d: row %d activation %d: MatMul %g, portable Dot %g", typ, nacts, r, i, got, want)
						}
					}
				}
			}
		}
	})
}

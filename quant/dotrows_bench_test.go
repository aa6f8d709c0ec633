package quant

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// BenchmarkMatVec measures MatVec (the DotRows kernels where a type has
// one) against Dot per row, over 256 rows of TinyLlama's row lengths, and
// MatMul (the DotRowsN kernels) with MaxDotN distinct activations, a
// prefill batch; ns/row is the time per weight row (per row and
// activation for MatMul, so MatVec's over MatMul's is how much faster a
// prompt's products are per position than a token's), MB/s weight bytes
// read per second.
func BenchmarkMatVec(b *testing.B) {
	const rows = 256
	for _, typ := range slices.Concat(twinTypes, []Type{F32, F16, BF16, IQ3_S, IQ3_XXS, IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M, TQ2_0}) {
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
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					tr.MatVec(n, w, act, out)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
			})
			acts, outs := make([][]byte, MaxDotN), make([][]float32, MaxDotN)
			for i := range acts {
				acts[i] = randBlocks(rng, tr.VecDotType, n/at.BlockSize)
				outs[i] = make([]float32, rows)
			}
			b.Run(fmt.Sprintf("%v/%d/MatMul", typ, n), func(b *testing.B) {
				for b.Loop() {
					tr.MatMul(n, w, acts, outs, 0)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows/MaxDotN, "ns/row")
			})
			b.Run(fmt.Sprintf("%v/%d/Dot", typ, n), func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					dotRows(tr.Dot, n, rowBytes, w, act, out)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
			})
		}
	}
}

// BenchmarkMatMul measures MatMul (the DotRowsN kernels where a type has
// one) with MaxDotN distinct activations, a prefill batch, over 256 rows of
// TinyLlama's row lengths; MB/s is weight bytes per second, each byte
// serving the whole batch, ns/row-activation the time per row and
// activation.
func BenchmarkMatMul(b *testing.B) {
	const rows = 256
	for _, typ := range twinTypes {
		tr := TraitsOf(typ)
		at := TraitsOf(tr.VecDotType)
		for _, n := range []int{2048, 5632} {
			rng := rand.New(rand.NewPCG(uint64(n), uint64(typ)))
			w := randBlocks(rng, typ, n/tr.BlockSize*rows)
			acts := make([][]byte, MaxDotN)
			outs := make([][]float32, MaxDotN)
			for i := range acts {
				acts[i] = randBlocks(rng, tr.VecDotType, n/at.BlockSize)
				outs[i] = make([]float32, rows)
			}
			b.Run(fmt.Sprintf("%v/%d", typ, n), func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					tr.MatMul(n, w, acts, outs, 0)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(rows*MaxDotN), "ns/row-activation")
			})
		}
	}
}

// BenchmarkKernelSets measures MatVec (decode) and MatMul of 16
// activations (prefill) in each kernel set this build runs, side by side
// for each type and row length: natively Go+AVX2 and Go+AVX2+VNNI, in the
// wasm relaxedsimd build Go+SIMD128 and Go+SIMD128+relaxed SIMD. 1024 rows
// of TinyLlama's lengths (beyond the L2 cache); ns/row is per weight row
// (and per activation for MatMul).
func BenchmarkKernelSets(b *testing.B) {
	const rows = 1024
	for _, typ := range twinTypes {
		for _, n := range []int{2048, 5632} {
			rng := rand.New(rand.NewPCG(uint64(n), uint64(typ)))
			p := TraitsOf(typ)
			at := TraitsOf(p.VecDotType)
			w := randBlocks(rng, typ, n/p.BlockSize*rows)
			acts := make([][]byte, MaxDotN)
			outs := make([][]float32, MaxDotN)
			for i := range acts {
				acts[i] = randBlocks(rng, p.VecDotType, n/at.BlockSize)
				outs[i] = make([]float32, rows)
			}
			for _, ks := range kernelSets()[1:] {
				tr := ks.traits(typ)
				b.Run(fmt.Sprintf("%v/%d/%s/MatVec", typ, n, ks.name), func(b *testing.B) {
					for b.Loop() {
						tr.MatVec(n, w, acts[0], outs[0])
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
				})
				b.Run(fmt.Sprintf("%v/%d/%s/MatMul16", typ, n, ks.name), func(b *testing.B) {
					for b.Loop() {
						tr.MatMul(n, w, acts, outs, 0)
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows/MaxDotN, "ns/row")
				})
			}
		}
	}
}

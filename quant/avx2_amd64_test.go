//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"simd/archsimd"
)

// The AVX2 kernels' helpers and the kernels themselves on long rows: the
// kernels reduce four or eight blocks at a time, so every row length mod 8
// is covered, and blocks with special scales (zero, subnormal, infinite,
// NaN) take the kernels' scalar paths.

// requireTable skips the test unless the CPU runs the platform table name
// (a test that calls its kernels directly).
func requireTable(t *testing.T, name string) {
	t.Helper()
	for _, kt := range cpuTables() {
		if kt.name == name {
			return
		}
	}
	t.Skipf("this CPU does not run the %s kernels", name)
}

func TestHalfToFloatAll(t *testing.T) {
	for h := range 1 << 16 {
		got, want := math.Float32bits(halfToFloat(uint16(h))), math.Float32bits(FP16ToFP32(uint16(h)))
		if got != want {
			t.Fatalf("fp16 %#04x: %#08x, want %#08x", h, got, want)
		}
	}
}

func TestHalvesToFloatsAll(t *testing.T) {
	requireTable(t, "AVX2")
	var h [8]uint32
	var f [8]float32
	for base := 0; base < 1<<16; base += 8 {
		normal := true
		for i := range h {
			h[i] = uint32(base + i)
			if e := h[i] & 0x7c00; e == 0 || e == 0x7c00 {
				normal = false
			}
		}
		v, ok := halvesToFloats(archsimd.LoadUint32x8Array(&h))
		if ok != normal {
			t.Fatalf("fp16 %#04x..: ok %v, want %v", base, ok, normal)
		}
		if !ok {
			continue
		}
		v.StoreArray(&f)
		for i := range f {
			if got, want := math.Float32bits(f[i]), math.Float32bits(FP16ToFP32(uint16(h[i]))); got != want {
				t.Fatalf("fp16 %#04x: %#08x, want %#08x", h[i], got, want)
			}
		}
	}
}

func TestDotTwinsLongRows(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		rng := rand.New(rand.NewPCG(12, 12))
		for _, typ := range simdTypes {
			tr := ks.traits(typ)
			at := TraitsOf(tr.VecDotType)
			ref := refDots[typ]
			for iter := range 200 {
				nb := 1 + iter%33
				if iter%40 == 39 {
					nb = 64 + iter%7
				}
				w := randBlocks(rng, typ, nb)
				n := nb * tr.BlockSize
				act := randBlocks(rng, tr.VecDotType, n/at.BlockSize)
				if iter%3 == 0 { // one special scale somewhere in the row
					b := rng.IntN(nb)
					off := map[Type]int{Q4_0: 0, Q8_0: 0, Q2_K: 80 + 2*rng.IntN(2), Q3_K: 108, Q4_K: 2 * rng.IntN(2), Q5_K: 2 * rng.IntN(2), Q6_K: 208}[typ]
					h := specialHalves[rng.IntN(len(specialHalves))]
					binary.LittleEndian.PutUint16(w[b*tr.TypeSize+off:], h)
				}
				if iter%5 == 0 && at.TypeSize == q8_0Bytes { // and in the activation
					b := rng.IntN(len(act) / q8_0Bytes)
					binary.LittleEndian.PutUint16(act[b*q8_0Bytes:], specialHalves[rng.IntN(len(specialHalves))])
				}
				want := ref(n, w, act)
				if got := tr.Dot(n, w, act); !sameFloat(got, want) {
					t.Fatalf("%v nb=%d iter %d: Dot %g, reference %g", typ, nb, iter, got, want)
				}
				acts := make([][]byte, 1+iter%MaxDotN)
				for i := range acts {
					acts[i] = act
					if i%3 == 1 {
						acts[i] = randBlocks(rng, tr.VecDotType, n/at.BlockSize)
					}
				}
				out := make([]float32, len(acts))
				tr.DotEach(n, w, acts, out)
				for i, a := range acts {
					if want := ref(n, w, a); !sameFloat(out[i], want) {
						t.Fatalf("%v nb=%d iter %d activation %d of %d: DotN %g, reference %g", typ, nb, iter, i, len(acts), out[i], want)
					}
				}
			}
		}
	})
}

package quant

import (
	"math"
	"testing"
)

// refDots maps each optimised dot kernel to the readable scalar reference
// it must equal bit for bit.
var refDots = map[Type]func(n int, w, act []byte) float32{
	Q4_0: dotQ4_0Ref,
	Q4_1: dotQ4_1Ref,
	Q5_0: dotQ5_0Ref,
	Q5_1: dotQ5_1Ref,
	Q8_0: dotQ8_0Ref,
	Q2_K: dotQ2_KRef,
	Q3_K: dotQ3_KRef,
	Q4_K: dotQ4_KRef,
	Q5_K: dotQ5_KRef,
	Q6_K: dotQ6_KRef,

	IQ4_NL: dotIQ4_NLRef,
	IQ4_XS: dotIQ4_XSRef,
	IQ2_XS: dotIQ2_XSRef,
	IQ2_S:  dotIQ2_SRef,
	TQ1_0:  dotTQ1_0Ref,
	TQ2_0:  dotTQ2_0Ref,

	F32:     dotF32Ref,
	F16:     dotF16Ref,
	BF16:    dotBF16Ref,
	IQ2_XXS: dotIQ2_XXSRef,
	IQ3_XXS: dotIQ3_XXSRef,
	IQ3_S:   dotIQ3_SRef,
	IQ1_S:   dotIQ1_SRef,
	IQ1_M:   dotIQ1_MRef,
}

func TestDotMatchesReference(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		for typ, ref := range refDots {
			w, act := benchData(t, typ)
			dot := ks.traits(typ).Dot
			rowBytes := len(w) / benchRows
			for r := range benchRows {
				row := w[r*rowBytes : (r+1)*rowBytes]
				for _, n := range []int{benchCols, 256, 512} {
					got, want := dot(n, row, act), ref(n, row, act)
					if math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("%v row %d n %d: %g, reference %g", typ, r, n, got, want)
					}
				}
			}
		}
	})
}

// BenchmarkDotRef measures the readable reference kernels, for comparison
// with BenchmarkDot.
func BenchmarkDotRef(b *testing.B) {
	for _, typ := range dotTypes() {
		if refDots[typ] == nil {
			continue
		}
		b.Run(typ.String(), func(b *testing.B) {
			benchDot(b, typ, refDots[typ])
		})
	}
}

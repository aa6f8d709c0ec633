package quant

import (
	"encoding/binary"
	"testing"
)

// TestF16RowsWidenAll checks F16's MatVec and MatMul on every fp16 bit
// pattern, as a weight and as an activation (subnormals, infinities,
// NaNs), against dotF16Ref: the weights in 2048 rows of 32 against one-hot
// activations, and each 32 patterns as an activation against the 32 rows
// of the identity, so that each result is one pattern's value (or NaN,
// where a 0 meets the group's infinity or NaN).
func TestF16RowsWidenAll(t *testing.T) {
	const n = 32
	one := func(j int) []byte {
		a := make([]byte, 2*n)
		binary.LittleEndian.PutUint16(a[2*j:], 0x3c00) // 1.0
		return a
	}
	// every pattern once, 32 to a group (a row or an activation), one
	// infinity or NaN in each, at element g%32 of group g: a group with
	// two would give NaN wherever either meets a 0
	all := make([]byte, 0, 2<<16)
	var normal []uint16
	for h := range 1 << 16 {
		if h&0x7c00 != 0x7c00 {
			normal = append(normal, uint16(h))
		}
	}
	for g := range 1 << 16 / n {
		special := uint16(0x7c00 + g%1024 + g/1024*0x8000)
		group := append(append(normal[:g%n:g%n], special), normal[g%n:n-1]...)
		for _, h := range group {
			all = binary.LittleEndian.AppendUint16(all, h)
		}
		normal = normal[n-1:]
	}
	ident := make([]byte, 0, 2*n*n)
	for j := range n {
		ident = append(ident, one(j)...)
	}
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		tr := ks.traits(F16)
		check := func(what string, w []byte, acts [][]byte, outs [][]float32) {
			t.Helper()
			for i, a := range acts {
				for r := range len(w) / (2 * n) {
					if got, want := outs[i][r], dotF16Ref(n, w[2*n*r:2*n*(r+1)], a); !sameFloat(got, want) {
						t.Fatalf("%s: activation %d row %d: %g, reference %g", what, i, r, got, want)
					}
				}
			}
		}
		// every pattern as a weight
		out := make([]float32, 1<<16/n)
		for j := range n {
			tr.MatVec(n, all, one(j), out)
			check("MatVec, weights", all, [][]byte{one(j)}, [][]float32{out})
		}
		var acts [][]byte
		var outs [][]float32
		for j := range n {
			acts = append(acts, one(j))
			outs = append(outs, make([]float32, 1<<16/n))
		}
		tr.MatMul(n, all, acts, outs, 0)
		check("MatMul, weights", all, acts, outs)
		// every pattern as an activation
		out = out[:n]
		for g := range 1 << 16 / n {
			a := all[2*n*g : 2*n*(g+1)]
			tr.MatVec(n, ident, a, out)
			check("MatVec, activations", ident, [][]byte{a}, [][]float32{out})
		}
		for g := 0; g < 1<<16/n; g += MaxDotN {
			acts, outs = acts[:0], outs[:0]
			for i := range MaxDotN {
				acts = append(acts, all[2*n*(g+i):2*n*(g+i+1)])
				outs = append(outs, make([]float32, n))
			}
			tr.MatMul(n, ident, acts, outs, 0)
			check("MatMul, activations", ident, acts, outs)
		}
	})
}

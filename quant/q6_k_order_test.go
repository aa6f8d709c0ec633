package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestQ6_KOrders: each of Q6_K's two orders has its portable kernel equal
// to its reference bit for bit, on every platform (dotQ6_KGo to dotQ6_KRef,
// ggml's generic order; dotQ6_KX86Go to dotQ6_KX86Ref, its x86 order), the
// two references agree to float32 rounding, and they differ in the last
// bits on some rows (the orders are distinct). About 0.1 s natively.
func TestQ6_KOrders(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	differ := 0
	for iter := range 400 {
		nb := 1 + iter%7
		w := randBlocks(rng, Q6_K, nb)
		if iter%50 == 0 {
			for i := range w[:nb*q6_KBytes-2] {
				w[i] |= 0x80
			}
		}
		act := randBlocks(rng, Q8_K, nb)
		n := nb * qkK
		g, x := dotQ6_KRef(n, w, act), dotQ6_KX86Ref(n, w, act)
		if got := dotQ6_KGo(n, w, act); !sameFloat(got, g) {
			t.Fatalf("n=%d iter %d: dotQ6_KGo %g, dotQ6_KRef %g", n, iter, got, g)
		}
		if got := dotQ6_KX86Go(n, w, act); !sameFloat(got, x) {
			t.Fatalf("n=%d iter %d: dotQ6_KX86Go %g, dotQ6_KX86Ref %g", n, iter, got, x)
		}
		var mag float64 // Σ |d·dy·scale·q·y|
		for b := range nb {
			blk := w[b*q6_KBytes:]
			yd, q8, _ := q8KBlock(act[b*q8_KBytes:])
			for i := range qkK {
				mag += math.Abs(float64(fp16At(blk[208:])) * float64(yd) * float64(int8(blk[192+i/16])) * float64(q6KQuant(blk[:128], blk[128:192], i)) * float64(int8(q8[i])))
			}
		}
		if math.Abs(float64(g)-float64(x)) > 1e-6*mag {
			t.Fatalf("n=%d iter %d: generic order %g, x86 order %g (Σ|terms| %g)", n, iter, g, x, mag)
		}
		if g != x {
			differ++
		}
	}
	if differ == 0 {
		t.Error("the generic and x86 orders gave the same bits on every row")
	}
	t.Logf("%d of 400 rows differ between the orders", differ)
}

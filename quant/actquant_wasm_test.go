//go:build goexperiment.simd

package quant

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQuantizeActBlockSIMD128: quantizeActBlockSIMD128 gives
// quantizeActBlockRef's block, scale and sum, bit for bit (see
// randActBlock).
func TestQuantizeActBlockSIMD128(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for iter := range 4000 {
		x := randActBlock(rng, iter)
		size := []int{q8_0Bytes, q8_1Bytes}[iter%2]
		want, got := make([]byte, size), make([]byte, size)
		wd, ws := quantizeActBlockRef(want, x)
		gd, gs := quantizeActBlockSIMD128(got, x)
		if !bytes.Equal(got, want) || math.Float32bits(gd) != math.Float32bits(wd) && !(gd != gd && wd != wd) || gs != ws {
			t.Fatalf("iter %d: x=%v\nSIMD128   %v %v %v\nreference %v %v %v", iter, x, gd, gs, got, wd, ws, want)
		}
	}
}

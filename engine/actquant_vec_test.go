package engine

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQuantizeBlockTwins: quantizeBlockVec (AVX2 where there is one) gives
// quantizeBlockCPU's quants, scale and sum, bit for bit, on random blocks
// of several magnitudes, on exact ties (x·id = k + 1/2), and on blocks with
// zeros, infinities, NaNs and huge values.
func TestQuantizeBlockTwins(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.MaxFloat32, -math.MaxFloat32, 1e-45}
	for iter := range 4000 {
		x := make([]float32, actBlock)
		scale := float32(math.Pow(10, float64(rng.IntN(13)-6)))
		for i := range x {
			x[i] = float32(rng.NormFloat64()) * scale
		}
		switch iter % 5 {
		case 1: // ties: amax = 127, values k + 1/2
			for i := range x {
				x[i] = float32(rng.IntN(254)-127) + 0.5
			}
			x[rng.IntN(actBlock)] = 127
		case 2:
			x[rng.IntN(actBlock)] = specials[rng.IntN(len(specials))]
		case 3:
			if iter%15 == 3 {
				clear(x)
			}
		}
		want, got := make([]byte, actBlock), make([]byte, actBlock)
		wd, ws := quantizeBlockCPU(want, x)
		gd, gs := quantizeBlockVec(got, x)
		if !bytes.Equal(got, want) || math.Float32bits(gd) != math.Float32bits(wd) && !(gd != gd && wd != wd) || gs != ws {
			t.Fatalf("iter %d: x=%v\nvec %v %v %v\nref %v %v %v", iter, x, gd, gs, got, wd, ws, want)
		}
	}
}

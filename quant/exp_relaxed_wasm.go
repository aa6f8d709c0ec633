//go:build goexperiment.simd && relaxedsimd

package quant

// swigluWasm and expShiftWasm are the relaxedsimd build's SwiGLU and
// ExpShift (the vector table's, kernels_wasm.go): expfV four lanes at a
// time with fused relaxed_madd (exp_relaxed_wasm.s), bit for bit
// swigluRef and expShiftRef.

//go:noescape
func swigluRelaxed4(gate, up *float32, n int) int

//go:noescape
func expShiftRelaxed16(x *float32, m float32, blocks int, sum float64) (done int, s float64)

func swigluWasm(gate, up []float32) {
	up = up[:len(gate)]
	n := len(gate) &^ (vexpWidth - 1)
	for i := 0; i < n; {
		i += swigluRelaxed4(&gate[i], &up[i], n-i)
		if i < n { // a group with a lane out of swigluRelaxed4's range
			for k := i; k < i+4; k++ {
				gate[k] = gate[k] / (1 + expfV(0-gate[k])) * up[k]
			}
			i += 4
		}
	}
	for i := n; i < len(gate); i++ {
		g := gate[i]
		gate[i] = g / (1 + expfC(-g)) * up[i]
	}
}

func expShiftWasm(x []float32, m float32, sum float64) float64 {
	blocks := len(x) / vexpWidth
	for b := 0; b < blocks; {
		done, s := expShiftRelaxed16(&x[b*vexpWidth], m, blocks-b, sum)
		sum, b = s, b+done
		if b < blocks { // a block with a lane out of expShiftRelaxed16's range
			sum = expShiftRef(x[b*vexpWidth:(b+1)*vexpWidth], m, sum)
			b++
		}
	}
	if r := len(x) % vexpWidth; r != 0 {
		sum = expShiftRef(x[len(x)-r:], m, sum)
	}
	return sum
}

package quant

// IQ4_NL: blocks of 32 weights, 18 bytes, 4.5 bits per weight.
// Like Q4_0, but each nibble indexes the 16 non-linear levels kvaluesIQ4NL.
//
//	offset size
//	0      2    d       fp16 scale
//	2      16   qs[16]  nibbles: low nibble of qs[j] is weight j, high nibble is weight j+16
//
// x = d * kvaluesIQ4NL[q]. Activation format: Q8_0.
const iq4_NLBytes = 2 + qk/2

var _ [0]struct{} = [iq4_NLBytes - 18]struct{}{} // size check

func dequantizeIQ4_NL(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qk; b++ {
		blk := src[b*iq4_NLBytes : (b+1)*iq4_NLBytes]
		d := fp16At(blk)
		y := dst[b*qk : (b+1)*qk]
		for j, q := range blk[2 : 2+qk/2] {
			y[j] = d * float32(kvaluesIQ4NL[q&0xf])
			y[j+qk/2] = d * float32(kvaluesIQ4NL[q>>4])
		}
	}
}

// dotIQ4_NLRef is ggml_vec_dot_iq4_nl_q8_0 in the order llama.cpp runs it
// on x86: there an IQ4_NL matrix (of a multiple of 8 rows) is repacked for
// ggml_gemv_iq4_nl_8x8_q8_0, whose AVX2 code adds each block's exact
// integer sum times dx·dy to the row's sum by a fused multiply-add
// (fma32), block by block; ggml's generic C multiplies, then adds.
func dotIQ4_NLRef(n int, w, act []byte) float32 {
	var sum float32
	for b := 0; b < n/qk; b++ {
		x := w[b*iq4_NLBytes : (b+1)*iq4_NLBytes]
		y := act[b*q8_0Bytes : (b+1)*q8_0Bytes]
		xq, yq := x[2:2+qk/2], y[2:2+qk]
		var sumi1, sumi2 int32
		for j := range qk / 2 {
			sumi1 += int32(int8(yq[j])) * int32(kvaluesIQ4NL[xq[j]&0xf])
			sumi2 += int32(int8(yq[j+qk/2])) * int32(kvaluesIQ4NL[xq[j]>>4])
		}
		sum = fma32(float32(sumi1+sumi2), float32(fp16At(x)*fp16At(y)), sum)
	}
	return sum
}

// dotIQ4_NLGo, the portable kernel, computes the same as dotIQ4_NLRef (bit
// for bit) with array views, so the inner loop has no bounds checks.
func dotIQ4_NLGo(n int, w, act []byte) float32 {
	nb := n / qk
	w, act = w[:nb*iq4_NLBytes], act[:nb*q8_0Bytes]
	var sum float32
	for b := range nb {
		x := (*[iq4_NLBytes]byte)(w[b*iq4_NLBytes:])
		y := (*[q8_0Bytes]byte)(act[b*q8_0Bytes:])
		xq := (*[qk / 2]byte)(x[2:])
		lo := (*[qk / 2]byte)(y[2:])
		hi := (*[qk / 2]byte)(y[2+qk/2:])
		var sumi int32
		for j := range qk / 2 {
			q := xq[j]
			sumi += int32(int8(lo[j]))*int32(kvaluesIQ4NL[q&0xf]) + int32(int8(hi[j]))*int32(kvaluesIQ4NL[q>>4])
		}
		sum = fma32(float32(sumi), float32(fp16At(x[:])*fp16At(y[:])), sum)
	}
	return sum
}

// bestIndexIQ4 returns the index of the level of kvaluesIQ4NL nearest to x
// (ggml's best_index_int8: bisection, ties to the upper level).
func bestIndexIQ4(x float32) uint8 {
	v := &kvaluesIQ4NL
	if x <= float32(v[0]) {
		return 0
	}
	if x >= float32(v[15]) {
		return 15
	}
	lo, hi := 0, 15
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if x < float32(v[mid]) {
			hi = mid
		} else {
			lo = mid
		}
	}
	if x-float32(v[hi-1]) < float32(v[hi])-x {
		return uint8(hi - 1)
	}
	return uint8(hi)
}

// iq4Search is the per-32-weight scale search of ggml's
// quantize_row_iq4_nl_impl without an importance matrix (weights x²) and
// with ntry = 7: starting from d = max/127, it tries the 15 inverse scales
// (t-127)/max, t = -7..7, and keeps the least-squares scale of the best
// assignment. It returns the scale; L receives the first assignment's
// level indices (the callers recompute them from the stored scales).
func iq4Search(xb []float32, L []uint8) float32 {
	const ntry = 7
	var weight [32]float32
	var amax, vmax float32
	for j, v := range xb {
		weight[j] = float32(v * v)
		if ax := absf(v); ax > amax {
			amax, vmax = ax, v
		}
	}
	if amax < groupMaxEps {
		clear(L[:32])
		return 0
	}
	v0 := float32(kvaluesIQ4NL[0])
	d := -vmax / v0
	id := 1 / d
	var sumqx, sumq2 float32
	for j, x := range xb {
		l := bestIndexIQ4(id * x)
		L[j] = l
		q := float32(kvaluesIQ4NL[l])
		sumqx += float32(weight[j] * q * x)
		sumq2 += float32(weight[j] * q * q)
	}
	d = 0
	if sumq2 > 0 {
		d = sumqx / sumq2
	}
	best := d * sumqx
	for itry := -ntry; itry <= ntry; itry++ {
		id = float32(itry+int(kvaluesIQ4NL[0])) / vmax
		sumqx, sumq2 = 0, 0
		for j, x := range xb {
			q := float32(kvaluesIQ4NL[bestIndexIQ4(id*x)])
			sumqx += float32(weight[j] * q * x)
			sumq2 += float32(weight[j] * q * q)
		}
		if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
			d = sumqx / sumq2
			best = d * sumqx
		}
	}
	return d
}

// packIQ4 stores the 32 level indices L of one sub-block as nibbles.
func packIQ4(qs []byte, L []uint8) {
	for j := range 16 {
		qs[j] = L[j] | L[16+j]<<4
	}
}

// quantizeIQ4_NL is the IQ4_NL quantiser of ggml_quantize_chunk (what
// llama-quantize uses) without an importance matrix: a 15-candidate scale
// search per block (quantize_row_iq4_nl_impl with ntry = 7), so it is not
// ggml's row reference quantiser (which does not search).
func quantizeIQ4_NL(dst []byte, src []float32) {
	var L [qk]uint8
	for b := 0; b < len(src)/qk; b++ {
		x := src[b*qk : (b+1)*qk]
		blk := dst[b*iq4_NLBytes : (b+1)*iq4_NLBytes]
		d := iq4Search(x, L[:])
		putFP16(blk, d)
		var id float32
		if d != 0 {
			id = 1 / d
		}
		for j, v := range x {
			L[j] = bestIndexIQ4(id * v)
		}
		packIQ4(blk[2:], L[:])
	}
}

package quant

// TQ2_0: super-blocks of 256 ternary weights, 66 bytes, 2.0625 bits per
// weight: 2 bits per weight holding t in 0..2 (weight t-1).
//
//	offset size
//	0      64   qs[64]   bits 2l..2l+1 of qs[32h+m] are weight 128h+32l+m
//	64     2    d        fp16 scale
//
// x = (t-1)*d. Activation format: Q8_K.
const tq2_0Bytes = qkK/4 + 2

var _ [0]struct{} = [tq2_0Bytes - 66]struct{}{} // size check

func dequantizeTQ2_0(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qkK; b++ {
		blk := src[b*tq2_0Bytes : (b+1)*tq2_0Bytes]
		d := fp16At(blk[64:])
		y := dst[b*qkK : (b+1)*qkK]
		for i := range qkK {
			t := int32(blk[32*(i/128)+i%32]>>(2*(i%128/32))) & 3
			y[i] = float32(t-1) * d
		}
	}
}

// dotTQ2_0Ref is ggml_vec_dot_tq2_0_q8_K of ggml's AVX2 build, the order
// llama.cpp runs on x86. Its VPMADDUBSW sums t·y (t in 0..2) per pair of
// bytes of each run of 32 weights, adds the runs in int16 lanes, takes off
// the activation's block sums (the -1 of t-1) and adds lane pairs
// (VPMADDWD): lane L of a block is Σ t·y over the weights whose index
// modulo 32 is 4L..4L+3, minus bsums 2L and 2L+1, exactly. Each lane is
// converted to float32, multiplied by d = yd·fp16(d) and added to its own
// running sum (two roundings: VMULPS, VADDPS), the eight sums reduced as
// hsum_float_8 (laneSum8).
func dotTQ2_0Ref(n int, w, act []byte) float32 {
	var acc [8]float32
	for b := 0; b < n/qkK; b++ {
		x := w[b*tq2_0Bytes : (b+1)*tq2_0Bytes]
		yd, q8, bsums := q8KBlock(act[b*q8_KBytes : (b+1)*q8_KBytes])
		var lanes [8]int32
		for i := range qkK {
			t := int32(x[32*(i/128)+i%32]>>(2*(i%128/32))) & 3
			lanes[i%32/4] += int32(int8(q8[i])) * t
		}
		d := yd * fp16At(x[64:])
		for k := range acc {
			v := lanes[k] - (bsum(bsums, 2*k) + bsum(bsums, 2*k+1))
			acc[k] += float32(float32(v) * d)
		}
	}
	return laneSum8(&acc)
}

// quantizeTQ2_0 is ggml's quantize_row_tq2_0_ref: d = max|x|, each weight
// rounded (half away from zero) to -1, 0 or 1 of d.
func quantizeTQ2_0(dst []byte, src []float32) {
	for b := 0; b < len(src)/qkK; b++ {
		x := src[b*qkK : (b+1)*qkK]
		blk := dst[b*tq2_0Bytes : (b+1)*tq2_0Bytes]
		id := ternaryScale(x, blk[64:])
		for h := range 2 {
			for m := range 32 {
				var q byte
				for l := range 4 {
					t := int32(roundf(x[128*h+32*l+m]*id)) + 1
					q |= byte(t&3) << (2 * l)
				}
				blk[32*h+m] = q
			}
		}
	}
}

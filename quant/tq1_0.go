package quant

// TQ1_0: super-blocks of 256 ternary weights, 54 bytes, 1.6875 bits per
// weight. Five trits are packed per byte as a base-3 fixed-point fraction:
// byte q holds trits t0..t4 (each 0..2, weight t-1) as
// q = ceil((t0*81 + t1*27 + t2*9 + t3*3 + t4) * 256 / 243), and trit n is
// the integer part of 3 * frac(q * 3^n / 256), i.e. ((uint8(q*3^n))*3) >> 8.
//
//	offset size
//	0      48   qs[48]   qs[0..31]: trit n of qs[m] is weight 32n+m (n < 5);
//	                     qs[32..47]: trit n of qs[32+m] is weight 160+16n+m
//	48     4    qh[4]    4 trits each: trit n of qh[j] is weight 240+4n+j
//	52     2    d        fp16 scale
//
// x = (t-1)*d. Activation format: Q8_K.
const tq1_0Bytes = (qkK-4*qkK/64)/5 + qkK/64 + 2

var _ [0]struct{} = [tq1_0Bytes - 54]struct{}{} // size check

// pow3 holds 3^n for the trit extraction.
var pow3 = [5]uint8{1, 3, 9, 27, 81}

// trit returns trit n (0..2) of a TQ1_0 byte.
func trit(q uint8, n int) int32 {
	return int32(uint16(q*pow3[n]) * 3 >> 8)
}

// tq1Trit returns the trit (0..2) of weight i of a TQ1_0 block.
func tq1Trit(blk []byte, i int) int32 {
	switch {
	case i < 160:
		return trit(blk[i%32], i/32)
	case i < 240:
		return trit(blk[32+(i-160)%16], (i-160)/16)
	default:
		return trit(blk[48+(i-240)%4], (i-240)/4)
	}
}

func dequantizeTQ1_0(dst []float32, src []byte) {
	for b := 0; b < len(dst)/qkK; b++ {
		blk := src[b*tq1_0Bytes : (b+1)*tq1_0Bytes]
		d := fp16At(blk[52:])
		y := dst[b*qkK : (b+1)*qkK]
		for i := range qkK {
			y[i] = float32(tq1Trit(blk, i)-1) * d
		}
	}
}

// dotTQ1_0Ref is ggml_vec_dot_tq1_0_q8_K of ggml's AVX2 build, the order
// llama.cpp runs on x86, which is dotTQ2_0Ref's: its VPMADDUBSW runs meet
// the activation 32 weights at a time in weight order, so lane L of a
// block is Σ t·y over the weights whose index modulo 32 is 4L..4L+3, minus
// bsums 2L and 2L+1 (exact in int16: at most 8·512 + 2048), converted,
// multiplied by d = yd·fp16(d) and added to its own running sum (two
// roundings), the eight sums reduced as hsum_float_8 (laneSum8).
func dotTQ1_0Ref(n int, w, act []byte) float32 {
	var acc [8]float32
	for b := 0; b < n/qkK; b++ {
		x := w[b*tq1_0Bytes : (b+1)*tq1_0Bytes]
		yd, q8, bsums := q8KBlock(act[b*q8_KBytes : (b+1)*q8_KBytes])
		var lanes [8]int32
		for i := range qkK {
			lanes[i%32/4] += tq1Trit(x, i) * int32(int8(q8[i]))
		}
		d := yd * fp16At(x[52:])
		for k := range acc {
			v := lanes[k] - (bsum(bsums, 2*k) + bsum(bsums, 2*k+1))
			acc[k] += float32(float32(v) * d)
		}
	}
	return laneSum8(&acc)
}

// dotTQ1_0Go, the portable kernel, computes the same as dotTQ1_0Ref (bit
// for bit: the lanes are exact integers) walking the bytes in storage
// order.
func dotTQ1_0Go(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*tq1_0Bytes], act[:nb*q8_KBytes]
	var acc [8]float32
	for b := range nb {
		x := (*[tq1_0Bytes]byte)(w[b*tq1_0Bytes:])
		yb := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		yd, _, bsums := q8KBlock(yb[:])
		y := (*[qkK]byte)(yb[4:])
		var lanes [8]int32
		for m := range 32 {
			q := x[m]
			var s int32
			for t := range 5 {
				s += trit(q, t) * int32(int8(y[32*t+m]))
			}
			lanes[m/4] += s
		}
		for m := range 16 {
			q := x[32+m]
			for t := range 5 {
				i := 160 + 16*t + m
				lanes[i%32/4] += trit(q, t) * int32(int8(y[i]))
			}
		}
		for j := range 4 {
			q := x[48+j]
			for t := range 4 {
				i := 240 + 4*t + j
				lanes[i%32/4] += trit(q, t) * int32(int8(y[i]))
			}
		}
		d := yd * fp16At(x[52:])
		for k := range acc {
			v := lanes[k] - (bsum(bsums, 2*k) + bsum(bsums, 2*k+1))
			acc[k] += float32(float32(v) * d)
		}
	}
	return laneSum8(&acc)
}

// quantizeTQ1_0 is ggml's quantize_row_tq1_0_ref: d = max|x|, each weight
// rounded (half away from zero) to -1, 0 or 1 of d.
func quantizeTQ1_0(dst []byte, src []float32) {
	for b := 0; b < len(src)/qkK; b++ {
		x := src[b*qkK : (b+1)*qkK]
		blk := dst[b*tq1_0Bytes : (b+1)*tq1_0Bytes]
		id := ternaryScale(x, blk[52:])
		t := func(i int) uint8 { return uint8(int32(roundf(x[i]*id)) + 1) }
		pack := func(q uint8) byte { return byte((uint16(q)*256 + 242) / 243) }
		for m := range 32 {
			var q uint8
			for n := range 5 {
				q = q*3 + t(32*n+m)
			}
			blk[m] = pack(q)
		}
		for m := range 16 {
			var q uint8
			for n := range 5 {
				q = q*3 + t(160+16*n+m)
			}
			blk[32+m] = pack(q)
		}
		for j := range 4 {
			var q uint8
			for n := range 4 {
				q = q*3 + t(240+4*n+j)
			}
			blk[48+j] = pack(q * 3) // the first trit is the most significant
		}
	}
}

// ternaryScale stores d = max|x| as fp16 at dst and returns 1/d (0 if d is 0).
func ternaryScale(x []float32, dst []byte) float32 {
	var amax float32
	for _, v := range x {
		amax = max(amax, absf(v))
	}
	putFP16(dst, amax)
	if amax == 0 {
		return 0
	}
	return 1 / amax
}

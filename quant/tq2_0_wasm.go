//go:build goexperiment.simd

package quant

import "simd/archsimd"

// The wasm SIMD128 Dot kernel of TQ2_0 (kernels_wasm.go; its DotRows and
// DotRowsN kernels are below, their loops in tq_wasm.s); dotTQ2_0Ref is their
// portable twin. i16x8.extmul multiplies t (≤ 3, the 2-bit field) and y;
// the products of the eight runs of 32 weights are added position by
// position in int16 lanes (at most 8·3·128), the four positions of each lane of the
// reference then summed by a transposing sum (hsum4), and the lane pairs
// of the block sums taken off; the float work is the reference's, in
// vector lanes.

func dotTQ2_0SIMD128(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*tq2_0Bytes], act[:nb*q8_KBytes]
	m3 := archsimd.BroadcastUint8x16(3)
	var lo, hi archsimd.Float32x4 // the running sums 0-3, 4-7
	for b := range nb {
		x := (*[tq2_0Bytes]byte)(w[b*tq2_0Bytes:])
		y := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		var p0, p1, p2, p3 archsimd.Int16x8 // positions 0-7, 8-15, 16-23, 24-31 of a run
		for h := range 2 {
			q0, q1 := loadU8((*[16]byte)(x[32*h:])), loadU8((*[16]byte)(x[32*h+16:]))
			for l := range 4 {
				t0 := q0.ShiftAllRight(uint64(2 * l)).And(m3).BitsToInt8()
				t1 := q1.ShiftAllRight(uint64(2 * l)).And(m3).BitsToInt8()
				y0, y1 := loadI8((*[16]byte)(y[4+128*h+32*l:])), loadI8((*[16]byte)(y[4+128*h+32*l+16:]))
				p0, p1 = p0.Add(t0.MulWidenLo(y0)), p1.Add(t0.MulWidenHi(y0))
				p2, p3 = p2.Add(t1.MulWidenLo(y1)), p3.Add(t1.MulWidenHi(y1))
			}
		}
		l03 := hsum4(p0.ExtendLo4ToInt32(), p0.ExtendHi4ToInt32(), p1.ExtendLo4ToInt32(), p1.ExtendHi4ToInt32())
		l47 := hsum4(p2.ExtendLo4ToInt32(), p2.ExtendHi4ToInt32(), p3.ExtendLo4ToInt32(), p3.ExtendHi4ToInt32())
		l03 = l03.Sub(pairSums16(loadU8((*[16]byte)(y[4+qkK:]))))
		l47 = l47.Sub(pairSums16(loadU8((*[16]byte)(y[4+qkK+16:]))))
		d := archsimd.BroadcastFloat32x4(f32At(y[:]) * fp16At(x[64:]))
		lo = lo.Add(l03.ConvertToFloat32().Mul(d))
		hi = hi.Add(l47.ConvertToFloat32().Mul(d))
	}
	var acc [8]float32
	lo.StoreArray((*[4]float32)(acc[:4]))
	hi.StoreArray((*[4]float32)(acc[4:]))
	return laneSum8(&acc)
}

// pairSums16 returns the sums of the int16 pairs (2k, 2k+1) of the eight
// little-endian int16 values in b, as int32 lanes.
func pairSums16(b archsimd.Uint8x16) archsimd.Int32x4 {
	w := b.ReshapeToUint32s().BitsToInt32()
	return w.ShiftAllLeft(16).ShiftAllRight(16).Add(w.ShiftAllRight(16))
}

func dotNTQ2_0SIMD128(n int, w []byte, acts [][]byte, out []float32) {
	dotEach(dotTQ2_0SIMD128, n, w, acts, out)
}

//go:noescape
func tq2Rows(x, yp, y *byte, yd, tab *float32, nb, rows int, out *float32)

// dotRowsTQ2_0SIMD128 and dotRowsNTQ2_0SIMD128 are TQ2_0's DotRows and
// DotRowsN kernels (q8krows_wasm.go: tq2Rows, tq2RowsN in tq_wasm.s).
func dotRowsTQ2_0SIMD128(n int, w, act []byte, out []float32) {
	q8KRows(TQ2_0, dotTQ2_0SIMD128, n, w, act, out)
}

//go:noescape
func tq2RowsN(x, yp *byte, yd *float32, tab *float32, acc *int32, nb, rows, acts int, out *float32)

func dotRowsNTQ2_0SIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	q8KRowsN(TQ2_0, dotNTQ2_0SIMD128, n, w, acts, outs, at)
}

//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"simd/archsimd"
)

// The wasm SIMD128 Dot kernel of TQ1_0 (kernels_wasm.go; its DotRows and
// DotRowsN kernels are below, their loops in tq_wasm.s); dotTQ1_0Ref is their
// portable twin. The trits come out of the bytes as in dotTQ1_0AVX2 (see
// there): trit n of q is 0, 1 or 2 as uint8(q·3ⁿ) is at most 85, at most
// 170, or more — two unsigned compares. i16x8.extmul multiplies t and y,
// and the products are added position by position (weight index modulo
// 32) in int16 lanes, as dotTQ2_0SIMD128 does: positions 0-15 from qs[0..15]
// and trits 0, 2, 4 of qs[32..47], positions 16-31 from qs[16..31], trits
// 1 and 3 of qs[32..47] and the 16 trits of qh (at most 8·2·128 per
// position). The four positions of each lane of the reference are then
// summed by a transposing sum (hsum4) and the lane pairs of the block sums
// taken off; the float work is the reference's, in vector lanes.

func dotTQ1_0SIMD128(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*tq1_0Bytes], act[:nb*q8_KBytes]
	var lo, hi archsimd.Float32x4 // the running sums 0-3, 4-7
	for b := range nb {
		x := (*[tq1_0Bytes]byte)(w[b*tq1_0Bytes:])
		y := (*[q8_KBytes]byte)(act[b*q8_KBytes:])
		var p0, p1, p2, p3 archsimd.Int16x8 // positions 0-7, 8-15, 16-23, 24-31 of a run
		q0, q1 := loadU8((*[16]byte)(x[:16])), loadU8((*[16]byte)(x[16:32]))
		for t := range 5 {
			a0, a1 := tq1Products(q0, (*[16]byte)(y[4+32*t:]))
			b0, b1 := tq1Products(q1, (*[16]byte)(y[4+32*t+16:]))
			p0, p1, p2, p3 = p0.Add(a0), p1.Add(a1), p2.Add(b0), p3.Add(b1)
			q0, q1 = q0.Add(q0).Add(q0), q1.Add(q1).Add(q1)
		}
		h := loadU8((*[16]byte)(x[32:48]))
		for t := range 5 {
			a0, a1 := tq1Products(h, (*[16]byte)(y[4+160+16*t:]))
			if t%2 == 0 {
				p0, p1 = p0.Add(a0), p1.Add(a1)
			} else {
				p2, p3 = p2.Add(a0), p3.Add(a1)
			}
			h = h.Add(h).Add(h)
		}
		a0, a1 := tq1Products(tq1High(binary.LittleEndian.Uint32(x[48:])), (*[16]byte)(y[4+240:]))
		p2, p3 = p2.Add(a0), p3.Add(a1)
		l03 := hsum4(p0.ExtendLo4ToInt32(), p0.ExtendHi4ToInt32(), p1.ExtendLo4ToInt32(), p1.ExtendHi4ToInt32())
		l47 := hsum4(p2.ExtendLo4ToInt32(), p2.ExtendHi4ToInt32(), p3.ExtendLo4ToInt32(), p3.ExtendHi4ToInt32())
		l03 = l03.Sub(pairSums16(loadU8((*[16]byte)(y[4+qkK:]))))
		l47 = l47.Sub(pairSums16(loadU8((*[16]byte)(y[4+qkK+16:]))))
		d := archsimd.BroadcastFloat32x4(f32At(y[:]) * fp16At(x[52:]))
		lo = lo.Add(l03.ConvertToFloat32().Mul(d))
		hi = hi.Add(l47.ConvertToFloat32().Mul(d))
	}
	var acc [8]float32
	lo.StoreArray((*[4]float32)(acc[:4]))
	hi.StoreArray((*[4]float32)(acc[4:]))
	return laneSum8(&acc)
}

// tq1Products returns the products of the 16 trits of q (its bytes already
// multiplied by their 3ⁿ) and the activations y, positions 0-7 and 8-15.
func tq1Products(q archsimd.Uint8x16, y *[16]byte) (lo, hi archsimd.Int16x8) {
	var t archsimd.Int8x16
	t = t.Sub(q.Greater(archsimd.BroadcastUint8x16(85)).ToInt8x16())
	t = t.Sub(q.Greater(archsimd.BroadcastUint8x16(170)).ToInt8x16())
	v := loadI8(y)
	return t.MulWidenLo(v), t.MulWidenHi(v)
}

func dotNTQ1_0SIMD128(n int, w []byte, acts [][]byte, out []float32) {
	dotEach(dotTQ1_0SIMD128, n, w, acts, out)
}

//go:noescape
func tq1Rows(x, yp, y *byte, yd, tab *float32, nb, rows int, out *float32)

//go:noescape
func tq1RowsN(x, yp *byte, yd *float32, tab *float32, acc *int32, nb, rows, acts int, out *float32)

// dotRowsTQ1_0SIMD128 and dotRowsNTQ1_0SIMD128 are TQ1_0's DotRows and
// DotRowsN kernels (q8krows_wasm.go: tq1Rows, tq1RowsN in tq_wasm.s).
func dotRowsTQ1_0SIMD128(n int, w, act []byte, out []float32) {
	q8KRows(TQ1_0, dotTQ1_0SIMD128, n, w, act, out)
}

func dotRowsNTQ1_0SIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	q8KRowsN(TQ1_0, dotNTQ1_0SIMD128, n, w, acts, outs, at)
}

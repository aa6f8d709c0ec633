//go:build goexperiment.simd && amd64

package quant

import (
	"encoding/binary"
	"simd/archsimd"
)

// The native AVX2 DotRows kernels: one activation against consecutive
// weight rows (a matrix-vector product), bit-identical to Dot per row.
//
// Two things make them faster than Dot row by row. The activation is
// prepared once per call: its fp16 block scales are widened to float32
// into a stack array (and, for Q4_0, its 8·Σy block sums computed), so a
// row converts only its own scales. And four rows are summed at a time,
// each in a float32 lane: a row's terms must be added one by one in block
// order (the reference's running sum, a chain of dependent additions that
// takes longer than a block's integer work), and with four rows in the
// lanes of one vector the chain is shared. The terms of eight blocks of
// four rows are computed as in Dot, then transposed so that one vector
// addition adds block j's term of every row.
//
// Rows whose blocks do not come in eights, activations longer than
// rowsMaxBlocks blocks and the last len(out)%4 rows go through Dot.

// rowsMaxBlocks bounds the activation blocks a DotRows kernel prepares on
// its stack (Q4_0, Q8_0: 16384 columns).
const rowsMaxBlocks = 512

// No DotRows kernels for the K-quants: their activations' scales are
// float32 already and a row's chain of additions is a block of 256.
var dotRowsQ4_K, dotRowsQ6_K func(n int, w, act []byte, out []float32)

// dotRowsQ4_0 is dotQ4_0 over consecutive rows.
func dotRowsQ4_0(n int, w, act []byte, out []float32) {
	nb := n / qk
	rowBytes := nb * q4_0Bytes
	if !hasAVX2 || nb%8 != 0 || nb > rowsMaxBlocks || len(out) < 4 {
		dotRows(dotQ4_0, n, rowBytes, w, act, out)
		return
	}
	act = act[:nb*q8_0Bytes]
	w = w[:len(out)*rowBytes]
	// the activation's scales and, per block, 8·Σy (the -8 of the nibbles)
	var (
		fy [rowsMaxBlocks]float32
		sy [rowsMaxBlocks]int32
	)
	eight, ones := archsimd.BroadcastUint8x32(8), archsimd.BroadcastInt16x16(1)
	for g := 0; g < nb; g += 8 {
		yg := (*[8 * q8_0Bytes]byte)(act[g*q8_0Bytes:])
		d := func(j int) archsimd.Int32x8 {
			return eight.DotProductPairsSaturated(load32((*[32]byte)(yg[q8_0Bytes*j+2:])).BitsToInt8()).DotProductPairs(ones)
		}
		hsum8x8(d(0), d(1), d(2), d(3), d(4), d(5), d(6), d(7)).StoreArray((*[8]int32)(sy[g:]))
		for j := range 8 {
			fy[g+j] = FP16ToFP32(binary.LittleEndian.Uint16(yg[q8_0Bytes*j:]))
		}
	}
	var terms [4][rowsMaxBlocks]float32 // four rows' block terms
	r := 0
	for ; r+4 <= len(out); r += 4 {
		for k := range 4 {
			x := w[(r+k)*rowBytes : (r+k+1)*rowBytes]
			for g := 0; g < nb; g += 8 {
				q4_0Terms8((*[8 * q4_0Bytes]byte)(x[g*q4_0Bytes:]), (*[8 * q8_0Bytes]byte)(act[g*q8_0Bytes:]), (*[8]float32)(fy[g:]), (*[8]int32)(sy[g:]), (*[8]float32)(terms[k][g:]))
			}
		}
		addRows4((*[4]float32)(out[r:]), &terms, nb)
	}
	for ; r < len(out); r++ {
		out[r] = dotQ4_0(n, w[r*rowBytes:(r+1)*rowBytes], act)
	}
}

// q4_0Terms8 sets p[j] to the term of block j of x and y,
// float32(isum)·float32(dx·dy) as the reference computes it (fy the
// blocks' dy, sy their 8·Σy). Not inlined: the block pointers stay in
// registers and the loads take constant offsets.
//
//go:noinline
func q4_0Terms8(xg *[8 * q4_0Bytes]byte, yg *[8 * q8_0Bytes]byte, fy *[8]float32, sy *[8]int32, p *[8]float32) {
	m4 := archsimd.BroadcastUint8x16(0x0f)
	// block j's pair sums of q·y in int16 lanes (|·| ≤ 2·3840)
	d := func(j int) archsimd.Int16x8 {
		q := load16((*[16]byte)(xg[q4_0Bytes*j+2:]))
		lo := q.And(m4).DotProductPairsSaturated(load16((*[16]byte)(yg[q8_0Bytes*j+2:])).BitsToInt8())
		hi := q.ReshapeToUint16s().ShiftAllRight(4).ReshapeToUint8s().And(m4).DotProductPairsSaturated(load16((*[16]byte)(yg[q8_0Bytes*j+18:])).BitsToInt8())
		return lo.Add(hi)
	}
	// two pairwise additions keep |·| ≤ 4·7680 < 2^15; VPMADDWD with ones
	// then gives each block's sum in an int32 lane
	ones := archsimd.BroadcastInt16x8(1)
	a := d(0).ConcatAddPairs(d(1)).ConcatAddPairs(d(2).ConcatAddPairs(d(3))).DotProductPairs(ones)
	b := d(4).ConcatAddPairs(d(5)).ConcatAddPairs(d(6).ConcatAddPairs(d(7))).DotProductPairs(ones)
	var s archsimd.Int32x8
	s = s.SetLo(a).SetHi(b).Sub(archsimd.LoadInt32x8Array(sy))
	fx, ok := halvesToFloats(q4_0Halves8(xg))
	if !ok { // a zero, subnormal, infinite or NaN scale
		fx = rowsHalves(xg[:], q4_0Bytes)
	}
	s.ConvertToFloat32().Mul(fx.Mul(archsimd.LoadFloat32x8Array(fy))).StoreArray(p)
}

// dotRowsQ8_0 is dotQ8_0 over consecutive rows. When no activation quant
// is -128 (always, for activations quantized by quantizeQ8_0), a block's
// products are VPMADDUBSW's of |x| and y·sign(x): each pair sum is at most
// 2·128·127 in magnitude, clear of saturation.
func dotRowsQ8_0(n int, w, act []byte, out []float32) {
	nb := n / qk
	rowBytes := nb * q8_0Bytes
	if !hasAVX2 || nb%8 != 0 || nb > rowsMaxBlocks || len(out) < 4 {
		dotRows(dotQ8_0, n, rowBytes, w, act, out)
		return
	}
	act = act[:nb*q8_0Bytes]
	w = w[:len(out)*rowBytes]
	var fy [rowsMaxBlocks]float32
	m128 := archsimd.BroadcastInt8x32(-128)
	for b := range nb {
		y := (*[q8_0Bytes]byte)(act[b*q8_0Bytes:])
		if load32((*[32]byte)(y[2:])).BitsToInt8().Equal(m128).ToBits() != 0 {
			dotRows(dotQ8_0, n, rowBytes, w, act, out)
			return
		}
		fy[b] = FP16ToFP32(binary.LittleEndian.Uint16(y[:]))
	}
	var terms [4][rowsMaxBlocks]float32 // four rows' block terms
	r := 0
	for ; r+4 <= len(out); r += 4 {
		for k := range 4 {
			x := w[(r+k)*rowBytes : (r+k+1)*rowBytes]
			for g := 0; g < nb; g += 8 {
				q8_0Terms8((*[8 * q8_0Bytes]byte)(x[g*q8_0Bytes:]), (*[8 * q8_0Bytes]byte)(act[g*q8_0Bytes:]), (*[8]float32)(fy[g:]), (*[8]float32)(terms[k][g:]))
			}
		}
		addRows4((*[4]float32)(out[r:]), &terms, nb)
	}
	for ; r < len(out); r++ {
		out[r] = dotQ8_0(n, w[r*rowBytes:(r+1)*rowBytes], act)
	}
}

// q8_0Terms8 is q4_0Terms8 for Q8_0 rows (no quant of yg is -128).
//
//go:noinline
func q8_0Terms8(xg *[8 * q8_0Bytes]byte, yg *[8 * q8_0Bytes]byte, fy *[8]float32, p *[8]float32) {
	ones := archsimd.BroadcastInt16x16(1)
	d := func(j int) archsimd.Int32x8 {
		x := load32((*[32]byte)(xg[q8_0Bytes*j+2:])).BitsToInt8()
		y := load32((*[32]byte)(yg[q8_0Bytes*j+2:])).BitsToInt8()
		return x.Abs().AsUint8x32().DotProductPairsSaturated(y.MulSign(x)).DotProductPairs(ones)
	}
	s := hsum8x8(d(0), d(1), d(2), d(3), d(4), d(5), d(6), d(7))
	fx, ok := halvesToFloats(halves8(xg))
	if !ok { // a zero, subnormal, infinite or NaN scale
		fx = rowsHalves(xg[:], q8_0Bytes)
	}
	s.ConvertToFloat32().Mul(fx.Mul(archsimd.LoadFloat32x8Array(fy))).StoreArray(p)
}

// rowsHalves returns the leading fp16 scales of eight consecutive blocks
// of size bytes in g, widened by FP16ToFP32 (any value).
func rowsHalves(g []byte, size int) archsimd.Float32x8 {
	var f [8]float32
	for j := range f {
		f[j] = FP16ToFP32(binary.LittleEndian.Uint16(g[size*j:]))
	}
	return archsimd.LoadFloat32x8Array(&f)
}

// addRows4 sets out[k] to the sum of terms[k][:nb], added one at a time
// in order (a row's running sum), for four rows at once.
func addRows4(out *[4]float32, terms *[4][rowsMaxBlocks]float32, nb int) {
	var acc archsimd.Float32x4
	for g := 0; g < nb; g += 8 {
		p := func(k int) archsimd.Float32x8 { return archsimd.LoadFloat32x8Array((*[8]float32)(terms[k][g:])) }
		acc = addColumns4(acc, p(0), p(1), p(2), p(3))
	}
	acc.StoreArray(out)
}

// addColumns4 returns acc plus, lane k, the eight lanes of pk added one at
// a time in lane order (float32 additions, as a row's running sum): the
// 4×8 terms are transposed so that each addition adds one block's term of
// all four rows.
func addColumns4(acc archsimd.Float32x4, p0, p1, p2, p3 archsimd.Float32x8) archsimd.Float32x4 {
	i0, i1, i2, i3 := p0.AsInt32x8(), p1.AsInt32x8(), p2.AsInt32x8(), p3.AsInt32x8()
	t0, t1 := i0.InterleaveLoGrouped(i1).AsFloat32x8(), i0.InterleaveHiGrouped(i1).AsFloat32x8() // p0,p1 lanes 0,1 | 4,5; 2,3 | 6,7
	t2, t3 := i2.InterleaveLoGrouped(i3).AsFloat32x8(), i2.InterleaveHiGrouped(i3).AsFloat32x8()
	c04 := t0.ConcatPermuteScalarsGrouped(0, 1, 4, 5, t2) // lane j of rows 0..3 | lane j+4
	c15 := t0.ConcatPermuteScalarsGrouped(2, 3, 6, 7, t2)
	c26 := t1.ConcatPermuteScalarsGrouped(0, 1, 4, 5, t3)
	c37 := t1.ConcatPermuteScalarsGrouped(2, 3, 6, 7, t3)
	acc = acc.Add(c04.GetLo()).Add(c15.GetLo()).Add(c26.GetLo()).Add(c37.GetLo())
	return acc.Add(c04.GetHi()).Add(c15.GetHi()).Add(c26.GetHi()).Add(c37.GetHi())
}

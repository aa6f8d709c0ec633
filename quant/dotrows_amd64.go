//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"simd/archsimd"
)

// The native AVX2 DotRows kernels: one activation against consecutive
// weight rows (a matrix-vector product), bit-identical to Dot per row.
//
// Two things make them faster than Dot row by row. The activation is
// prepared once per call: its fp16 block scales are widened to float32 into
// a stack array (and, for Q4_0, its 8·Σy block sums computed and its quants
// laid out as the row kernel's vectors take them), so a row converts only
// its own scales. And eight (Q8_0: four) rows' running sums
// are added together, each in a float32 lane: a row's terms must be added
// one by one in block order (the reference's running sum, a chain of
// dependent additions that takes longer than a block's integer work), and
// with the rows in the lanes of one vector the chain is shared. Each row's
// block terms are computed first, in row order (the weights stream through
// memory in order: interleaving the rows' loads, or cutting the rows into
// chunks, made decode slower), into a stack array; then eight terms of the
// eight (four) rows at a time are transposed so that one vector addition
// adds block j's term of every row.
//
// Rows whose blocks do not come in eights, activations longer than
// rowsMaxBlocks blocks, calls with fewer than eight (four) rows and the
// last len(out)%8 (%4) rows go through Dot.

// rowsMaxBlocks bounds the blocks of a row a DotRows kernel keeps on its
// stack (Q4_0, Q8_0: 16384 columns; the activation's layout and the rows'
// terms take 10 to 40 KB).
const rowsMaxBlocks = 512

// The K-quants' DotRows kernels are Dot per row in hand-written assembly:
// their activations' scales are float32 already and a row's chain of
// additions is a block of 256 (an eight-rows kernel sharing the chain, as
// below, measured no faster than Dot per row: the blocks' integer work
// dominates); in archsimd that work paid for a call and spilled vectors
// per block.

// dotRowsQ6_KAVX2 is dotQ6_KAVX2 over consecutive rows, in q6_KRows
// (k_rows_amd64.s), as dotRowsQ4_KAVX2.
func dotRowsQ6_KAVX2(n int, w, act []byte, out []float32) {
	nb := n / qkK
	if nb == 0 || len(out) == 0 {
		dotRows(dotQ6_KAVX2, n, nb*q6_KBytes, w, act, out)
		return
	}
	w, act = w[:len(out)*nb*q6_KBytes], act[:nb*q8_KBytes]
	q6_KRows(nb, &w[0], &act[0], &out[0], len(out), &q6KRowsConsts)
}

// q6_KRows sets out[r] to the dot of row r of the Q6_K rows at w (nb
// blocks each) with the Q8_K activation y, for r < rows.
//
//go:noescape
func q6_KRows(nb int, w, y *byte, out *float32, rows int, k *[6][32]byte)

// q6KRowsConsts are q6_KRows's constants: q6KScaleShuffle, the low-nibble
// mask and the mask of the two high bits.
var q6KRowsConsts = func() (t [6][32]byte) {
	for k := range 4 {
		for i, v := range q6KScaleShuffle[k] {
			t[k][i] = byte(v)
		}
	}
	for i := range 32 {
		t[4][i], t[5][i] = 0x0f, 0x30
	}
	return t
}()

// dotRowsQ4_KAVX2 is dotQ4_KAVX2 over consecutive rows, in q4_KRows
// (k_rows_amd64.s): the same operations, without dotQ4_KAVX2's per-block
// calls and spills.
func dotRowsQ4_KAVX2(n int, w, act []byte, out []float32) {
	nb := n / qkK
	if nb == 0 || len(out) == 0 {
		dotRows(dotQ4_KAVX2, n, nb*q4_KBytes, w, act, out)
		return
	}
	w, act = w[:len(out)*nb*q4_KBytes], act[:nb*q8_KBytes]
	q4_KRows(nb, &w[0], &act[0], &out[0], len(out), &q4KRowsConsts)
}

// q4_KRows sets out[r] to the dot of row r of the Q4_K rows at w (nb
// blocks each) with the Q8_K activation y, for r < rows.
//
//go:noescape
func q4_KRows(nb int, w, y *byte, out *float32, rows int, k *[10][32]byte)

// q4KRowsConsts are q4_KRows's constants: the VPSHUFB patterns putting
// scale k in every int16 lane (k < 8), q4KMinShuffle, the nibble mask.
var q4KRowsConsts = func() (t [10][32]byte) {
	for k := range 8 {
		for i := range 16 {
			t[k][2*i], t[k][2*i+1] = byte(k), 0xff
		}
	}
	for i, v := range q4KMinShuffle {
		t[8][i] = byte(v)
	}
	for i := range t[9] {
		t[9][i] = 0x0f
	}
	return t
}()

// dotRowsQ4_0AVX2 is dotQ4_0AVX2 over consecutive rows. The activation is laid
// out once per call for q4_0RowTerms (q4_0Group), whose vectors hold two
// blocks each: block j in the low 128-bit half and block j+4 in the high
// half, so that one VPMADDUBSW multiplies 32 nibbles of two blocks.
func dotRowsQ4_0AVX2(n int, w, act []byte, out []float32) {
	nb := n / qk
	rowBytes := nb * q4_0Bytes
	if nb%8 != 0 || nb > rowsMaxBlocks || len(out) < 8 {
		dotRows(dotQ4_0AVX2, n, rowBytes, w, act, out)
		return
	}
	act = act[:nb*q8_0Bytes]
	w = w[:len(out)*rowBytes]
	var yp [rowsMaxBlocks / 8]q4_0Group
	for g := range nb / 8 {
		yp[g].set((*[8 * q8_0Bytes]byte)(act[g*8*q8_0Bytes:]))
	}
	var terms [8][rowsMaxBlocks]float32 // eight rows' block terms
	r := 0
	for ; r+8 <= len(out); r += 8 {
		for k := range 8 {
			q4_0RowTerms(w[(r+k)*rowBytes:(r+k+1)*rowBytes], yp[:nb/8], terms[k][:nb])
		}
		addRows8((*[8]float32)(out[r:]), &terms, nb)
	}
	for ; r < len(out); r++ {
		out[r] = dotQ4_0AVX2(n, w[r*rowBytes:(r+1)*rowBytes], act)
	}
}

// q4_0Group is a group of eight Q8_0 activation blocks laid out for
// q4_0RowTerms.
type q4_0Group struct {
	// for p < 4: quants 0..15 of blocks p and p+4 (32 bytes), then their
	// quants 16..31 (32 bytes)
	q  [8 * 32]byte
	fy [8]float32 // the blocks' scales
	sy [8]int32   // 8·Σ of the blocks' quants (the -8 of the nibbles)
}

// set lays out the eight blocks yg.
func (yp *q4_0Group) set(yg *[8 * q8_0Bytes]byte) {
	eight, ones := archsimd.BroadcastUint8x32(8), archsimd.BroadcastInt16x16(1)
	d := func(j int) archsimd.Int32x8 {
		return eight.DotProductPairsSaturated(load32((*[32]byte)(yg[q8_0Bytes*j+2:])).BitsToInt8()).DotProductPairs(ones)
	}
	hsum8x8(d(0), d(1), d(2), d(3), d(4), d(5), d(6), d(7)).StoreArray(&yp.sy)
	for j := range 8 {
		yp.fy[j] = FP16ToFP32(binary.LittleEndian.Uint16(yg[q8_0Bytes*j:]))
	}
	for p := range 4 {
		dst := yp.q[64*p:]
		a, b := yg[q8_0Bytes*p+2:], yg[q8_0Bytes*(p+4)+2:]
		copy(dst[0:16], a[0:16])
		copy(dst[16:32], b[0:16])
		copy(dst[32:48], a[16:32])
		copy(dst[48:64], b[16:32])
	}
}

// q4_0RowTerms sets p[b] to the term of block b of the row x and the
// activation yp, float32(isum)·float32(dx·dy) as the reference computes
// it, for b < len(p) = 8·len(yp). The pair sums of two blocks' nibbles
// and quants (|·| ≤ 2·15·128) are added in int16 lanes four at a time
// (|·| ≤ 8·3840 < 2^15), then in pairs by VPMADDWD, which leaves a
// group's blocks in lane order. Not inlined: the loads take constant
// offsets from pointers kept in registers.
//
//go:noinline
func q4_0RowTerms(x []byte, yp []q4_0Group, p []float32) {
	m4, ones := archsimd.BroadcastUint8x32(0x0f), archsimd.BroadcastInt16x16(1)
	for len(yp) > 0 {
		xg, y, pg := (*[8 * q4_0Bytes]byte)(x), &yp[0], (*[8]float32)(p)
		// blocks j and j+4
		d := func(j int) archsimd.Int16x16 {
			var q archsimd.Uint8x32
			q = q.SetLo(load16((*[16]byte)(xg[q4_0Bytes*j+2:]))).SetHi(load16((*[16]byte)(xg[q4_0Bytes*(j+4)+2:])))
			lo := q.And(m4).DotProductPairsSaturated(load32((*[32]byte)(y.q[64*j:])).BitsToInt8())
			hi := q.ReshapeToUint16s().ShiftAllRight(4).ReshapeToUint8s().And(m4).DotProductPairsSaturated(load32((*[32]byte)(y.q[64*j+32:])).BitsToInt8())
			return lo.Add(hi)
		}
		u := d(0).ConcatAddPairsGrouped(d(1)).ConcatAddPairsGrouped(d(2).ConcatAddPairsGrouped(d(3)))
		s := u.DotProductPairs(ones).Sub(archsimd.LoadInt32x8Array(&y.sy))
		fx, ok := halvesToFloats(q4_0HalvesVec(xg))
		if !ok { // a zero, subnormal, infinite or NaN scale
			fx = rowsHalves(xg[:], q4_0Bytes)
		}
		s.ConvertToFloat32().Mul(fx.Mul(archsimd.LoadFloat32x8Array(&y.fy))).StoreArray(pg)
		x, yp, p = x[8*q4_0Bytes:], yp[1:], p[8:]
	}
}

// dotRowsQ8_0AVX2 is dotQ8_0AVX2 over consecutive rows. When no activation quant
// is -128 (always, for activations quantized by quantizeQ8_0), a block's
// products are VPMADDUBSW's of |x| and y·sign(x): each pair sum is at most
// 2·128·127 in magnitude, clear of saturation.
func dotRowsQ8_0AVX2(n int, w, act []byte, out []float32) {
	nb := n / qk
	rowBytes := nb * q8_0Bytes
	if nb%8 != 0 || nb > rowsMaxBlocks || len(out) < 4 {
		dotRows(dotQ8_0AVX2, n, rowBytes, w, act, out)
		return
	}
	act = act[:nb*q8_0Bytes]
	w = w[:len(out)*rowBytes]
	var fy [rowsMaxBlocks]float32
	m128 := archsimd.BroadcastInt8x32(-128)
	for b := range nb {
		y := (*[q8_0Bytes]byte)(act[b*q8_0Bytes:])
		if load32((*[32]byte)(y[2:])).BitsToInt8().Equal(m128).ToBits() != 0 {
			dotRows(dotQ8_0AVX2, n, rowBytes, w, act, out)
			return
		}
		fy[b] = FP16ToFP32(binary.LittleEndian.Uint16(y[:]))
	}
	// four rows at a time (eight: TinyLlama decode ~5% slower, unlike Q4_0's)
	var terms [4][rowsMaxBlocks]float32 // four rows' block terms
	r := 0
	for ; r+4 <= len(out); r += 4 {
		for k := range 4 {
			q8_0RowTerms(w[(r+k)*rowBytes:(r+k+1)*rowBytes], act, fy[:], terms[k][:nb])
		}
		addRows4((*[4]float32)(out[r:]), &terms, nb)
	}
	for ; r < len(out); r++ {
		out[r] = dotQ8_0AVX2(n, w[r*rowBytes:(r+1)*rowBytes], act)
	}
}

// q8_0RowTerms is q4_0RowTerms for a Q8_0 row (no quant of y is -128).
func q8_0RowTerms(x, y []byte, fy []float32, p []float32) {
	for g := 0; g+8 <= len(p); g += 8 {
		q8_0Terms8((*[8 * q8_0Bytes]byte)(x[g*q8_0Bytes:]), (*[8 * q8_0Bytes]byte)(y[g*q8_0Bytes:]), (*[8]float32)(fy[g:]), (*[8]float32)(p[g:]))
	}
}

// q8_0Terms8 sets p[j] to the term of block j of xg and yg (fy the
// blocks' dy). Not inlined: the block pointers stay in registers and the
// loads take constant offsets.
//
//go:noinline
func q8_0Terms8(xg, yg *[8 * q8_0Bytes]byte, fy, p *[8]float32) {
	ones := archsimd.BroadcastInt16x16(1)
	d := func(j int) archsimd.Int32x8 {
		xq := load32((*[32]byte)(xg[q8_0Bytes*j+2:])).BitsToInt8()
		yq := load32((*[32]byte)(yg[q8_0Bytes*j+2:])).BitsToInt8()
		return xq.Abs().AsUint8x32().DotProductPairsSaturated(yq.MulSign(xq)).DotProductPairs(ones)
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

// addRows8 sets out[k] to the sum of terms[k][:nb], added one at a time
// in order (float32 additions, a row's running sum), for eight rows at
// once: each group of eight terms of the eight rows is transposed so that
// one addition adds a block's term of every row. nb is a multiple of 8.
func addRows8(out *[8]float32, terms *[8][rowsMaxBlocks]float32, nb int) {
	var acc archsimd.Float32x8
	for g := 0; g < nb; g += 8 {
		p := func(k int) archsimd.Int32x8 {
			return archsimd.LoadFloat32x8Array((*[8]float32)(terms[k][g:])).AsInt32x8()
		}
		// lo, hi: lanes 0, 1 of a and of b, and 2, 3 (per 128-bit half)
		lo := func(a, b archsimd.Int32x8) archsimd.Float32x8 {
			return a.AsFloat32x8().ConcatPermuteScalarsGrouped(0, 1, 4, 5, b.AsFloat32x8())
		}
		hi := func(a, b archsimd.Int32x8) archsimd.Float32x8 {
			return a.AsFloat32x8().ConcatPermuteScalarsGrouped(2, 3, 6, 7, b.AsFloat32x8())
		}
		// per 128-bit half, rows 0..3 and 4..7 of terms j (lo) and j+4 (hi)
		a0, a1 := p(0).InterleaveLoGrouped(p(1)), p(0).InterleaveHiGrouped(p(1))
		a2, a3 := p(2).InterleaveLoGrouped(p(3)), p(2).InterleaveHiGrouped(p(3))
		u0, u1, u2, u3 := lo(a0, a2), hi(a0, a2), lo(a1, a3), hi(a1, a3)
		b0, b1 := p(4).InterleaveLoGrouped(p(5)), p(4).InterleaveHiGrouped(p(5))
		b2, b3 := p(6).InterleaveLoGrouped(p(7)), p(6).InterleaveHiGrouped(p(7))
		v0, v1, v2, v3 := lo(b0, b2), hi(b0, b2), lo(b1, b3), hi(b1, b3)
		acc = acc.Add(u0.ConcatPermute128Scalars(0, 2, v0)).Add(u1.ConcatPermute128Scalars(0, 2, v1))
		acc = acc.Add(u2.ConcatPermute128Scalars(0, 2, v2)).Add(u3.ConcatPermute128Scalars(0, 2, v3))
		acc = acc.Add(u0.ConcatPermute128Scalars(1, 3, v0)).Add(u1.ConcatPermute128Scalars(1, 3, v1))
		acc = acc.Add(u2.ConcatPermute128Scalars(1, 3, v2)).Add(u3.ConcatPermute128Scalars(1, 3, v3))
	}
	acc.StoreArray(out)
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

// q4_0HalvesVec is q4_0Halves8 with vector loads and interleaves (no
// scalar work): the 16 bytes from each block's start hold its scale in
// the first word.
func q4_0HalvesVec(g *[8 * q4_0Bytes]byte) archsimd.Uint32x8 {
	h := func(j int) archsimd.Uint16x8 { return load16((*[16]byte)(g[q4_0Bytes*j:])).AsUint16x8() }
	a := h(0).InterleaveLo(h(1)).AsUint32x4().InterleaveLo(h(2).InterleaveLo(h(3)).AsUint32x4())
	b := h(4).InterleaveLo(h(5)).AsUint32x4().InterleaveLo(h(6).InterleaveLo(h(7)).AsUint32x4())
	return a.AsUint64x2().InterleaveLo(b.AsUint64x2()).AsUint16x8().ExtendToUint32()
}

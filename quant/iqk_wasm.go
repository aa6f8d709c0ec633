//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"simd/archsimd"
)

// The wasm SIMD128 kernels of the codebook formats IQ3_S, IQ3_XXS,
// IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S and IQ1_M (kernels_wasm.go); their
// references (dotIQ3_SRef, …) are their portable twins. A block is decoded
// once into its signed weights, two 16-byte vectors per sub-block (the
// codebook points gathered from the grid, negated where their sign bits
// are set), and the scales 2s+1 in int16 lanes, one vector per 16
// weights. For each activation, i16x8.extmul multiplies weights and quants
// (|w·y| ≤ 62·128 fits int16), i32x4.extmul by the scale widens the
// products (≤ 7936·31), and eight int32 vectors, one per lane of
// iq3Lanes, add them position by position over the sub-blocks; a
// transposing sum (hsum4) then gives the eight lanes, scaled and added to
// eight float32 running sums in vector lanes as the references'
// iqAccumulate does, and reduced as laneSum8.

// iqSignConsts16 are the swizzle pattern sending byte k/8 of a 32-bit word
// to byte k (k < 16) and the mask of bit k%8 in byte k.
var iqSignConsts16 = func() (t [2][16]int8) {
	for k := range 16 {
		t[0][k], t[1][k] = int8(k/8), int8(uint8(1)<<(k%8))
	}
	return t
}()

// signed16 returns g with byte k negated where bit k of bits is set.
func signed16(g archsimd.Int8x16, bits uint32, shuf, bit archsimd.Int8x16) archsimd.Int8x16 {
	v := archsimd.BroadcastUint32x4(bits).ReshapeToUint8s().BitsToInt8().LookupOrZero(shuf)
	m := v.And(bit).Equal(bit).ToInt8x16()
	return g.Xor(m).Sub(m)
}

// grid4 returns the four 4-byte codebook points g0..g3 as one vector.
func grid4(g0, g1, g2, g3 uint32) archsimd.Int8x16 {
	return archsimd.BroadcastUint32x4(g0).SetElem(1, g1).SetElem(2, g2).SetElem(3, g3).ReshapeToUint8s().BitsToInt8()
}

// iq3SDecodeSIMD128 sets q[2ib], q[2ib+1] to the signed weights of
// sub-block ib of an IQ3_S block and sc[ib] to its scale in every lane.
func iq3SDecodeSIMD128(x *[iq3_SBytes]byte, q *[16]archsimd.Int8x16, sc *[16]archsimd.Int16x8) {
	shuf, bit := archsimd.LoadInt8x16Array(&iqSignConsts16[0]), archsimd.LoadInt8x16Array(&iqSignConsts16[1])
	for ib := range qkK / 32 {
		qh := uint32(x[66+ib])
		qs := (*[8]byte)(x[2+8*ib:])
		g := func(k int) uint32 {
			return binary.LittleEndian.Uint32(iq3sGrid[(uint32(qs[k])|qh>>k&1<<8)&511][:])
		}
		sb := binary.LittleEndian.Uint32(x[74+4*ib:])
		q[2*ib] = signed16(grid4(g(0), g(1), g(2), g(3)), sb, shuf, bit)
		q[2*ib+1] = signed16(grid4(g(4), g(5), g(6), g(7)), sb>>16, shuf, bit)
		sc[2*ib] = archsimd.BroadcastInt16x8(int16(iq3SScale(x[:], ib)))
		sc[2*ib+1] = sc[2*ib]
	}
}

// iq3XXSDecodeSIMD128 is iq3SDecodeSIMD128 for an IQ3_XXS block.
func iq3XXSDecodeSIMD128(x *[iq3_XXSBytes]byte, q *[16]archsimd.Int8x16, sc *[16]archsimd.Int16x8) {
	shuf, bit := archsimd.LoadInt8x16Array(&iqSignConsts16[0]), archsimd.LoadInt8x16Array(&iqSignConsts16[1])
	for ib := range qkK / 32 {
		qs := (*[8]byte)(x[2+8*ib:])
		g := func(k int) uint32 { return binary.LittleEndian.Uint32(iq3xxsGrid[qs[k]][:]) }
		aux := binary.LittleEndian.Uint32(x[66+4*ib:])
		lo := uint32(ksignsIQ2XS[aux&127]) | uint32(ksignsIQ2XS[aux>>7&127])<<8
		hi := uint32(ksignsIQ2XS[aux>>14&127]) | uint32(ksignsIQ2XS[aux>>21&127])<<8
		q[2*ib] = signed16(grid4(g(0), g(1), g(2), g(3)), lo, shuf, bit)
		q[2*ib+1] = signed16(grid4(g(4), g(5), g(6), g(7)), hi, shuf, bit)
		sc[2*ib] = archsimd.BroadcastInt16x8(int16(2*(aux>>28) + 1))
		sc[2*ib+1] = sc[2*ib]
	}
}

// iq2XXSDecodeSIMD128 is iq3SDecodeSIMD128 for an IQ2_XXS block (grid
// points of 8 weights, two words each).
func iq2XXSDecodeSIMD128(x *[iq2_XXSBytes]byte, q *[16]archsimd.Int8x16, sc *[16]archsimd.Int16x8) {
	shuf, bit := archsimd.LoadInt8x16Array(&iqSignConsts16[0]), archsimd.LoadInt8x16Array(&iqSignConsts16[1])
	for ib := range qkK / 32 {
		qs := (*[8]byte)(x[2+8*ib:])
		g := func(l, h int) uint32 { return binary.LittleEndian.Uint32(iq2xxsGrid[qs[l]][4*h:]) }
		aux := binary.LittleEndian.Uint32(qs[4:])
		lo := uint32(ksignsIQ2XS[aux&127]) | uint32(ksignsIQ2XS[aux>>7&127])<<8
		hi := uint32(ksignsIQ2XS[aux>>14&127]) | uint32(ksignsIQ2XS[aux>>21&127])<<8
		q[2*ib] = signed16(grid4(g(0, 0), g(0, 1), g(1, 0), g(1, 1)), lo, shuf, bit)
		q[2*ib+1] = signed16(grid4(g(2, 0), g(2, 1), g(3, 0), g(3, 1)), hi, shuf, bit)
		sc[2*ib] = archsimd.BroadcastInt16x8(int16(2*(aux>>28) + 1))
		sc[2*ib+1] = sc[2*ib]
	}
}

// iq2XSDecodeSIMD128 is iq3SDecodeSIMD128 for an IQ2_XS block (a scale per
// 16 weights).
func iq2XSDecodeSIMD128(x *[iq2_XSBytes]byte, q *[16]archsimd.Int8x16, sc *[16]archsimd.Int16x8) {
	shuf, bit := archsimd.LoadInt8x16Array(&iqSignConsts16[0]), archsimd.LoadInt8x16Array(&iqSignConsts16[1])
	for ib := range qkK / 32 {
		qv := func(l int) uint16 { return binary.LittleEndian.Uint16(x[2+8*ib+2*l:]) }
		g := func(l, h int) uint32 { return binary.LittleEndian.Uint32(iq2xsGrid[qv(l)&511][4*h:]) }
		lo := uint32(ksignsIQ2XS[qv(0)>>9]) | uint32(ksignsIQ2XS[qv(1)>>9])<<8
		hi := uint32(ksignsIQ2XS[qv(2)>>9]) | uint32(ksignsIQ2XS[qv(3)>>9])<<8
		q[2*ib] = signed16(grid4(g(0, 0), g(0, 1), g(1, 0), g(1, 1)), lo, shuf, bit)
		q[2*ib+1] = signed16(grid4(g(2, 0), g(2, 1), g(3, 0), g(3, 1)), hi, shuf, bit)
		s := x[66+ib]
		sc[2*ib] = archsimd.BroadcastInt16x8(int16(2*(s&0xf) + 1))
		sc[2*ib+1] = archsimd.BroadcastInt16x8(int16(2*(s>>4) + 1))
	}
}

// iq2SDecodeSIMD128 is iq3SDecodeSIMD128 for an IQ2_S block (a scale per
// 16 weights).
func iq2SDecodeSIMD128(x *[iq2_SBytes]byte, q *[16]archsimd.Int8x16, sc *[16]archsimd.Int16x8) {
	shuf, bit := archsimd.LoadInt8x16Array(&iqSignConsts16[0]), archsimd.LoadInt8x16Array(&iqSignConsts16[1])
	for ib := range qkK / 32 {
		qh := uint32(x[66+ib])
		g := func(l, h int) uint32 {
			return binary.LittleEndian.Uint32(iq2sGrid[(uint32(x[2+4*ib+l])|qh>>(2*l)&3<<8)&1023][4*h:])
		}
		sb := binary.LittleEndian.Uint32(x[34+4*ib:])
		q[2*ib] = signed16(grid4(g(0, 0), g(0, 1), g(1, 0), g(1, 1)), sb, shuf, bit)
		q[2*ib+1] = signed16(grid4(g(2, 0), g(2, 1), g(3, 0), g(3, 1)), sb>>16, shuf, bit)
		s := x[74+ib]
		sc[2*ib] = archsimd.BroadcastInt16x8(int16(2*(s&0xf) + 1))
		sc[2*ib+1] = archsimd.BroadcastInt16x8(int16(2*(s>>4) + 1))
	}
}

// iq1SDecodeSIMD128 is iq3SDecodeSIMD128 for an IQ1_S block (grid values
// -1, 0, 1, no signs), and sets c[ib] to the sub-block's delta factor
// (2s+1)·(±1).
func iq1SDecodeSIMD128(x *[iq1_SBytes]byte, q *[16]archsimd.Int8x16, sc *[16]archsimd.Int16x8, c *[8]int32) {
	for ib := range qkK / 32 {
		qh := uint32(binary.LittleEndian.Uint16(x[34+2*ib:]))
		g := func(l, h int) uint32 {
			return binary.LittleEndian.Uint32(iq1sGridBytes(&iq1sGrid[(uint32(x[2+4*ib+l])|qh>>(3*l)&7<<8)&2047])[4*h:])
		}
		q[2*ib] = grid4(g(0, 0), g(0, 1), g(1, 0), g(1, 1))
		q[2*ib+1] = grid4(g(2, 0), g(2, 1), g(3, 0), g(3, 1))
		ls := int32(2*(qh>>12&7) + 1)
		sc[2*ib] = archsimd.BroadcastInt16x8(int16(ls))
		sc[2*ib+1] = sc[2*ib]
		c[ib] = ls
		if qh&0x8000 != 0 {
			c[ib] = -ls
		}
	}
}

// iq1MDecodeSIMD128 is iq3SDecodeSIMD128 for an IQ1_M block (grid values
// -1, 0, 1, no signs, a scale per 16 weights), and sets qd[2ib], qd[2ib+1]
// to the sub-block's delta signs, ±1 per group of 8 weights.
func iq1MDecodeSIMD128(x *[iq1_MBytes]byte, q, qd *[16]archsimd.Int8x16, sc *[16]archsimd.Int16x8) {
	for ib := range qkK / 32 {
		var g, dl [8]uint32
		for l := range 4 {
			qh := x[32+2*ib+l/2] >> (4 * (l % 2))
			p := iq1sGridBytes(&iq1sGrid[(uint32(x[4*ib+l])|uint32(qh&7)<<8)&2047])
			g[2*l], g[2*l+1] = binary.LittleEndian.Uint32(p[:]), binary.LittleEndian.Uint32(p[4:])
			dl[2*l], dl[2*l+1] = 0x01010101, 0x01010101
			if qh&8 != 0 {
				dl[2*l], dl[2*l+1] = 0xffffffff, 0xffffffff
			}
		}
		q[2*ib], q[2*ib+1] = grid4(g[0], g[1], g[2], g[3]), grid4(g[4], g[5], g[6], g[7])
		qd[2*ib], qd[2*ib+1] = grid4(dl[0], dl[1], dl[2], dl[3]), grid4(dl[4], dl[5], dl[6], dl[7])
		sc[2*ib] = archsimd.BroadcastInt16x8(int16(iq1MScale(x[:], ib, 0)))
		sc[2*ib+1] = archsimd.BroadcastInt16x8(int16(iq1MScale(x[:], ib, 1)))
	}
}

// iqLanes4 returns the lanes 0-3 and 4-7 (iq3Lanes) of a decoded block q,
// sc with the Q8_K block y.
func iqLanes4(q *[16]archsimd.Int8x16, sc *[16]archsimd.Int16x8, y *[q8_KBytes]byte) (archsimd.Int32x4, archsimd.Int32x4) {
	var a0, a1, a2, a3, a4, a5, a6, a7 archsimd.Int32x4 // lane L's four positions in aL
	for ib := range qkK / 32 {
		s0, s1 := sc[2*ib], sc[2*ib+1]
		y0, y1 := loadI8((*[16]byte)(y[4+32*ib:])), loadI8((*[16]byte)(y[20+32*ib:]))
		w0, w1 := q[2*ib], q[2*ib+1]
		p0, p1 := w0.MulWidenLo(y0), w0.MulWidenHi(y0) // lanes 0, 1; 2, 3
		p2, p3 := w1.MulWidenLo(y1), w1.MulWidenHi(y1) // lanes 4, 5; 6, 7
		a0, a1 = a0.Add(p0.MulWidenLo(s0)), a1.Add(p0.MulWidenHi(s0))
		a2, a3 = a2.Add(p1.MulWidenLo(s0)), a3.Add(p1.MulWidenHi(s0))
		a4, a5 = a4.Add(p2.MulWidenLo(s1)), a5.Add(p2.MulWidenHi(s1))
		a6, a7 = a6.Add(p3.MulWidenLo(s1)), a7.Add(p3.MulWidenHi(s1))
	}
	return hsum4(a0, a1, a2, a3), hsum4(a4, a5, a6, a7)
}

// iqDotNSIMD128 sets out[k] to the dot of the row w of nb blocks of type
// t (IQ3_S, IQ3_XXS, IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S or IQ1_M) with
// activation k, before the format's final factor (0.25 for IQ3_XXS, 0.125
// for the IQ2 formats), each block decoded once; for the IQ1 formats it
// adds their delta parts. (The decoders are called by name: through a func
// value, q and sc would escape.)
func iqDotNSIMD128(t Type, nb int, w []byte, acts [][]byte, out []float32) {
	size := iqSize(t)
	w = w[:nb*size]
	acts = acts[:min(len(acts), MaxDotN)]
	out = out[:len(acts)]
	var (
		acc  [MaxDotN][2]archsimd.Float32x4 // activation k's running sums 0-3, 4-7
		q    [16]archsimd.Int8x16
		sc   [16]archsimd.Int16x8
		c    [8]int32                       // IQ1_S: the sub-blocks' delta factors
		acc1 [MaxDotN]float32               // IQ1_S: activation k's delta sum
		qd   [16]archsimd.Int8x16           // IQ1_M: the delta signs
		acc2 [MaxDotN][2]archsimd.Float32x4 // IQ1_M: activation k's delta running sums
	)
	for b := range nb {
		x := w[b*size : (b+1)*size]
		switch t {
		case IQ3_S:
			iq3SDecodeSIMD128((*[iq3_SBytes]byte)(x), &q, &sc)
		case IQ3_XXS:
			iq3XXSDecodeSIMD128((*[iq3_XXSBytes]byte)(x), &q, &sc)
		case IQ2_XXS:
			iq2XXSDecodeSIMD128((*[iq2_XXSBytes]byte)(x), &q, &sc)
		case IQ2_XS:
			iq2XSDecodeSIMD128((*[iq2_XSBytes]byte)(x), &q, &sc)
		case IQ2_S:
			iq2SDecodeSIMD128((*[iq2_SBytes]byte)(x), &q, &sc)
		case IQ1_S:
			iq1SDecodeSIMD128((*[iq1_SBytes]byte)(x), &q, &sc, &c)
		case IQ1_M:
			iq1MDecodeSIMD128((*[iq1_MBytes]byte)(x), &q, &qd, &sc)
		}
		var dx float32
		if t == IQ1_M {
			dx = iq1MD(x)
		} else {
			dx = fp16At(x)
		}
		for k, a := range acts {
			y := (*[q8_KBytes]byte)(a[b*q8_KBytes:])
			lo, hi := iqLanes4(&q, &sc, y)
			d := dx * f32At(y[:])
			scaleAddLanes(&acc[k], d, lo, hi)
			switch t {
			case IQ1_S:
				acc1[k] += float32(d * float32(iqDeltaSum(&c, y)))
			case IQ1_M:
				lo, hi := iqLanes4(&qd, &sc, y)
				scaleAddLanes(&acc2[k], d, lo, hi)
			}
		}
	}
	for k := range out {
		out[k] = laneSum8x4(&acc[k])
		switch t {
		case IQ1_S:
			out[k] += float32(iq1sDelta * acc1[k])
		case IQ1_M:
			out[k] += float32(iq1sDelta * laneSum8x4(&acc2[k]))
		}
	}
}

// scaleAddLanes adds float32(d·lo[k]) to lane k of s[0] and
// float32(d·hi[k]) to lane k of s[1], the product and the sum each
// rounded (iqAccumulate).
func scaleAddLanes(s *[2]archsimd.Float32x4, d float32, lo, hi archsimd.Int32x4) {
	dv := archsimd.BroadcastFloat32x4(d)
	s[0] = s[0].Add(lo.ConvertToFloat32().Mul(dv))
	s[1] = s[1].Add(hi.ConvertToFloat32().Mul(dv))
}

// laneSum8x4 is laneSum8 of the running sums 0-3 in s[0] and 4-7 in s[1].
func laneSum8x4(s *[2]archsimd.Float32x4) float32 {
	var a [8]float32
	s[0].StoreArray((*[4]float32)(a[:4]))
	s[1].StoreArray((*[4]float32)(a[4:]))
	return laneSum8(&a)
}

// iqKernels returns the Dot, DotN and DotRowsN kernels of the codebook
// format t around iqDotNSIMD128, with the format's final factor (iqFactor).
func iqKernels(t Type) kernels {
	return kernels{
		dot: func(n int, w, act []byte) float32 {
			var out [1]float32
			iqDotScaledSIMD128(t, n, w, [][]byte{act}, out[:])
			return out[0]
		},
		dotN: func(n int, w []byte, acts [][]byte, out []float32) { iqDotScaledSIMD128(t, n, w, acts, out) },
		dotRowsN: func(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
			var dots [MaxDotN]float32
			d := dots[:len(acts)]
			rb := n / qkK * formats[t].TypeSize
			for r := 0; (r+1)*rb <= len(w); r++ {
				iqDotScaledSIMD128(t, n, w[r*rb:(r+1)*rb], acts, d)
				for i, v := range d {
					outs[i][at+r] = v
				}
			}
		},
	}
}

// iqDotScaledSIMD128 is iqDotNSIMD128 with the format's final factor.
func iqDotScaledSIMD128(t Type, n int, w []byte, acts [][]byte, out []float32) {
	iqDotNSIMD128(t, n/qkK, w, acts, out)
	if f := iqFactor(t); f != 1 {
		for k := range out[:len(acts)] {
			out[k] *= f
		}
	}
}

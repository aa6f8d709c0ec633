//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"simd/archsimd"
)

// The AVX2 kernels of the codebook formats IQ3_S, IQ3_XXS, IQ2_XXS,
// IQ2_XS, IQ2_S, IQ1_S and IQ1_M (kernels_amd64.go); their references
// (dotIQ3_SRef, …) are their portable twins. A block is decoded into its
// signed weights, one 32-byte vector per sub-block (the codebook points
// gathered from the grid, the signs expanded from their bits as ggml's
// AVX2 code does), and the scales 2s+1 in int16 lanes (of the sub-block or
// of each 16-weight half). Each activation then takes VPMADDUBSW of |y|
// and the weights with y's sign (|w| ≤ 62 and |y| ≤ 128, so a pair sum is
// at most 15872: no saturation, and a quant of -128 is exact), VPMADDWD by
// the scales, and adds the sub-blocks: the eight int32 lanes of iq3Lanes.
// They are scaled and added to eight float32 running sums (VMULPS, VADDPS,
// as the references' iqAccumulate) and reduced as laneSum8.

// iqSignConsts are the VPSHUFB pattern sending byte k/8 of a 32-bit word
// to byte k (k < 32; the word is broadcast to every 128-bit lane) and the
// mask of bit k%8 in byte k.
var iqSignConsts = func() (t [2][32]byte) {
	for k := range 32 {
		t[0][k], t[1][k] = byte(k/8), 1<<(k%8)
	}
	return t
}()

// iqSigns returns ±1 in byte k (-1 where bit k of bits is set).
func iqSigns(bits uint32, shuf archsimd.Int8x32, bit archsimd.Uint8x32, one archsimd.Int8x32) archsimd.Int8x32 {
	v := archsimd.BroadcastUint32x8(bits).AsUint8x32().PermuteOrZeroGrouped(shuf).And(bit)
	return v.Equal(bit).ToInt8x32().Or(one)
}

// gridVec returns the eight 4-byte codebook points g0..g7 as one vector.
func gridVec(g0, g1, g2, g3, g4, g5, g6, g7 uint32) archsimd.Int8x32 {
	var lo, hi archsimd.Uint32x4
	lo = lo.SetElem(0, g0).SetElem(1, g1).SetElem(2, g2).SetElem(3, g3)
	hi = hi.SetElem(0, g4).SetElem(1, g5).SetElem(2, g6).SetElem(3, g7)
	var v archsimd.Uint32x8
	return v.SetLo(lo).SetHi(hi).AsUint8x32().BitsToInt8()
}

// iq3SDecode sets q[ib] to the signed weights of sub-block ib of an IQ3_S
// block and sc[ib] to its scale 2s+1 in every lane.
func iq3SDecode(x *[iq3_SBytes]byte, q *[8]archsimd.Int8x32, sc *[8]archsimd.Int16x16) {
	shuf, bit := load32(&iqSignConsts[0]).BitsToInt8(), load32(&iqSignConsts[1])
	one := archsimd.BroadcastInt8x32(1)
	for ib := range qkK / 32 {
		qh := uint32(x[66+ib])
		qs := (*[8]byte)(x[2+8*ib:])
		g := func(k int) uint32 {
			return binary.LittleEndian.Uint32(iq3sGrid[(uint32(qs[k])|qh>>k&1<<8)&511][:])
		}
		gv := gridVec(g(0), g(1), g(2), g(3), g(4), g(5), g(6), g(7))
		q[ib] = gv.MulSign(iqSigns(binary.LittleEndian.Uint32(x[74+4*ib:]), shuf, bit, one))
		sc[ib] = archsimd.BroadcastInt16x16(int16(iq3SScale(x[:], ib)))
	}
}

// iq3XXSDecode is iq3SDecode for an IQ3_XXS block.
func iq3XXSDecode(x *[iq3_XXSBytes]byte, q *[8]archsimd.Int8x32, sc *[8]archsimd.Int16x16) {
	shuf, bit := load32(&iqSignConsts[0]).BitsToInt8(), load32(&iqSignConsts[1])
	one := archsimd.BroadcastInt8x32(1)
	for ib := range qkK / 32 {
		qs := (*[8]byte)(x[2+8*ib:])
		g := func(k int) uint32 { return binary.LittleEndian.Uint32(iq3xxsGrid[qs[k]][:]) }
		gv := gridVec(g(0), g(1), g(2), g(3), g(4), g(5), g(6), g(7))
		aux := binary.LittleEndian.Uint32(x[66+4*ib:])
		bits := uint32(ksignsIQ2XS[aux&127]) | uint32(ksignsIQ2XS[aux>>7&127])<<8 |
			uint32(ksignsIQ2XS[aux>>14&127])<<16 | uint32(ksignsIQ2XS[aux>>21&127])<<24
		q[ib] = gv.MulSign(iqSigns(bits, shuf, bit, one))
		sc[ib] = archsimd.BroadcastInt16x16(int16(2*(aux>>28) + 1))
	}
}

// iq2XXSDecode is iq3SDecode for an IQ2_XXS block (grid points of 8
// weights, two words each).
func iq2XXSDecode(x *[iq2_XXSBytes]byte, q *[8]archsimd.Int8x32, sc *[8]archsimd.Int16x16) {
	shuf, bit := load32(&iqSignConsts[0]).BitsToInt8(), load32(&iqSignConsts[1])
	one := archsimd.BroadcastInt8x32(1)
	for ib := range qkK / 32 {
		qs := (*[8]byte)(x[2+8*ib:])
		g := func(l, h int) uint32 { return binary.LittleEndian.Uint32(iq2xxsGrid[qs[l]][4*h:]) }
		gv := gridVec(g(0, 0), g(0, 1), g(1, 0), g(1, 1), g(2, 0), g(2, 1), g(3, 0), g(3, 1))
		aux := binary.LittleEndian.Uint32(qs[4:])
		bits := uint32(ksignsIQ2XS[aux&127]) | uint32(ksignsIQ2XS[aux>>7&127])<<8 |
			uint32(ksignsIQ2XS[aux>>14&127])<<16 | uint32(ksignsIQ2XS[aux>>21&127])<<24
		q[ib] = gv.MulSign(iqSigns(bits, shuf, bit, one))
		sc[ib] = archsimd.BroadcastInt16x16(int16(2*(aux>>28) + 1))
	}
}

// halfScales returns lo in int16 lanes 0-7 (the pair sums of a
// sub-block's first 16 weights) and hi in lanes 8-15.
func halfScales(lo, hi int16) archsimd.Int16x16 {
	var v archsimd.Int16x16
	return v.SetLo(archsimd.BroadcastInt16x8(lo)).SetHi(archsimd.BroadcastInt16x8(hi))
}

// iq2XSDecode is iq3SDecode for an IQ2_XS block (a scale per 16 weights).
func iq2XSDecode(x *[iq2_XSBytes]byte, q *[8]archsimd.Int8x32, sc *[8]archsimd.Int16x16) {
	shuf, bit := load32(&iqSignConsts[0]).BitsToInt8(), load32(&iqSignConsts[1])
	one := archsimd.BroadcastInt8x32(1)
	for ib := range qkK / 32 {
		qv := func(l int) uint16 { return binary.LittleEndian.Uint16(x[2+8*ib+2*l:]) }
		g := func(l, h int) uint32 { return binary.LittleEndian.Uint32(iq2xsGrid[qv(l)&511][4*h:]) }
		gv := gridVec(g(0, 0), g(0, 1), g(1, 0), g(1, 1), g(2, 0), g(2, 1), g(3, 0), g(3, 1))
		bits := uint32(ksignsIQ2XS[qv(0)>>9]) | uint32(ksignsIQ2XS[qv(1)>>9])<<8 |
			uint32(ksignsIQ2XS[qv(2)>>9])<<16 | uint32(ksignsIQ2XS[qv(3)>>9])<<24
		q[ib] = gv.MulSign(iqSigns(bits, shuf, bit, one))
		s := x[66+ib]
		sc[ib] = halfScales(int16(2*(s&0xf)+1), int16(2*(s>>4)+1))
	}
}

// iq2SDecode is iq3SDecode for an IQ2_S block (a scale per 16 weights).
func iq2SDecode(x *[iq2_SBytes]byte, q *[8]archsimd.Int8x32, sc *[8]archsimd.Int16x16) {
	shuf, bit := load32(&iqSignConsts[0]).BitsToInt8(), load32(&iqSignConsts[1])
	one := archsimd.BroadcastInt8x32(1)
	for ib := range qkK / 32 {
		qh := uint32(x[66+ib])
		g := func(l, h int) uint32 {
			return binary.LittleEndian.Uint32(iq2sGrid[(uint32(x[2+4*ib+l])|qh>>(2*l)&3<<8)&1023][4*h:])
		}
		gv := gridVec(g(0, 0), g(0, 1), g(1, 0), g(1, 1), g(2, 0), g(2, 1), g(3, 0), g(3, 1))
		q[ib] = gv.MulSign(iqSigns(binary.LittleEndian.Uint32(x[34+4*ib:]), shuf, bit, one))
		s := x[74+ib]
		sc[ib] = halfScales(int16(2*(s&0xf)+1), int16(2*(s>>4)+1))
	}
}

// iq1SDecode is iq3SDecode for an IQ1_S block (grid values -1, 0, 1, no
// signs), and sets c[ib] to the sub-block's delta factor (2s+1)·(±1).
func iq1SDecode(x *[iq1_SBytes]byte, q *[8]archsimd.Int8x32, sc *[8]archsimd.Int16x16, c *[8]int32) {
	for ib := range qkK / 32 {
		qh := uint32(binary.LittleEndian.Uint16(x[34+2*ib:]))
		g := func(l, h int) uint32 {
			return binary.LittleEndian.Uint32(iq1sGridBytes(&iq1sGrid[(uint32(x[2+4*ib+l])|qh>>(3*l)&7<<8)&2047])[4*h:])
		}
		q[ib] = gridVec(g(0, 0), g(0, 1), g(1, 0), g(1, 1), g(2, 0), g(2, 1), g(3, 0), g(3, 1))
		ls := int32(2*(qh>>12&7) + 1)
		sc[ib] = archsimd.BroadcastInt16x16(int16(ls))
		c[ib] = ls
		if qh&0x8000 != 0 {
			c[ib] = -ls
		}
	}
}

// iq1MDecode is iq3SDecode for an IQ1_M block (grid values -1, 0, 1, no
// signs, a scale per 16 weights), and sets qd[ib] to the sub-block's delta
// signs, ±1 per group of 8 weights.
func iq1MDecode(x *[iq1_MBytes]byte, q, qd *[8]archsimd.Int8x32, sc *[8]archsimd.Int16x16) {
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
		q[ib] = gridVec(g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7])
		qd[ib] = gridVec(dl[0], dl[1], dl[2], dl[3], dl[4], dl[5], dl[6], dl[7])
		sc[ib] = halfScales(int16(iq1MScale(x[:], ib, 0)), int16(iq1MScale(x[:], ib, 1)))
	}
}

// iqLanes8 returns the eight int32 lanes (iq3Lanes) of a decoded block q,
// sc with the Q8_K block y.
func iqLanes8(q *[8]archsimd.Int8x32, sc *[8]archsimd.Int16x16, y *[q8_KBytes]byte) archsimd.Int32x8 {
	var sum archsimd.Int32x8
	for ib := range qkK / 32 {
		yq := load32((*[32]byte)(y[4+32*ib:])).BitsToInt8()
		p := yq.Abs().AsUint8x32().DotProductPairsSaturated(q[ib].MulSign(yq))
		sum = sum.Add(p.DotProductPairs(sc[ib]))
	}
	return sum
}

// laneSum8x8 is laneSum8 of the lanes of v.
func laneSum8x8(v archsimd.Float32x8) float32 {
	t := v.GetLo().Add(v.GetHi())
	return (t.GetElem(0) + t.GetElem(2)) + (t.GetElem(1) + t.GetElem(3))
}

// iqDotN sets out[k] to the dot of the row w of nb blocks of type
// t (IQ3_S, IQ3_XXS, IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S or IQ1_M) with
// activation k, before the format's final factor (0.25 for IQ3_XXS, 0.125
// for the IQ2 formats), each block decoded once; for the IQ1 formats it
// adds their delta parts. (The decoders are called by name: through a func
// value, q and sc would escape.)
func iqDotN(t Type, nb int, w []byte, acts [][]byte, out []float32) {
	size := iqSize(t)
	w = w[:nb*size]
	acts = acts[:min(len(acts), MaxDotN)]
	out = out[:len(acts)]
	var (
		acc  [MaxDotN]archsimd.Float32x8
		q    [8]archsimd.Int8x32
		sc   [8]archsimd.Int16x16
		c    [8]int32                    // IQ1_S: the sub-blocks' delta factors
		acc1 [MaxDotN]float32            // IQ1_S: activation k's delta sum
		qd   [8]archsimd.Int8x32         // IQ1_M: the delta signs
		acc2 [MaxDotN]archsimd.Float32x8 // IQ1_M: activation k's delta running sums
	)
	for b := range nb {
		x := w[b*size : (b+1)*size]
		switch t {
		case IQ3_S:
			iq3SDecode((*[iq3_SBytes]byte)(x), &q, &sc)
		case IQ3_XXS:
			iq3XXSDecode((*[iq3_XXSBytes]byte)(x), &q, &sc)
		case IQ2_XXS:
			iq2XXSDecode((*[iq2_XXSBytes]byte)(x), &q, &sc)
		case IQ2_XS:
			iq2XSDecode((*[iq2_XSBytes]byte)(x), &q, &sc)
		case IQ2_S:
			iq2SDecode((*[iq2_SBytes]byte)(x), &q, &sc)
		case IQ1_S:
			iq1SDecode((*[iq1_SBytes]byte)(x), &q, &sc, &c)
		case IQ1_M:
			iq1MDecode((*[iq1_MBytes]byte)(x), &q, &qd, &sc)
		}
		var dx float32
		if t == IQ1_M {
			dx = iq1MD(x)
		} else {
			dx = fp16At(x)
		}
		for k, a := range acts {
			y := (*[q8_KBytes]byte)(a[b*q8_KBytes:])
			d := dx * f32At(y[:])
			acc[k] = iqLanes8(&q, &sc, y).ConvertToFloat32().Mul(archsimd.BroadcastFloat32x8(d)).Add(acc[k])
			switch t {
			case IQ1_S:
				acc1[k] += float32(d * float32(iqDeltaSum(&c, y)))
			case IQ1_M:
				acc2[k] = iqLanes8(&qd, &sc, y).ConvertToFloat32().Mul(archsimd.BroadcastFloat32x8(d)).Add(acc2[k])
			}
		}
	}
	for k := range out {
		out[k] = laneSum8x8(acc[k])
		switch t {
		case IQ1_S:
			out[k] += float32(iq1sDelta * acc1[k])
		case IQ1_M:
			out[k] += float32(iq1sDelta * laneSum8x8(acc2[k]))
		}
	}
}

// iqKernels returns the Dot, DotN and DotRowsN kernels of the codebook
// format t around iqDotN, with the format's final factor (iqFactor).
func iqKernels(t Type) kernels {
	return kernels{
		dot: func(n int, w, act []byte) float32 {
			var out [1]float32
			iqDotScaledAVX2(t, n, w, [][]byte{act}, out[:])
			return out[0]
		},
		dotN: func(n int, w []byte, acts [][]byte, out []float32) { iqDotScaledAVX2(t, n, w, acts, out) },
		dotRowsN: func(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
			var dots [MaxDotN]float32
			d := dots[:len(acts)]
			rb := n / qkK * formats[t].TypeSize
			for r := 0; (r+1)*rb <= len(w); r++ {
				iqDotScaledAVX2(t, n, w[r*rb:(r+1)*rb], acts, d)
				for i, v := range d {
					outs[i][at+r] = v
				}
			}
		},
	}
}

// iqDotScaledAVX2 is iqDotN with the format's final factor.
func iqDotScaledAVX2(t Type, n int, w []byte, acts [][]byte, out []float32) {
	iqDotN(t, n/qkK, w, acts, out)
	if f := iqFactor(t); f != 1 {
		for k := range out[:len(acts)] {
			out[k] *= f
		}
	}
}

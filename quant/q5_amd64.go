//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"simd/archsimd"
)

// The AVX2 kernels of Q5_0, Q5_1 and Q4_1 (kernels_amd64.go); dotQ5_0Go,
// dotQ5_1Go and dotQ4_1Go are their portable twins. As ggml's x86
// kernels, a block's quants fill one 32-byte vector (the low nibbles,
// then the high ones: weights in order), VPMADDUBSW of the unsigned quants
// with the int8 activations and VPMADDWD leave lane k the products of
// weights 4k..4k+3, and each lane is added to its float32 accumulator by
// VFMADD (fma32), block by block.

// q5Masks holds the constants of these kernels.
type q5Masks struct {
	m4      archsimd.Uint8x16
	spread  archsimd.Int8x32 // VPSHUFB: byte i of the qh word to bytes 8i..8i+7
	bits    archsimd.Uint8x32
	sixteen archsimd.Uint8x32
	ones    archsimd.Int16x16
}

// q5Spread, q5Bits: byte i of a 32-byte vector tests bit i of qh.
var (
	q5Spread = [32]int8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3}
	q5Bits   = [32]uint8{1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128}
)

func q5Consts() q5Masks {
	return q5Masks{archsimd.BroadcastUint8x16(0x0f), archsimd.LoadInt8x32Array(&q5Spread), archsimd.LoadUint8x32Array(&q5Bits),
		archsimd.BroadcastUint8x32(16), archsimd.BroadcastInt16x16(1)}
}

// nibbles32 returns the 32 nibbles of qs in weight order (low nibbles, then
// high ones).
func nibbles32(qs *[16]byte, m4 archsimd.Uint8x16) archsimd.Uint8x32 {
	q := load16(qs)
	var qq archsimd.Uint8x32
	return qq.SetLo(q.And(m4)).SetHi(q.ReshapeToUint16s().ShiftAllRight(4).ReshapeToUint8s().And(m4))
}

// quants5 returns the 32 unsigned 5-bit quants of a Q5_0/Q5_1 block with
// nibbles qs and high bits qh.
func quants5(qs *[16]byte, qh uint32, c *q5Masks) archsimd.Uint8x32 {
	h := archsimd.BroadcastUint32x8(qh).AsUint8x32().PermuteOrZeroGrouped(c.spread).And(c.bits)
	return nibbles32(qs, c.m4).Or(c.sixteen.Masked(h.Equal(c.bits)))
}

// accX86 stores the eight accumulators and returns their hsumX86.
func accX86(acc archsimd.Float32x8) float32 {
	var a [8]float32
	acc.StoreArray(&a)
	return hsumX86(&a)
}

// dotQ5_0AVX2 computes the same as dotQ5_0Ref, bit for bit: (q-16)·y is
// VPMADDUBSW(q, y) - VPMADDUBSW(16, y) (pair sums at most 2·31·128).
func dotQ5_0AVX2(n int, w, act []byte) float32 {
	nb := n / qk
	w, act = w[:nb*q5_0Bytes], act[:nb*q8_0Bytes]
	c := q5Consts()
	var acc archsimd.Float32x8
	for b := range nb {
		x := (*[q5_0Bytes]byte)(w[b*q5_0Bytes:])
		y := (*[q8_0Bytes]byte)(act[b*q8_0Bytes:])
		q := quants5((*[16]byte)(x[6:]), binary.LittleEndian.Uint32(x[2:]), &c)
		yv := load32((*[32]byte)(y[2:])).BitsToInt8()
		lanes := q.DotProductPairsSaturated(yv).Sub(c.sixteen.DotProductPairsSaturated(yv)).DotProductPairs(c.ones)
		d := archsimd.BroadcastFloat32x8(halfToFloat(binary.LittleEndian.Uint16(x[:])) * halfToFloat(binary.LittleEndian.Uint16(y[:])))
		acc = d.MulAdd(lanes.ConvertToFloat32(), acc)
	}
	return accX86(acc)
}

// dotQ5_1AVX2 computes the same as dotQ5_1Ref, bit for bit; the min terms
// are fused multiply-adds of scalars in lane 0 of a vector.
func dotQ5_1AVX2(n int, w, act []byte) float32 {
	nb := n / qk
	w, act = w[:nb*q5_1Bytes], act[:nb*q8_1Bytes]
	c := q5Consts()
	var acc archsimd.Float32x8
	var summs archsimd.Float32x4
	for b := range nb {
		x := (*[q5_1Bytes]byte)(w[b*q5_1Bytes:])
		y := (*[q8_1Bytes]byte)(act[b*q8_1Bytes:])
		q := quants5((*[16]byte)(x[8:]), binary.LittleEndian.Uint32(x[4:]), &c)
		lanes := q.DotProductPairsSaturated(load32((*[32]byte)(y[4:])).BitsToInt8()).DotProductPairs(c.ones)
		hx, hy := binary.LittleEndian.Uint32(x[:]), binary.LittleEndian.Uint32(y[:]) // d, m; d, s
		d, m, sy := halfToFloat(uint16(hx))*halfToFloat(uint16(hy)), halfToFloat(uint16(hx>>16)), halfToFloat(uint16(hy>>16))
		acc = lanes.ConvertToFloat32().MulAdd(archsimd.BroadcastFloat32x8(d), acc)
		summs = archsimd.BroadcastFloat32x4(m).MulAdd(archsimd.BroadcastFloat32x4(sy), summs)
	}
	return accX86(acc) + summs.GetElem(0)
}

// dotQ4_1AVX2 computes the same as dotQ4_1Ref, bit for bit.
func dotQ4_1AVX2(n int, w, act []byte) float32 {
	nb := n / qk
	w, act = w[:nb*q4_1Bytes], act[:nb*q8_1Bytes]
	m4 := archsimd.BroadcastUint8x16(0x0f)
	ones := archsimd.BroadcastInt16x16(1)
	var acc archsimd.Float32x8
	var summs archsimd.Float32x4
	for b := range nb {
		x := (*[q4_1Bytes]byte)(w[b*q4_1Bytes:])
		y := (*[q8_1Bytes]byte)(act[b*q8_1Bytes:])
		q := nibbles32((*[16]byte)(x[4:]), m4)
		lanes := q.DotProductPairsSaturated(load32((*[32]byte)(y[4:])).BitsToInt8()).DotProductPairs(ones)
		hx, hy := binary.LittleEndian.Uint32(x[:]), binary.LittleEndian.Uint32(y[:]) // d, m; d, s
		d, m, sy := halfToFloat(uint16(hx))*halfToFloat(uint16(hy)), halfToFloat(uint16(hx>>16)), halfToFloat(uint16(hy>>16))
		acc = lanes.ConvertToFloat32().MulAdd(archsimd.BroadcastFloat32x8(d), acc)
		summs = archsimd.BroadcastFloat32x4(m).MulAdd(archsimd.BroadcastFloat32x4(sy), summs)
	}
	return accX86(acc) + summs.GetElem(0)
}

// In the Q4_1 and Q5_1 loops, the lanes are added by fused multiply-adds
// with dx·dy, m·s to summs (lane 0 of a vector) by one.

// The DotN kernels: four activations at a time, each block is decoded once
// and its lanes with each activation's block added to that activation's
// accumulators as the one-activation kernel does (q5_0Dot4, q5_1Dot4,
// q4_1Dot4 in kx86_rows_amd64.s); the last len(acts)%4 activations go
// through the Dot kernel.

func dotNQ5_0AVX2(n int, w []byte, acts [][]byte, out []float32) {
	dotNQ5AVX2(kindQ5_0, n, w, acts, out)
}

func dotNQ5_1AVX2(n int, w []byte, acts [][]byte, out []float32) {
	dotNQ5AVX2(kindQ5_1, n, w, acts, out)
}

func dotNQ4_1AVX2(n int, w []byte, acts [][]byte, out []float32) {
	dotNQ5AVX2(kindQ4_1, n, w, acts, out)
}

func dotRowsNQ5_0AVX2(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	eachRow(dotNQ5_0AVX2, n/qk*q5_0Bytes, n, w, acts, outs, at)
}

func dotRowsNQ5_1AVX2(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	eachRow(dotNQ5_1AVX2, n/qk*q5_1Bytes, n, w, acts, outs, at)
}

func dotRowsNQ4_1AVX2(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	eachRow(dotNQ4_1AVX2, n/qk*q4_1Bytes, n, w, acts, outs, at)
}

// The formats of dotNQ5AVX2.
const (
	kindQ5_0 = iota
	kindQ5_1
	kindQ4_1
)

// dotNQ5AVX2 is the DotN kernel of Q5_0, Q5_1 or Q4_1 (kind). (The
// four-activation kernels are called by name: the activations' pointers
// passed to a func value would escape.)
func dotNQ5AVX2(kind, n int, w []byte, acts [][]byte, out []float32) {
	nb := n / qk
	xsize, ysize, dot := q5_0Bytes, q8_0Bytes, dotQ5_0AVX2
	switch kind {
	case kindQ5_1:
		xsize, ysize, dot = q5_1Bytes, q8_1Bytes, dotQ5_1AVX2
	case kindQ4_1:
		xsize, ysize, dot = q4_1Bytes, q8_1Bytes, dotQ4_1AVX2
	}
	w = w[:nb*xsize]
	out = out[:len(acts)]
	i := 0
	if nb > 0 {
		for ; i+4 <= len(acts); i += 4 {
			y := [4]*byte{&acts[i][:nb*ysize][0], &acts[i+1][:nb*ysize][0], &acts[i+2][:nb*ysize][0], &acts[i+3][:nb*ysize][0]}
			o := (*[4]float32)(out[i:])
			switch kind {
			case kindQ5_0:
				q5_0Dot4(nb, &w[0], &y, o, &q5RowsConsts)
			case kindQ5_1:
				q5_1Dot4(nb, &w[0], &y, o, &q5RowsConsts)
			default:
				q4_1Dot4(nb, &w[0], &y, o, &q5RowsConsts)
			}
		}
	}
	for ; i < len(acts); i++ {
		out[i] = dot(n, w, acts[i])
	}
}

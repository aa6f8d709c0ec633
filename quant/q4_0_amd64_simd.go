//go:build goexperiment.simd && amd64

package quant

import (
	"encoding/binary"
	"simd/archsimd"
)

// The native AVX2 kernel of Q4_0; q4_0_scalar.go has its portable twin.

// dotQ4_0 computes the same as dotQ4_0Ref, bit for bit: VPMADDUBSW of the
// nibbles (0..15) and of 8 with the int8 activations gives the pair sums of
// q·y and 8·y (|·| ≤ 3840), whose difference is (q-8)·y; VPMADDWD with ones
// widens it. Eight blocks at a time, the exact block sums are reduced
// together and scaled in float32 lanes (the reference's operations, lane
// by lane); only the running sum is added block by block.
func dotQ4_0(n int, w, act []byte) float32 {
	if !hasAVX2 {
		return dotQ4_0Ref(n, w, act)
	}
	nb := n / qk
	w, act = w[:nb*q4_0Bytes], act[:nb*q8_0Bytes]
	var (
		hxs, hys [8]uint32 // the fp16 scales of eight blocks of w and act
		sums     [8]int32
		p        [8]float32
	)
	var sum float32
	b := 0
	for ; b+8 <= nb; b += 8 {
		xg := (*[8 * q4_0Bytes]byte)(w[b*q4_0Bytes:])
		yg := (*[8 * q8_0Bytes]byte)(act[b*q8_0Bytes:])
		s := q4_0Group(xg, yg)
		hx, hy := q4_0Halves8(xg), halves8(yg)
		fx, okx := halvesToFloats(hx)
		fy, oky := halvesToFloats(hy)
		if !okx || !oky { // a zero, subnormal, infinite or NaN scale
			s.StoreArray(&sums)
			hx.StoreArray(&hxs)
			hy.StoreArray(&hys)
			for j, si := range sums {
				sum += float32(si) * float32(FP16ToFP32(uint16(hxs[j]))*FP16ToFP32(uint16(hys[j])))
			}
			continue
		}
		s.ConvertToFloat32().Mul(fx.Mul(fy)).StoreArray(&p)
		for j := range p {
			sum += p[j]
		}
	}
	m := q4_0Consts()
	for ; b < nb; b++ {
		x := (*[q4_0Bytes]byte)(w[b*q4_0Bytes:])
		y := (*[q8_0Bytes]byte)(act[b*q8_0Bytes:])
		sum += float32(hsum8(q4_0Block(x, y, m))) * float32(halfToFloat(binary.LittleEndian.Uint16(x[:]))*halfToFloat(binary.LittleEndian.Uint16(y[:])))
	}
	return sum
}

// q4_0Masks holds the constants of the Q4_0 kernels.
type q4_0Masks struct {
	m4    archsimd.Uint8x16
	eight archsimd.Uint8x32
	ones  archsimd.Int16x16
}

func q4_0Consts() q4_0Masks {
	return q4_0Masks{archsimd.BroadcastUint8x16(0x0f), archsimd.BroadcastUint8x32(8), archsimd.BroadcastInt16x16(1)}
}

// q4_0Block returns Σ (q-8)·y of a Q4_0 block x and a Q8_0 block y, in
// int32 lanes.
func q4_0Block(x *[q4_0Bytes]byte, y *[q8_0Bytes]byte, m q4_0Masks) archsimd.Int32x8 {
	q := load16((*[16]byte)(x[2:]))
	var qq archsimd.Uint8x32
	qq = qq.SetLo(q.And(m.m4)).SetHi(q.ReshapeToUint16s().ShiftAllRight(4).ReshapeToUint8s().And(m.m4))
	yv := load32((*[32]byte)(y[2:])).BitsToInt8()
	return qq.DotProductPairsSaturated(yv).Sub(m.eight.DotProductPairsSaturated(yv)).DotProductPairs(m.ones)
}

// q4_0Group returns the integer sums of eight blocks of x and y in int32
// lanes (not inlined: with the block pointers in registers the loads take
// constant offsets).
//
//go:noinline
func q4_0Group(xg *[8 * q4_0Bytes]byte, yg *[8 * q8_0Bytes]byte) archsimd.Int32x8 {
	m := q4_0Consts()
	d := func(j int) archsimd.Int32x8 {
		return q4_0Block((*[q4_0Bytes]byte)(xg[q4_0Bytes*j:]), (*[q8_0Bytes]byte)(yg[q8_0Bytes*j:]), m)
	}
	return hsum8x8(d(0), d(1), d(2), d(3), d(4), d(5), d(6), d(7))
}

// q4_0Halves8 returns the fp16 scales of eight consecutive Q4_0 blocks in
// uint32 lanes.
func q4_0Halves8(g *[8 * q4_0Bytes]byte) archsimd.Uint32x8 {
	f := func(j int) uint16 { return binary.LittleEndian.Uint16(g[q4_0Bytes*j:]) }
	lo := uint64(f(0)) | uint64(f(1))<<16 | uint64(f(2))<<32 | uint64(f(3))<<48
	hi := uint64(f(4)) | uint64(f(5))<<16 | uint64(f(6))<<32 | uint64(f(7))<<48
	var v archsimd.Uint64x2 // built in registers: stores and a wide load would stall
	v = v.SetElem(0, lo).SetElem(1, hi)
	return v.AsUint16x8().ExtendToUint32()
}

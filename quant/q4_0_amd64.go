//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"simd/archsimd"
)

// The AVX2 kernel of Q4_0 (kernels_amd64.go); dotQ4_0Go in q4_0.go is its
// portable twin.

// dotQ4_0AVX2 computes the same as dotQ4_0Ref, bit for bit: VPMADDUBSW of the
// nibbles (0..15) and of 8 with the int8 activations gives the pair sums of
// q·y and 8·y (|·| ≤ 3840), whose difference is (q-8)·y; VPMADDWD with ones
// widens it. Eight blocks at a time, the exact block sums are reduced
// together and scaled in float32 lanes (the reference's operations, lane
// by lane); only the running sum is added block by block.
func dotQ4_0AVX2(n int, w, act []byte) float32 {
	nb := n / qk
	w, act = w[:nb*q4_0Bytes], act[:nb*q8_0Bytes]
	var sum float32
	b := 0
	for ; b+8 <= nb; b += 8 {
		xg := (*[8 * q4_0Bytes]byte)(w[b*q4_0Bytes:])
		yg := (*[8 * q8_0Bytes]byte)(act[b*q8_0Bytes:])
		var ok bool
		if sum, ok = q4_0GroupSum(sum, xg, yg); !ok { // a zero, subnormal, infinite or NaN scale
			m := q4_0Consts()
			for j := range 8 {
				x := (*[q4_0Bytes]byte)(xg[q4_0Bytes*j:])
				y := (*[q8_0Bytes]byte)(yg[q8_0Bytes*j:])
				sum += float32(hsum8(q4_0Block(x, y, m))) * float32(FP16ToFP32(binary.LittleEndian.Uint16(x[:]))*FP16ToFP32(binary.LittleEndian.Uint16(y[:])))
			}
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

// q4_0GroupSum returns sum plus the terms of eight blocks of x and y,
// added one at a time; ok is false, and sum returned unchanged, if one of
// their scales is not a normal fp16 number. Not inlined: with the block
// pointers in registers the loads take constant offsets.
//
//go:noinline
func q4_0GroupSum(sum float32, xg *[8 * q4_0Bytes]byte, yg *[8 * q8_0Bytes]byte) (_ float32, ok bool) {
	m := q4_0Consts()
	d := func(j int) archsimd.Int32x8 {
		return q4_0Block((*[q4_0Bytes]byte)(xg[q4_0Bytes*j:]), (*[q8_0Bytes]byte)(yg[q8_0Bytes*j:]), m)
	}
	s := hsum8x8(d(0), d(1), d(2), d(3), d(4), d(5), d(6), d(7))
	fx, okx := halvesToFloats(q4_0Halves8(xg))
	fy, oky := halvesToFloats(halves8(yg))
	if !okx || !oky {
		return sum, false
	}
	// lane j: float32(isum)·float32(dx·dy) of block j, as the reference
	var p [8]float32
	s.ConvertToFloat32().Mul(fx.Mul(fy)).StoreArray(&p)
	for j := range p {
		sum += p[j]
	}
	return sum, true
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

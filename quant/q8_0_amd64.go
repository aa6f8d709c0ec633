//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"simd/archsimd"
)

// The AVX2 dot of Q8_0 (kernels_amd64.go); dotQ8_0Go in q8_0.go is its
// portable twin.

// dotQ8_0AVX2 computes the same as dotQ8_0Ref, bit for bit. VPMADDUBSW's sign
// trick would saturate on (-128)·(-128) pairs, so both operands are widened
// to int16 and multiplied with VPMADDWD instead. Eight blocks at a time,
// the integer sums are reduced together and scaled in float32 lanes (the
// reference's operations, lane by lane); only the running sum is added
// block by block.
func dotQ8_0AVX2(n int, w, act []byte) float32 {
	nb := n / qk
	w, act = w[:nb*q8_0Bytes], act[:nb*q8_0Bytes]
	var sum float32
	b := 0
	for ; b+8 <= nb; b += 8 {
		xg := (*[8 * q8_0Bytes]byte)(w[b*q8_0Bytes:])
		yg := (*[8 * q8_0Bytes]byte)(act[b*q8_0Bytes:])
		var ok bool
		if sum, ok = q8_0GroupSum(sum, xg, yg); !ok { // a zero, subnormal, infinite or NaN scale
			for j := range 8 {
				x := (*[q8_0Bytes]byte)(xg[q8_0Bytes*j:])
				y := (*[q8_0Bytes]byte)(yg[q8_0Bytes*j:])
				sum += float32(hsum8(q8_0Block(x, y))) * float32(FP16ToFP32(binary.LittleEndian.Uint16(x[:]))*FP16ToFP32(binary.LittleEndian.Uint16(y[:])))
			}
		}
	}
	for ; b < nb; b++ {
		x := (*[q8_0Bytes]byte)(w[b*q8_0Bytes:])
		y := (*[q8_0Bytes]byte)(act[b*q8_0Bytes:])
		sum += float32(hsum8(q8_0Block(x, y))) * float32(halfToFloat(binary.LittleEndian.Uint16(x[:]))*halfToFloat(binary.LittleEndian.Uint16(y[:])))
	}
	return sum
}

// q8_0GroupSum returns sum plus the terms of eight blocks of x and y,
// added one at a time; ok is false, and sum returned unchanged, if one of
// their scales is not a normal fp16 number. Not inlined: with the block
// pointers in registers the loads take constant offsets.
//
//go:noinline
func q8_0GroupSum(sum float32, xg, yg *[8 * q8_0Bytes]byte) (_ float32, ok bool) {
	d := func(j int) archsimd.Int32x8 {
		return q8_0Block((*[q8_0Bytes]byte)(xg[q8_0Bytes*j:]), (*[q8_0Bytes]byte)(yg[q8_0Bytes*j:]))
	}
	s := hsum8x8(d(0), d(1), d(2), d(3), d(4), d(5), d(6), d(7))
	fx, okx := halvesToFloats(halves8(xg))
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

// q8_0Block returns the products of the quants of x and y, pairwise added,
// in int32 lanes.
func q8_0Block(x, y *[q8_0Bytes]byte) archsimd.Int32x8 {
	x0 := load16((*[16]byte)(x[2:])).BitsToInt8().ExtendToInt16()
	x1 := load16((*[16]byte)(x[18:])).BitsToInt8().ExtendToInt16()
	y0 := load16((*[16]byte)(y[2:])).BitsToInt8().ExtendToInt16()
	y1 := load16((*[16]byte)(y[18:])).BitsToInt8().ExtendToInt16()
	return x0.DotProductPairs(y0).Add(x1.DotProductPairs(y1))
}

// halves8 returns the leading fp16 scales of eight consecutive 34-byte
// blocks (Q8_0) in uint32 lanes.
func halves8(g *[8 * q8_0Bytes]byte) archsimd.Uint32x8 {
	f := func(j int) uint16 { return binary.LittleEndian.Uint16(g[q8_0Bytes*j:]) }
	lo := uint64(f(0)) | uint64(f(1))<<16 | uint64(f(2))<<32 | uint64(f(3))<<48
	hi := uint64(f(4)) | uint64(f(5))<<16 | uint64(f(6))<<32 | uint64(f(7))<<48
	var v archsimd.Uint64x2 // built in registers: stores and a wide load would stall
	v = v.SetElem(0, lo).SetElem(1, hi)
	return v.AsUint16x8().ExtendToUint32()
}

//go:build goexperiment.simd

package quant

import (
	"math"
	"simd/archsimd"
)

// Helpers of the amd64 kernels (the *_amd64.go files, AVX2 with
// GOEXPERIMENT=simd, listed in kernels_amd64.go). Each kernel computes the
// same as its portable twin; twins_test.go checks them against each other.
// Unlike wasm SIMD128, AVX2 has the widening dot products VPMADDUBSW
// (uint8×int8 pairs, DotProductPairsSaturated) and VPMADDWD (int16 pairs,
// DotProductPairs); every use below stays clear of VPMADDUBSW's saturation.
//
// The integer part of every block is exact, so the kernels keep each
// block's integer sums in vector lanes and reduce the sums of several
// blocks together (one transpose-like tree of VPHADDD for four or eight
// blocks instead of a horizontal sum per block); the float32 scaling
// happens in vector lanes (the same IEEE operations as the reference's,
// lane by lane) and only the running sum is added block by block, in the
// reference's order.
//
// Two things cost more than the arithmetic here: a vector load of values
// just stored piecewise (a scalar store per lane, or a constant array
// literal on the stack) waits for store forwarding to fail, tens of cycles
// on every call, so block scales are gathered in general registers and
// inserted, and constant patterns come from package tables; and loads of
// a pointer plus a variable offset take an extra LEA each, so the inner
// loops run in small functions whose block pointers are parameters and
// whose offsets are constants.

// hsum8 returns the sum of the eight lanes of v (wrapping, like int32 adds).
func hsum8(v archsimd.Int32x8) int32 {
	s := v.GetLo().Add(v.GetHi())
	return s.GetElem(0) + s.GetElem(1) + s.GetElem(2) + s.GetElem(3)
}

// load32 loads 32 bytes as uint8 lanes.
func load32(b *[32]byte) archsimd.Uint8x32 { return archsimd.LoadUint8x32Array(b) }

// load16 loads 16 bytes as uint8 lanes.
func load16(b *[16]byte) archsimd.Uint8x16 { return archsimd.LoadUint8x16Array(b) }

// halfToFloat is FP16ToFP32(h): normal halves (every real block scale) are
// widened with integer operations, the rest (zeros, subnormals, infinities,
// NaNs) go through the table.
func halfToFloat(h uint16) float32 {
	u := uint32(h)
	if e := u & 0x7c00; e == 0 || e == 0x7c00 {
		return fp16ToFP32Table[h]
	}
	return math.Float32frombits(u&0x8000<<16 | (u&0x7fff<<13 + (127-15)<<23))
}

// hsum8x8 returns the lane sums of v0..v7 (wrapping, like int32 adds):
// lane j of the result is the sum of the eight lanes of vj.
func hsum8x8(v0, v1, v2, v3, v4, v5, v6, v7 archsimd.Int32x8) archsimd.Int32x8 {
	a := v0.ConcatAddPairsGrouped(v1).ConcatAddPairsGrouped(v2.ConcatAddPairsGrouped(v3))
	b := v4.ConcatAddPairsGrouped(v5).ConcatAddPairsGrouped(v6.ConcatAddPairsGrouped(v7))
	// per 128-bit half: a = the half-sums of v0..v3, b of v4..v7
	return a.ConcatPermute128Scalars(0, 2, b).Add(a.ConcatPermute128Scalars(1, 3, b))
}

// hsum4x2x8 returns, for four pairs of vectors (aj, bj), the lane sums
// of aj in lane 2j and of bj in lane 2j+1 (wrapping, like int32 adds);
// pj must be aj.ConcatAddPairsGrouped(bj).
func hsum4x2x8(p0, p1, p2, p3 archsimd.Int32x8) archsimd.Int32x8 {
	t01 := p0.ConcatAddPairsGrouped(p1) // per half: a0, b0, a1, b1
	t23 := p2.ConcatAddPairsGrouped(p3)
	return t01.ConcatPermute128Scalars(0, 2, t23).Add(t01.ConcatPermute128Scalars(1, 3, t23))
}

// q4KMinShuffle is the VPSHUFB pattern that turns eight bytes broadcast to
// every 64-bit lane into the int16 lanes m0 m0 m1 m1 m2 m2 m3 m3 | m4 m4 …
// m7 m7 (a negative index gives a zero byte).
var q4KMinShuffle = [32]int8{
	0, -1, 0, -1, 1, -1, 1, -1, 2, -1, 2, -1, 3, -1, 3, -1,
	4, -1, 4, -1, 5, -1, 5, -1, 6, -1, 6, -1, 7, -1, 7, -1,
}

// byteBroadcastShuffle returns the VPSHUFB pattern that puts byte k of each
// 128-bit lane, zero-extended, in every int16 lane.
func byteBroadcastShuffle(k int) archsimd.Int8x32 {
	return archsimd.BroadcastInt16x16(int16(k) - 256).AsInt8x32()
}

// halvesToFloats widens eight fp16 values (the low 16 bits of the lanes of
// h) to float32 exactly, like FP16ToFP32. ok is false if one of them is not
// a normal number (zero, subnormal, infinity or NaN): the caller then takes
// its scalar path.
func halvesToFloats(h archsimd.Uint32x8) (f archsimd.Float32x8, ok bool) {
	c := &halfConsts // loads: broadcasting constants takes three instructions each
	exp := archsimd.LoadUint32x8Array(&c[0])
	e := h.And(exp)
	var zero archsimd.Uint32x8
	if e.Equal(zero).Or(e.Equal(exp)).ToBits() != 0 {
		return f, false
	}
	mag := h.And(archsimd.LoadUint32x8Array(&c[1])).ShiftAllLeft(13).Add(archsimd.LoadUint32x8Array(&c[2]))
	return mag.Or(h.And(archsimd.LoadUint32x8Array(&c[3])).ShiftAllLeft(16)).AsFloat32x8(), true
}

// halfConsts are halvesToFloats' masks: exponent, magnitude, exponent
// rebias, sign.
var halfConsts = [4][8]uint32{
	{0x7c00, 0x7c00, 0x7c00, 0x7c00, 0x7c00, 0x7c00, 0x7c00, 0x7c00},
	{0x7fff, 0x7fff, 0x7fff, 0x7fff, 0x7fff, 0x7fff, 0x7fff, 0x7fff},
	{112 << 23, 112 << 23, 112 << 23, 112 << 23, 112 << 23, 112 << 23, 112 << 23, 112 << 23},
	{0x8000, 0x8000, 0x8000, 0x8000, 0x8000, 0x8000, 0x8000, 0x8000},
}

// addLanes0145 returns o + t0 + t1 + t2 + t3, added one at a time in that
// order (float32 additions, as the references' running sums do), where
// lanes 0, 1, 4 and 5 of v hold t0..t3. The additions happen in lane 0 of
// a vector: storing v and reloading its lanes would stall store forwarding.
func addLanes0145(o float32, v archsimd.Float32x8) float32 {
	lo, hi := v.GetLo(), v.GetHi()
	s := archsimd.BroadcastFloat32x4(o).Add(lo)
	s = s.Add(lo.ConcatPermuteScalars(1, 1, 1, 1, lo))
	s = s.Add(hi)
	return s.Add(hi.ConcatPermuteScalars(1, 1, 1, 1, hi)).GetElem(0)
}

// Shifts and broadcasts whose operands come from memory: archsimd's
// ShiftAll* and Broadcast* move their scalar from a general register by a
// legacy-SSE MOVQ/MOVD, and a legacy-SSE instruction between VEX ones costs
// an AVX-SSE transition (golang/go#80835; measured on AMD EPYC Zen 3 too,
// where a block's few such moves took most of a prefill kernel's time).

// shiftCounts[s] is s in every uint32 lane, srl's and sll's count vectors.
var shiftCounts = func() (t [8][8]uint32) {
	for s := range t {
		for i := range t[s] {
			t[s][i] = uint32(s)
		}
	}
	return t
}()

// srl shifts v's 32-bit lanes right by s < 8 (VPSRLVD): each byte gets its
// own bits s.. and the next byte's low bits above them, which the callers
// mask off.
func srl(v archsimd.Uint8x32, s int) archsimd.Uint8x32 {
	return v.AsUint32x8().ShiftRight(archsimd.LoadUint32x8Array(&shiftCounts[s&7])).AsUint8x32()
}

// sll shifts v's 32-bit lanes left by s < 8 (VPSLLVD); callers shift bytes
// whose bits stay within the byte.
func sll(v archsimd.Uint8x32, s int) archsimd.Uint8x32 {
	return v.AsUint32x8().ShiftLeft(archsimd.LoadUint32x8Array(&shiftCounts[s&7])).AsUint8x32()
}

// broadcast64 is archsimd.BroadcastUint64x4(x) by VPINSRQ and VPERMD
// (VEX forms; a local array would be copied by legacy-SSE MOVUPS).
func broadcast64(x uint64) archsimd.Uint64x4 {
	var u archsimd.Uint64x2
	var v archsimd.Uint64x4
	return v.SetLo(u.SetElem(0, x)).AsUint32x8().Permute(archsimd.LoadUint32x8Array(&pairIndices)).AsUint64x4()
}

// pairIndices is VPERMD's pattern putting lanes 0, 1 in every pair.
var pairIndices = [8]uint32{0, 1, 0, 1, 0, 1, 0, 1}

// halfBits returns the bits of halfToFloat(h), in general registers only.
func halfBits(h uint16) uint32 {
	u := uint32(h)
	if e := u & 0x7c00; e == 0 || e == 0x7c00 {
		return math.Float32bits(fp16ToFP32Table[h])
	}
	return u&0x8000<<16 | (u&0x7fff<<13 + (127-15)<<23)
}

// broadcast32 is the float32 of bits in every lane, by VPINSRD and VPERMD.
func broadcast32(bits uint32) archsimd.Float32x8 {
	var u archsimd.Uint32x4
	var v, zero archsimd.Uint32x8
	return v.SetLo(u.SetElem(0, bits)).Permute(zero).AsFloat32x8()
}

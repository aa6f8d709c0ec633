//go:build goexperiment.simd

package quant

import (
	"encoding/binary"
	"math"
	"simd/archsimd"
)

// The wasm SIMD128 kernel of Q8_K (kernels_wasm.go); quantizeQ8_KRef in
// q8_k.go is its portable twin.

// quantizeQ8_KSIMD128 computes the same as quantizeQ8_KRef, byte for byte. The
// value of largest magnitude comes from the lane maxima and minima; only
// when +amax and -amax both occur is the block scanned for the first of
// them, as the reference picks it. Blocks holding a NaN or an infinity go
// to the reference.
func quantizeQ8_KSIMD128(dst []byte, src []float32) {
	nb := len(src) / qkK
	src, dst = src[:nb*qkK], dst[:nb*q8_KBytes]
	for b := range nb {
		x := (*[qkK]float32)(src[b*qkK:])
		blk := (*[q8_KBytes]byte)(dst[b*q8_KBytes:])
		hi := archsimd.LoadFloat32x4Array((*[4]float32)(x[:]))
		lo := hi
		for i := 4; i < qkK; i += 4 {
			v := archsimd.LoadFloat32x4Array((*[4]float32)(x[i:]))
			hi, lo = hi.Max(v), lo.Min(v)
		}
		vhi := max(hi.GetElem(0), hi.GetElem(1), hi.GetElem(2), hi.GetElem(3))
		vlo := min(lo.GetElem(0), lo.GetElem(1), lo.GetElem(2), lo.GetElem(3))
		amax := max(vhi, -vlo)
		if !(amax <= math.MaxFloat32) { // NaN or ±Inf
			quantizeQ8_KRef(blk[:], x[:])
			continue
		}
		if amax == 0 {
			clear(blk[:])
			continue
		}
		vmax := vhi
		if vhi == -vlo { // both signs reach amax: the first one counts
			for _, v := range x {
				if absf(v) == amax {
					vmax = v
					break
				}
			}
		} else if -vlo > vhi {
			vmax = vlo
		}
		iscale := -127 / vmax
		vs := archsimd.BroadcastFloat32x4(iscale)
		magic := archsimd.BroadcastFloat32x4(12582912)
		mant := archsimd.BroadcastUint32x4(0x007fffff)
		off := archsimd.BroadcastInt32x4(0x00400000)
		top := archsimd.BroadcastInt32x4(127)
		for j := range qkK / 16 {
			var q [4]archsimd.Int32x4
			for k := range q {
				v := archsimd.LoadFloat32x4Array((*[4]float32)(x[16*j+4*k:]))
				// nearestInt(iscale*v), then min(127, ·)
				q[k] = v.Mul(vs).Add(magic).ToBits().And(mant).BitsToInt32().Sub(off).Min(top)
			}
			packI8(q).StoreArray((*[16]byte)(blk[4+16*j:]))
			s := hsum(q[0].Add(q[1]).Add(q[2].Add(q[3])))
			binary.LittleEndian.PutUint16(blk[4+qkK+2*j:], uint16(int16(s)))
		}
		binary.LittleEndian.PutUint32(blk[:], math.Float32bits(1/iscale))
	}
}

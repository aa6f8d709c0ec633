//go:build goexperiment.simd

package quant

import "simd/archsimd"

// The wasm SIMD128 kernels of the unquantised formats (kernels_wasm.go);
// dotF32Ref, dotF16Ref and dotBF16Ref in float.go are their portable twins.
// Each keeps the references' 32 running sums in eight four-lane vectors
// (sum k in lane k%4 of vector k/4), so the lanes add the same products in
// the same order, and reduces them as the references do. fp16 values widen
// exactly (widenF16x4); bfloat16 values are the top halves of float32s.

// floatChunk is how many elements the F16 kernels widen at a time (a
// multiple of 32: 2 KB of float32 on the stack).
const floatChunk = 512

// bf16x4At widens the four bfloat16 values at b[0:8] (lo) or b[8:16] (hi).
func bf16x4At(b *[16]byte, hi bool) archsimd.Float32x4 {
	h := loadU8(b).ReshapeToUint16s()
	if hi {
		return h.ExtendHi4ToUint32().ShiftAllLeft(16).BitsToFloat32()
	}
	return h.ExtendLo4ToUint32().ShiftAllLeft(16).BitsToFloat32()
}

// f32x4At loads the four float32 values at b[0:16].
func f32x4At(b *[16]byte) archsimd.Float32x4 { return loadU8(b).ReshapeToUint32s().BitsToFloat32() }

// laneHalves returns the four-lane t of laneSum32 from the running sums
// in a0..a7 (sum k in lane k%4 of ak/4): t[l] = v(l) + v(l+4), v(l) =
// (s[l] + s[16+l]) + (s[8+l] + s[24+l]).
func laneHalves(a0, a1, a2, a3, a4, a5, a6, a7 archsimd.Float32x4) archsimd.Float32x4 {
	return a0.Add(a4).Add(a2.Add(a6)).Add(a1.Add(a5).Add(a3.Add(a7)))
}

// sumF16 is laneSum32 of the four lanes t from laneHalves.
func sumF16(t archsimd.Float32x4) float32 {
	return (t.GetElem(0) + t.GetElem(1)) + (t.GetElem(2) + t.GetElem(3))
}

// sumBF16 is laneSum32BF16 of the four lanes t from laneHalves.
func sumBF16(t archsimd.Float32x4) float32 {
	return (t.GetElem(0) + t.GetElem(2)) + (t.GetElem(1) + t.GetElem(3))
}

// The dots' loops keep the running sums in eight variables: an array of
// vectors would live in (linear) memory.

func dotF16SIMD128(n int, w, act []byte) float32 {
	w, act = w[:2*n], act[:2*n]
	var (
		wf, af [floatChunk]float32
		a      [8]archsimd.Float32x4
	)
	np := n &^ 31
	for c := 0; c < np; c += floatChunk {
		m := min(floatChunk, np-c)
		widenF16SIMD128(wf[:m], w[2*c:])
		widenF16SIMD128(af[:m], act[2*c:])
		laneDots32SIMD128(wf[:m], af[:m], &a)
	}
	sum := float64(sumF16(laneHalves(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7])))
	for i := np; i < n; i++ {
		sum += float64(fp16At(w[2*i:]) * fp16At(act[2*i:]))
	}
	return float32(sum)
}

// widenF16SIMD128 sets dst[i] to the fp16 value at src[2i:], for i <
// len(dst), a multiple of 8. The F16 kernels widen a chunk at a time and
// then dot the float32 values: the conversion's constants and the 32 lane
// sums together do not fit the registers, and spilled vectors live in
// linear memory.
func widenF16SIMD128(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	for i := 0; i+8 <= len(dst); i += 8 {
		h := loadU8((*[16]byte)(src[2*i:])).ReshapeToUint16s()
		widenF16x4(h.ExtendLo4ToUint32()).StoreArray((*[4]float32)(dst[i:]))
		widenF16x4(h.ExtendHi4ToUint32()).StoreArray((*[4]float32)(dst[i+4:]))
	}
}

// widenF16x4 is fp16x4 in fewer operations: the exponent and mantissa bits
// moved to their float32 places read as a float32 are the fp16 value
// times 2^-112, exactly (a subnormal fp16 value becomes a subnormal
// float32), and the multiplication by 2^112 is exact; infinities and NaNs
// get the all-ones exponent (the NaN payload kept); the sign is or-ed in
// last.
func widenF16x4(u archsimd.Uint32x4) archsimd.Float32x4 {
	em := u.And(archsimd.BroadcastUint32x4(0x7fff)).ShiftAllLeft(13)
	bits := em.BitsToFloat32().Mul(archsimd.BroadcastFloat32x4(0x1p112)).ToBits()
	bits = em.Or(archsimd.BroadcastUint32x4(0x7f800000)).IfElse(em.GreaterEqual(archsimd.BroadcastUint32x4(0x7c00<<13)), bits)
	return bits.Or(u.And(archsimd.BroadcastUint32x4(0x8000)).ShiftAllLeft(16)).BitsToFloat32()
}

// laneDots32SIMD128 adds the products x[i]·y[i] to the 32 running sums
// in a (sum k in lane k%4 of a[k/4]), len(x) a multiple of 32.
func laneDots32SIMD128(x, y []float32, a *[8]archsimd.Float32x4) {
	y = y[:len(x)]
	a0, a1, a2, a3, a4, a5, a6, a7 := a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
	for i := 0; i+32 <= len(x); i += 32 {
		xv, yv := (*[32]float32)(x[i:]), (*[32]float32)(y[i:])
		p := func(v int) archsimd.Float32x4 {
			return archsimd.LoadFloat32x4Array((*[4]float32)(xv[4*v:])).Mul(archsimd.LoadFloat32x4Array((*[4]float32)(yv[4*v:])))
		}
		a0, a1, a2, a3 = a0.Add(p(0)), a1.Add(p(1)), a2.Add(p(2)), a3.Add(p(3))
		a4, a5, a6, a7 = a4.Add(p(4)), a5.Add(p(5)), a6.Add(p(6)), a7.Add(p(7))
	}
	*a = [8]archsimd.Float32x4{a0, a1, a2, a3, a4, a5, a6, a7}
}

func dotBF16SIMD128(n int, w, act []byte) float32 {
	w, act = w[:2*n], act[:2*n]
	var a0, a1, a2, a3, a4, a5, a6, a7 archsimd.Float32x4
	np := n &^ 31
	for i := 0; i < 2*np; i += 64 {
		x, y := (*[64]byte)(w[i:]), (*[64]byte)(act[i:])
		x0, y0 := (*[16]byte)(x[0:]), (*[16]byte)(y[0:])
		x1, y1 := (*[16]byte)(x[16:]), (*[16]byte)(y[16:])
		x2, y2 := (*[16]byte)(x[32:]), (*[16]byte)(y[32:])
		x3, y3 := (*[16]byte)(x[48:]), (*[16]byte)(y[48:])
		a0 = a0.Add(bf16x4At(x0, false).Mul(bf16x4At(y0, false)))
		a1 = a1.Add(bf16x4At(x0, true).Mul(bf16x4At(y0, true)))
		a2 = a2.Add(bf16x4At(x1, false).Mul(bf16x4At(y1, false)))
		a3 = a3.Add(bf16x4At(x1, true).Mul(bf16x4At(y1, true)))
		a4 = a4.Add(bf16x4At(x2, false).Mul(bf16x4At(y2, false)))
		a5 = a5.Add(bf16x4At(x2, true).Mul(bf16x4At(y2, true)))
		a6 = a6.Add(bf16x4At(x3, false).Mul(bf16x4At(y3, false)))
		a7 = a7.Add(bf16x4At(x3, true).Mul(bf16x4At(y3, true)))
	}
	sum := float64(sumBF16(laneHalves(a0, a1, a2, a3, a4, a5, a6, a7)))
	for i := np; i < n; i++ {
		sum += float64(bf16At(w[2*i:]) * bf16At(act[2*i:]))
	}
	return float32(sum)
}

func dotF32SIMD128(n int, w, act []byte) float32 {
	w, act = w[:4*n], act[:4*n]
	var a0, a1, a2, a3, a4, a5, a6, a7 archsimd.Float32x4
	np := n &^ 31
	for i := 0; i < 4*np; i += 128 {
		x, y := (*[128]byte)(w[i:]), (*[128]byte)(act[i:])
		p := func(v int) archsimd.Float32x4 {
			return f32x4At((*[16]byte)(x[16*v:])).Mul(f32x4At((*[16]byte)(y[16*v:])))
		}
		a0, a1, a2, a3 = a0.Add(p(0)), a1.Add(p(1)), a2.Add(p(2)), a3.Add(p(3))
		a4, a5, a6, a7 = a4.Add(p(4)), a5.Add(p(5)), a6.Add(p(6)), a7.Add(p(7))
	}
	sum := sumF16(laneHalves(a0, a1, a2, a3, a4, a5, a6, a7))
	for i := np; i < n; i++ {
		sum += float32(f32At(w[4*i:]) * f32At(act[4*i:]))
	}
	return sum
}

// dotNF16SIMD128 is dotF16SIMD128 for several activations: the row is
// widened to float32 once, floatChunk weights at a time, into a stack
// buffer, and each activation's running sums run over the chunk.
func dotNF16SIMD128(n int, w []byte, acts [][]byte, out []float32) {
	w = w[:2*n]
	acts = acts[:min(len(acts), MaxDotN)]
	out = out[:len(acts)]
	np := n &^ 31
	var (
		wf, af [floatChunk]float32
		acc    [MaxDotN][8]archsimd.Float32x4 // activation k's running sums
	)
	for c := 0; c < np; c += floatChunk {
		m := min(floatChunk, np-c)
		widenF16SIMD128(wf[:m], w[2*c:])
		for k, a := range acts {
			widenF16SIMD128(af[:m], a[2*c:])
			laneDots32SIMD128(wf[:m], af[:m], &acc[k])
		}
	}
	for k, a := range acts {
		s := &acc[k]
		sum := float64(sumF16(laneHalves(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7])))
		for i := np; i < n; i++ {
			sum += float64(fp16At(w[2*i:]) * fp16At(a[2*i:]))
		}
		out[k] = float32(sum)
	}
}

func dotNBF16SIMD128(n int, w []byte, acts [][]byte, out []float32) {
	dotEach(dotBF16SIMD128, n, w, acts, out)
}

func dotNF32SIMD128(n int, w []byte, acts [][]byte, out []float32) {
	dotEach(dotF32SIMD128, n, w, acts, out)
}

// f16Prep is the room for the widened activations of dotRowsNF16SIMD128,
// as large as a variable on the stack can be: a whole batch for rows up
// to 2048 long, 5 activations at a time for TinyLlama's FFN rows (5632).
const f16Prep = dotRowsNPrep / 4

func dotRowsNBF16SIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	eachRow(dotNBF16SIMD128, 2*n, n, w, acts, outs, at)
}

func dotRowsNF32SIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	eachRow(dotNF32SIMD128, 4*n, n, w, acts, outs, at)
}

// floatRowsMax bounds the row length dotRowsF16SIMD128 widens its
// activation for on the stack (32 KB of float32).
const floatRowsMax = 8192

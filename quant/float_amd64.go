//go:build goexperiment.simd

package quant

import "simd/archsimd"

// The AVX2 kernels of the unquantised formats (kernels_amd64.go); dotF32Ref,
// dotF16Ref and dotBF16Ref in float.go are their portable twins. Each keeps
// the references' 32 running sums in four eight-lane vectors (sum k in lane
// k%8 of vector k/8), so the lanes add the same products in the same order,
// and reduces them as the references do. fp16 values widen as fp16x8
// (vec_amd64.go) does, exactly; bfloat16 values are the top halves of
// float32s.

// floatChunk is how many weights of a row dotNF16AVX2 widens at a time
// (a multiple of 32: 2 KB of float32 on the stack).
const floatChunk = 512

// f16x8At widens the eight fp16 values at b[0:16].
func f16x8At(b *[16]byte) archsimd.Float32x8 { return fp16x8(load16(b).AsUint16x8()) }

// bf16x8At widens the eight bfloat16 values at b[0:16].
func bf16x8At(b *[16]byte) archsimd.Float32x8 {
	return load16(b).AsUint16x8().ExtendToUint32().ShiftAllLeft(16).AsFloat32x8()
}

// f32x8At loads the eight float32 values at b[0:32].
func f32x8At(b *[32]byte) archsimd.Float32x8 { return load32(b).AsFloat32x8() }

// laneSum32x8 is laneSum32 of the running sums in v0..v3.
func laneSum32x8(v0, v1, v2, v3 archsimd.Float32x8) float32 {
	v := v0.Add(v2).Add(v1.Add(v3))
	t := v.GetLo().Add(v.GetHi())
	return (t.GetElem(0) + t.GetElem(1)) + (t.GetElem(2) + t.GetElem(3))
}

// laneSum32BF16x8 is laneSum32BF16 of the running sums in v0..v3.
func laneSum32BF16x8(v0, v1, v2, v3 archsimd.Float32x8) float32 {
	v := v0.Add(v2).Add(v1.Add(v3))
	t := v.GetLo().Add(v.GetHi())
	return (t.GetElem(0) + t.GetElem(2)) + (t.GetElem(1) + t.GetElem(3))
}

func dotF16AVX2(n int, w, act []byte) float32 {
	w, act = w[:2*n], act[:2*n]
	var a0, a1, a2, a3 archsimd.Float32x8
	np := n &^ 31
	for i := 0; i < 2*np; i += 64 {
		x, y := (*[64]byte)(w[i:]), (*[64]byte)(act[i:])
		a0 = a0.Add(f16x8At((*[16]byte)(x[0:])).Mul(f16x8At((*[16]byte)(y[0:]))))
		a1 = a1.Add(f16x8At((*[16]byte)(x[16:])).Mul(f16x8At((*[16]byte)(y[16:]))))
		a2 = a2.Add(f16x8At((*[16]byte)(x[32:])).Mul(f16x8At((*[16]byte)(y[32:]))))
		a3 = a3.Add(f16x8At((*[16]byte)(x[48:])).Mul(f16x8At((*[16]byte)(y[48:]))))
	}
	sum := float64(laneSum32x8(a0, a1, a2, a3))
	for i := np; i < n; i++ {
		sum += float64(fp16At(w[2*i:]) * fp16At(act[2*i:]))
	}
	return float32(sum)
}

func dotBF16AVX2(n int, w, act []byte) float32 {
	w, act = w[:2*n], act[:2*n]
	var a0, a1, a2, a3 archsimd.Float32x8
	np := n &^ 31
	for i := 0; i < 2*np; i += 64 {
		x, y := (*[64]byte)(w[i:]), (*[64]byte)(act[i:])
		a0 = a0.Add(bf16x8At((*[16]byte)(x[0:])).Mul(bf16x8At((*[16]byte)(y[0:]))))
		a1 = a1.Add(bf16x8At((*[16]byte)(x[16:])).Mul(bf16x8At((*[16]byte)(y[16:]))))
		a2 = a2.Add(bf16x8At((*[16]byte)(x[32:])).Mul(bf16x8At((*[16]byte)(y[32:]))))
		a3 = a3.Add(bf16x8At((*[16]byte)(x[48:])).Mul(bf16x8At((*[16]byte)(y[48:]))))
	}
	sum := float64(laneSum32BF16x8(a0, a1, a2, a3))
	for i := np; i < n; i++ {
		sum += float64(bf16At(w[2*i:]) * bf16At(act[2*i:]))
	}
	return float32(sum)
}

func dotF32AVX2(n int, w, act []byte) float32 {
	w, act = w[:4*n], act[:4*n]
	var a0, a1, a2, a3 archsimd.Float32x8
	np := n &^ 31
	for i := 0; i < 4*np; i += 128 {
		x, y := (*[128]byte)(w[i:]), (*[128]byte)(act[i:])
		a0 = a0.Add(f32x8At((*[32]byte)(x[0:])).Mul(f32x8At((*[32]byte)(y[0:]))))
		a1 = a1.Add(f32x8At((*[32]byte)(x[32:])).Mul(f32x8At((*[32]byte)(y[32:]))))
		a2 = a2.Add(f32x8At((*[32]byte)(x[64:])).Mul(f32x8At((*[32]byte)(y[64:]))))
		a3 = a3.Add(f32x8At((*[32]byte)(x[96:])).Mul(f32x8At((*[32]byte)(y[96:]))))
	}
	sum := laneSum32x8(a0, a1, a2, a3)
	for i := np; i < n; i++ {
		sum += float32(f32At(w[4*i:]) * f32At(act[4*i:]))
	}
	return sum
}

// dotNF16AVX2 is dotF16AVX2 for several activations: the row is widened
// to float32 once, floatChunk weights at a time, into a stack buffer, and
// each activation's four accumulators run over the chunk.
func dotNF16AVX2(n int, w []byte, acts [][]byte, out []float32) {
	w = w[:2*n]
	out = out[:len(acts)]
	np := n &^ 31
	var (
		wf  [floatChunk]float32
		acc [MaxDotN][4]archsimd.Float32x8
	)
	acts = acts[:min(len(acts), MaxDotN)]
	for c := 0; c < np; c += floatChunk {
		m := min(floatChunk, np-c)
		for i := 0; i < m; i += 8 {
			f16x8At((*[16]byte)(w[2*(c+i):])).StoreArray((*[8]float32)(wf[i:]))
		}
		for k, a := range acts {
			a = a[2*c : 2*(c+m)]
			a0, a1, a2, a3 := acc[k][0], acc[k][1], acc[k][2], acc[k][3]
			for i := 0; i < m; i += 32 {
				y := (*[64]byte)(a[2*i:])
				x := (*[32]float32)(wf[i:])
				a0 = a0.Add(archsimd.LoadFloat32x8Array((*[8]float32)(x[0:])).Mul(f16x8At((*[16]byte)(y[0:]))))
				a1 = a1.Add(archsimd.LoadFloat32x8Array((*[8]float32)(x[8:])).Mul(f16x8At((*[16]byte)(y[16:]))))
				a2 = a2.Add(archsimd.LoadFloat32x8Array((*[8]float32)(x[16:])).Mul(f16x8At((*[16]byte)(y[32:]))))
				a3 = a3.Add(archsimd.LoadFloat32x8Array((*[8]float32)(x[24:])).Mul(f16x8At((*[16]byte)(y[48:]))))
			}
			acc[k] = [4]archsimd.Float32x8{a0, a1, a2, a3}
		}
	}
	for k, a := range acts {
		sum := float64(laneSum32x8(acc[k][0], acc[k][1], acc[k][2], acc[k][3]))
		for i := np; i < n; i++ {
			sum += float64(fp16At(w[2*i:]) * fp16At(a[2*i:]))
		}
		out[k] = float32(sum)
	}
}

func dotNBF16AVX2(n int, w []byte, acts [][]byte, out []float32) {
	dotEach(dotBF16AVX2, n, w, acts, out)
}

func dotNF32AVX2(n int, w []byte, acts [][]byte, out []float32) {
	dotEach(dotF32AVX2, n, w, acts, out)
}

func dotRowsNF16AVX2(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	eachRow(dotNF16AVX2, 2*n, n, w, acts, outs, at)
}

func dotRowsNBF16AVX2(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	eachRow(dotNBF16AVX2, 2*n, n, w, acts, outs, at)
}

func dotRowsNF32AVX2(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	eachRow(dotNF32AVX2, 4*n, n, w, acts, outs, at)
}

// floatRowsMax bounds the row length dotRowsF16AVX2 widens its activation
// for on the stack (32 KB of float32).
const floatRowsMax = 8192

// dotRowsF16AVX2 is dotF16AVX2 over consecutive rows, the activation
// widened to float32 once per call (exactly: the rows then multiply the
// same values in the same lanes).
func dotRowsF16AVX2(n int, w, act []byte, out []float32) {
	if n > floatRowsMax || len(out) < 2 {
		dotRows(dotF16AVX2, n, 2*n, w, act, out)
		return
	}
	act = act[:2*n]
	w = w[:len(out)*2*n]
	var yf [floatRowsMax]float32
	i := 0
	for ; i+8 <= n; i += 8 {
		f16x8At((*[16]byte)(act[2*i:])).StoreArray((*[8]float32)(yf[i:]))
	}
	for ; i < n; i++ {
		yf[i] = fp16At(act[2*i:])
	}
	for r := range out {
		out[r] = dotF16F32AVX2(n, w[2*n*r:2*n*(r+1)], yf[:n])
	}
}

// dotF16F32AVX2 is dotF16AVX2 with the activation widened already.
func dotF16F32AVX2(n int, w []byte, y []float32) float32 {
	w, y = w[:2*n], y[:n]
	var a0, a1, a2, a3 archsimd.Float32x8
	np := n &^ 31
	for i := 0; i < np; i += 32 {
		x, yv := (*[64]byte)(w[2*i:]), (*[32]float32)(y[i:])
		a0 = a0.Add(f16x8At((*[16]byte)(x[0:])).Mul(archsimd.LoadFloat32x8Array((*[8]float32)(yv[0:]))))
		a1 = a1.Add(f16x8At((*[16]byte)(x[16:])).Mul(archsimd.LoadFloat32x8Array((*[8]float32)(yv[8:]))))
		a2 = a2.Add(f16x8At((*[16]byte)(x[32:])).Mul(archsimd.LoadFloat32x8Array((*[8]float32)(yv[16:]))))
		a3 = a3.Add(f16x8At((*[16]byte)(x[48:])).Mul(archsimd.LoadFloat32x8Array((*[8]float32)(yv[24:]))))
	}
	sum := float64(laneSum32x8(a0, a1, a2, a3))
	for i := np; i < n; i++ {
		sum += float64(fp16At(w[2*i:]) * y[i])
	}
	return float32(sum)
}

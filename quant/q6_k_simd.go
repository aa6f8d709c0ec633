//go:build goexperiment.simd && wasm

package quant

import "simd/archsimd"

// The wasm SIMD128 kernel of Q6_K; q6_k_scalar.go has its portable twin.

// dotQ6_K computes the same as dotQ6_KRef, bit for bit. It walks the
// block in storage order like the portable kernel: 16 lanes of ql[l],
// ql[l+32] and qh[l] give the quants of four 16-weight sub-blocks. The
// quants (-32..31) times int8 activations meet two to an int16 lane
// (≤ 8192) and are multiplied by the int8 sub-block scale into int32
// (ql at 64h+l and 64h+l+32, qh at 128+32h+l, scales at 192+8h).
// Four blocks go at once, as in dotQ4_K.
func dotQ6_K(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*q6_KBytes], act[:nb*q8_KBytes]
	var sum float32
	var acc [4]archsimd.Int32x4
	for b := 0; b < nb; b += 4 {
		k := min(4, nb-b)
		for j := range k {
			x := (*[q6_KBytes]byte)(w[(b+j)*q6_KBytes:])
			yb := (*[q8_KBytes]byte)(act[(b+j)*q8_KBytes:])
			// half h, lanes l in [16*half, 16*half+16): the quants of
			// sub-blocks 2j+half of the half, activations 32j+l
			q0, q1, q2, q3 := q6KQuants(loadU8((*[16]byte)(x[0:])), loadU8((*[16]byte)(x[32:])), loadU8((*[16]byte)(x[128:])))
			a := q6KDot(q0, q1, q2, q3, (*[112]byte)(yb[4:]), x[192], x[194], x[196], x[198])
			q0, q1, q2, q3 = q6KQuants(loadU8((*[16]byte)(x[16:])), loadU8((*[16]byte)(x[48:])), loadU8((*[16]byte)(x[144:])))
			a = a.Add(q6KDot(q0, q1, q2, q3, (*[112]byte)(yb[4+16:]), x[193], x[195], x[197], x[199]))
			q0, q1, q2, q3 = q6KQuants(loadU8((*[16]byte)(x[64:])), loadU8((*[16]byte)(x[96:])), loadU8((*[16]byte)(x[160:])))
			a = a.Add(q6KDot(q0, q1, q2, q3, (*[112]byte)(yb[4+128:]), x[200], x[202], x[204], x[206]))
			q0, q1, q2, q3 = q6KQuants(loadU8((*[16]byte)(x[80:])), loadU8((*[16]byte)(x[112:])), loadU8((*[16]byte)(x[176:])))
			acc[j] = a.Add(q6KDot(q0, q1, q2, q3, (*[112]byte)(yb[4+128+16:]), x[201], x[203], x[205], x[207]))
		}
		if k < 4 {
			for j := range k {
				sum += fp16At(w[(b+j)*q6_KBytes+208:]) * f32At(act[(b+j)*q8_KBytes:]) * float32(hsum(acc[j]))
			}
			break
		}
		x, y := w[b*q6_KBytes:], act[b*q8_KBytes:]
		yd := archsimd.BroadcastFloat32x4(f32At(y)).SetElem(1, f32At(y[q8_KBytes:])).
			SetElem(2, f32At(y[2*q8_KBytes:])).SetElem(3, f32At(y[3*q8_KBytes:]))
		d := fp16x4At(x[208:], q6_KBytes).Mul(yd)
		sum = addLanes(sum, d.Mul(hsum4(acc[0], acc[1], acc[2], acc[3]).ConvertToFloat32()))
	}
	return sum
}

// q6KQuants returns the quants (-32..31) at ql[l], ql[l+32] (lo, hi) and
// qh[l]: those of sub-blocks 0, 2, 4 and 6 of the lanes' half.
func q6KQuants(lo, hi, qh archsimd.Uint8x16) (q0, q1, q2, q3 archsimd.Int8x16) {
	m4 := archsimd.BroadcastUint8x16(0x0f)
	m30 := archsimd.BroadcastUint8x16(0x30)
	off := archsimd.BroadcastInt8x16(32)
	q0 = lo.And(m4).Or(qh.ShiftAllLeft(4).And(m30)).BitsToInt8().Sub(off)
	q1 = hi.And(m4).Or(qh.ShiftAllLeft(2).And(m30)).BitsToInt8().Sub(off)
	q2 = lo.ShiftAllRight(4).Or(qh.And(m30)).BitsToInt8().Sub(off)
	q3 = hi.ShiftAllRight(4).Or(qh.ShiftAllRight(2).And(m30)).BitsToInt8().Sub(off)
	return
}

// q6KDot returns int32 lanes summing to Σ_j s_j·Σ q_j·y[32j:32j+16].
func q6KDot(q0, q1, q2, q3 archsimd.Int8x16, y *[112]byte, s0, s1, s2, s3 byte) archsimd.Int32x4 {
	return scaled(dot8(q0, loadI8((*[16]byte)(y[:]))), s0).
		Add(scaled(dot8(q1, loadI8((*[16]byte)(y[32:]))), s1)).
		Add(scaled(dot8(q2, loadI8((*[16]byte)(y[64:]))), s2).
			Add(scaled(dot8(q3, loadI8((*[16]byte)(y[96:]))), s3)))
}

// scaled returns the int32 lane sums of s times the int8 scale sc.
func scaled(s archsimd.Int16x8, sc byte) archsimd.Int32x4 {
	v := archsimd.BroadcastInt16x8(int16(int8(sc)))
	return s.MulWidenLo(v).Add(s.MulWidenHi(v))
}

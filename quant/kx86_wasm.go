//go:build goexperiment.simd

package quant

// The wasm SIMD128 Dot and DotN kernels of Q2_K, Q3_K and Q5_K (the
// K-quants summed in ggml's x86 order; their DotRows and DotRowsN kernels
// are in q5_k_wasm.go, q3_k_wasm.go and q2_k_wasm.go, which fall back on
// x86RowsN for rows too long for their buffers) and the DotN and DotRowsN
// kernels of IQ4_XS (kernels_wasm.go; its Dot and DotRows, in
// iq4_xs_wasm.go, measured faster for one activation); dotQ2_KGo,
// dotQ3_KGo, dotQ5_KGo and dotIQ4_XSGo are their portable twins
// (kx86_wasm.s has the asm). The activations are prepared by splitQ8_K:
// the batch once per call for DotN and DotRowsN (as many activations at a
// time as the buffer holds), x86DotChunk blocks at a time for Dot. For one
// activation the row kernels (q5KRow1, q3KRow1, q2KRow1) dot each block as
// they decode it; for several (q5KRowN, q3KRowN, q2KRowN, iq4XSRowN) they
// decode each block once into a scratch block and dot that with every
// activation. The float part is the reference's, lane by lane: the blocks'
// d·yd come from here (the fp16 conversions), the fused multiply-adds are
// emulated exactly in the asm (FMA8), and Q5_K's min sums, one float32
// chain per activation, are added here by fmaLanes, four chains side by
// side (q5KMins; one at a time with fma32 for Dot).

// x86Decoded is the size of a decoded block (the row kernels' scratch):
// the 256 weights' quants times their scales as int16 lanes, then 16 int16
// of mins.
const x86Decoded = 2*qkK + 32

//go:noescape
func q5KRowN(x *byte, nb int, yp *byte, k int, d *float32, acc *[MaxDotN][8]float32, ms *int32, wd *[x86Decoded]byte)

//go:noescape
func q3KRowN(x *byte, nb int, yp *byte, k int, d *float32, acc *[MaxDotN][8]float32, ms *int32, wd *[x86Decoded]byte)

//go:noescape
func q2KRowN(x *byte, nb int, yp *byte, k int, d *float32, acc *[MaxDotN][8]float32, ms *int32, wd *[x86Decoded]byte)

//go:noescape
func iq4XSRowN(x *byte, nb int, yp *byte, k int, d *float32, acc *[MaxDotN][8]float32, ms *int32, wd *[x86Decoded]byte)

//go:noescape
func q5KRow1(x *byte, nb int, yp *byte, d *float32, acc *[8]float32, ms *int32)

//go:noescape
func q3KRow1(x *byte, nb int, yp *byte, d *float32, acc *[8]float32, ms *int32)

//go:noescape
func q2KRow1(x *byte, nb int, yp *byte, d *float32, acc *[8]float32, ms *int32)

// x86Prep is the room for prepared activations of DotRowsN, as large as a
// variable on the stack can be (the compiler moves larger ones to the
// heap): the whole batch for rows up to 3840 long.
const x86Prep = 128 << 10

// x86PrepBlocks is the most blocks of prepared activations it holds.
const x86PrepBlocks = x86Prep / q8KPrepBytes

// x86DotChunk is how many blocks Dot prepares at a time.
const x86DotChunk = 16

// prepareQ8_KX86 prepares the nb Q8_K blocks of act into yp (splitQ8_K),
// with act's own bsums after each block's split values (where splitQ8_K
// puts the sums of its quants: the same for any activation the Q8_K
// quantizer made, but the references read the stored ones).
func prepareQ8_KX86(yp, act []byte, nb int) {
	act, yp = act[:nb*q8_KBytes], yp[:nb*q8KPrepBytes]
	splitQ8_K(&yp[0], &act[0], nb)
	for j := range nb {
		copy(yp[j*q8KPrepBytes+2*qkK:(j+1)*q8KPrepBytes], act[j*q8_KBytes+4+qkK:(j+1)*q8_KBytes])
	}
}

// x86Row adds the terms of the nb blocks of row x against the k
// activations prepared at yp (yd[nb·i + j]: activation i's block j's
// scale) to acc[i] and, for Q5_K, sm[i] (the min sums), with the row
// kernel of t (for one activation the one that dots each block as it
// decodes it); d and ms are scratch of 2·nb·k and nb·k values, sc
// q5KMins' room (nil: Q5_K's min sums one fma32 at a time, for Dot). (The
// row kernels are called by name: through a func value the stack arrays
// would escape.)
func x86Row(t Type, x []byte, nb int, yp []byte, yd []float32, k int, acc *[MaxDotN][8]float32, sm *[MaxDotN]float32, d []float32, ms []int32, wd *[x86Decoded]byte, sc *x86Scratch) {
	yd, d = yd[:k*nb], d[:2*k*nb]
	switch t {
	case Q5_K:
		x = x[:nb*q5_KBytes]
		for j := range nb {
			dx := fp16At(x[j*q5_KBytes:])
			for i := j; i < k*nb; i += nb {
				d[i] = yd[i] * dx
			}
		}
		if k == 1 {
			q5KRow1(&x[0], nb, &yp[0], &d[0], &acc[0], &ms[0])
		} else {
			q5KRowN(&x[0], nb, &yp[0], k, &d[0], acc, &ms[0], wd)
		}
		ms = ms[:k*nb]
		if sc == nil {
			s := sm[0]
			for j := range nb {
				s = fma32(-yd[j]*fp16At(x[j*q5_KBytes+2:]), float32(ms[j]), s)
			}
			sm[0] = s
			break
		}
		dm := sc.dm[:nb]
		for j := range nb {
			dm[j] = fp16At(x[j*q5_KBytes+2:])
		}
		for i := 0; i < k; i += 4 {
			var s4 [4]float32
			copy(s4[:], sm[i:min(i+4, k)])
			q5KMins(&s4, ms[i*nb:], yd[i*nb:], nb, dm, 0, min(4, k-i), nb, sc)
			copy(sm[i:min(i+4, k)], s4[:])
		}
	case Q3_K:
		x = x[:nb*q3_KBytes]
		for j := range nb {
			dx := fp16At(x[j*q3_KBytes+108:])
			for i := j; i < k*nb; i += nb {
				d[i] = yd[i] * dx
			}
		}
		if k == 1 {
			q3KRow1(&x[0], nb, &yp[0], &d[0], &acc[0], nil)
		} else {
			q3KRowN(&x[0], nb, &yp[0], k, &d[0], acc, nil, wd)
		}
	case Q2_K:
		x = x[:nb*q2_KBytes]
		for j := range nb {
			dx, dm := fp16At(x[j*q2_KBytes+80:]), fp16At(x[j*q2_KBytes+82:])
			for i := j; i < k*nb; i += nb {
				d[2*i], d[2*i+1] = -yd[i]*dm, yd[i]*dx
			}
		}
		if k == 1 {
			q2KRow1(&x[0], nb, &yp[0], &d[0], &acc[0], nil)
		} else {
			q2KRowN(&x[0], nb, &yp[0], k, &d[0], acc, nil, wd)
		}
	case IQ4_XS:
		x = x[:nb*iq4_XSBytes]
		for j := range nb {
			dx := fp16At(x[j*iq4_XSBytes:])
			for i := j; i < k*nb; i += nb {
				d[i] = dx * yd[i]
			}
		}
		iq4XSRowN(&x[0], nb, &yp[0], k, &d[0], acc, nil, wd)
	}
}

// x86Result is the dot of a row with activation i from its accumulators:
// hsumX86 of the lanes, plus the min sums for Q5_K.
func x86Result(t Type, acc *[MaxDotN][8]float32, sm *[MaxDotN]float32, i int) float32 {
	s := hsumX86(&acc[i])
	if t == Q5_K {
		s += sm[i]
	}
	return s
}

// q5KMins adds the Q5_K min terms of up to four lanes (activations or
// rows) l < lanes to sm[l], as x86Row's one-activation loop does for each:
// sm[l] = fma32(-y_lj·dm_lj, float32(ms[l·nb+j]), sm[l]) for the nb blocks
// j in order, y_lj = y[l·nb+j] and dm_lj = dm[l·dmStride+j] (dmStride 0:
// one row's scales for every lane), by fmaLanes, the lanes side by side.
func q5KMins(sm *[4]float32, ms []int32, y []float32, ys int, dm []float32, dmStride, lanes, nb int, sc *x86Scratch) {
	s4, d4 := sc.s4[:4*nb], sc.d4[:4*nb]
	var m [4][]int32
	var yl, dl [4][]float32
	for l := range 4 {
		// a missing lane repeats lane 0 (its result is not used)
		k := l
		if l >= lanes {
			k = 0
		}
		m[l], yl[l], dl[l] = ms[k*nb:k*nb+nb], y[k*ys:k*ys+nb], dm[k*dmStride:k*dmStride+nb]
	}
	m0, m1, m2, m3 := m[0][:nb], m[1][:nb], m[2][:nb], m[3][:nb]
	y0, y1, y2, y3 := yl[0][:nb], yl[1][:nb], yl[2][:nb], yl[3][:nb]
	d0, d1, d2, d3 := dl[0][:nb], dl[1][:nb], dl[2][:nb], dl[3][:nb]
	for j := range nb {
		sv := (*[4]int32)(s4[4*j:])
		sv[0], sv[1], sv[2], sv[3] = m0[j], m1[j], m2[j], m3[j]
		dv := (*[4]float32)(d4[4*j:])
		dv[0], dv[1], dv[2], dv[3] = -y0[j]*d0[j], -y1[j]*d1[j], -y2[j]*d2[j], -y3[j]*d3[j]
	}
	fmaLanes(&s4[0], &d4[0], nb, 16, sm)
}

// x86Scratch is the room q5KMins works in: its lanes' terms, and the
// row's min scales.
type x86Scratch struct {
	s4 [4 * x86PrepBlocks]int32
	d4 [4 * x86PrepBlocks]float32
	dm [4 * x86PrepBlocks]float32
}

// x86Size is t's block size.
func x86Size(t Type) int {
	switch t {
	case Q5_K:
		return q5_KBytes
	case Q3_K:
		return q3_KBytes
	case IQ4_XS:
		return iq4_XSBytes
	}
	return q2_KBytes
}

// x86Dot is the Dot kernel of t: the activation prepared x86DotChunk
// blocks at a time.
func x86Dot(t Type, n int, w, act []byte) float32 {
	nb := n / qkK
	size := x86Size(t)
	w, act = w[:nb*size], act[:nb*q8_KBytes]
	var (
		yp  [x86DotChunk * q8KPrepBytes]byte
		yd  [x86DotChunk]float32
		d   [2 * x86DotChunk]float32
		ms  [x86DotChunk]int32
		acc [MaxDotN][8]float32
		sm  [MaxDotN]float32
		wd  [x86Decoded]byte
	)
	for c := 0; c < nb; c += x86DotChunk {
		m := min(x86DotChunk, nb-c)
		prepareQ8_KX86(yp[:], act[c*q8_KBytes:], m)
		for j := range m {
			yd[j] = f32At(act[(c+j)*q8_KBytes:])
		}
		x86Row(t, w[c*size:], m, yp[:], yd[:], 1, &acc, &sm, d[:], ms[:], &wd, nil)
	}
	return x86Result(t, &acc, &sm, 0)
}

// x86RowsN is the DotRowsN kernel of t: up to MaxDotN activations
// prepared at once (as many as x86Prep holds), then the row kernel per
// row; rows too long for one activation in the buffer take Dot.
func x86RowsN(t Type, n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qkK
	size := x86Size(t)
	rowBytes := nb * size
	if nb == 0 {
		return
	}
	if nb > x86PrepBlocks {
		for r := range len(w) / rowBytes {
			for i, a := range acts {
				outs[i][at+r] = x86Dot(t, n, w[r*rowBytes:], a)
			}
		}
		return
	}
	rows := len(w) / rowBytes
	var (
		yp  [x86Prep]byte
		yd  [x86PrepBlocks]float32
		d   [2 * x86PrepBlocks]float32
		ms  [x86PrepBlocks]int32
		acc [MaxDotN][8]float32
		sm  [MaxDotN]float32
		wd  [x86Decoded]byte
		sc  x86Scratch
	)
	for len(acts) > 0 {
		k := min(len(acts), MaxDotN, x86PrepBlocks/nb)
		for i, a := range acts[:k] {
			prepareQ8_KX86(yp[i*nb*q8KPrepBytes:], a, nb)
			for j := range nb {
				yd[i*nb+j] = f32At(a[j*q8_KBytes:])
			}
		}
		for r := range rows {
			clear(acc[:k])
			clear(sm[:k])
			x86Row(t, w[r*rowBytes:], nb, yp[:], yd[:], k, &acc, &sm, d[:], ms[:], &wd, &sc)
			for i := range k {
				outs[i][at+r] = x86Result(t, &acc, &sm, i)
			}
		}
		acts, outs = acts[k:], outs[k:]
	}
}

// x86DotN is the DotN kernel of t: x86RowsN of the one row.
func x86DotN(t Type, n int, w []byte, acts [][]byte, out []float32) {
	if len(acts) > MaxDotN {
		for i, a := range acts {
			out[i] = x86Dot(t, n, w, a)
		}
		return
	}
	var outs [MaxDotN][]float32
	for i := range acts {
		outs[i] = out[i : i+1]
	}
	x86RowsN(t, n, w[:n/qkK*x86Size(t)], acts, outs[:len(acts)], 0)
}

func dotQ5_KSIMD128(n int, w, act []byte) float32 { return x86Dot(Q5_K, n, w, act) }
func dotQ3_KSIMD128(n int, w, act []byte) float32 { return x86Dot(Q3_K, n, w, act) }
func dotQ2_KSIMD128(n int, w, act []byte) float32 { return x86Dot(Q2_K, n, w, act) }

func dotNIQ4_XSSIMD128(n int, w []byte, acts [][]byte, out []float32) {
	x86DotN(IQ4_XS, n, w, acts, out)
}

func dotNQ5_KSIMD128(n int, w []byte, acts [][]byte, out []float32) { x86DotN(Q5_K, n, w, acts, out) }
func dotNQ3_KSIMD128(n int, w []byte, acts [][]byte, out []float32) { x86DotN(Q3_K, n, w, acts, out) }
func dotNQ2_KSIMD128(n int, w []byte, acts [][]byte, out []float32) { x86DotN(Q2_K, n, w, acts, out) }

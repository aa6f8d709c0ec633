//go:build goexperiment.simd

package quant

import "simd/archsimd"

// The wasm SIMD128 DotRowsN kernels (a matrix times a prefill batch).
//
// Q4_K and Q6_K: the activations are prepared once per call, as the
// DotRows kernels prepare theirs (splitQ8_K), into a buffer on the stack,
// as many at a time as it holds; then each weight row's blocks are decoded
// once and dotted with every prepared activation (q4KRowSumsN, q6KRowSumsN
// in dotrowsn_wasm.s), and the exact integer block sums of each row are
// scaled and added in block order with the Dot's float operations, four
// activations in the lanes of a vector (scaleActsQ4_K, scaleActsQ6_K), so
// every result is bit-identical to Dot's. Rows too long for the buffer
// (none in the models we know) take the DotN kernels row by row. (A kernel
// with the activations in the lanes of the integer sums too, as Q8_0's
// below, measured 2x slower under Node 20 and 1.4x faster in Chromium 156;
// the relaxed-SIMD build has such kernels, relaxedn_wasm.go.)
//
// Q8_0 and Q4_0 (dotRowsNQ8_0Acts): their 32-weight blocks are too short
// to reduce sums across lanes per activation, so four activations are the
// lanes of every vector (quads_wasm.s) and a block's four sums come out as
// one vector, scaled in float32 lanes.

// dotRowsNPrep is the room for prepared activations, as large as a
// variable on the stack can be (the compiler moves larger ones to the
// heap): a whole batch for rows up to 3840 long (TinyLlama's 2048), 10
// activations at a time for TinyLlama's FFN rows (5632).
const dotRowsNPrep = 128 << 10

// dotRowsNBlocks is the most blocks of prepared activations it holds.
const dotRowsNBlocks = dotRowsNPrep / q8KPrepBytes

//go:noescape
func q4KRowSumsN(x, yp *byte, acc *int32, nb, acts int, out *int32)

//go:noescape
func q6KRowSumsN(x, yp *byte, acc *int32, nb, acts int, out *int32)

// prepareQ8_K splits acts (Q8_K, nb blocks each) into yp, one after the
// other (nb·q8KPrepBytes bytes each).
func prepareQ8_K(yp []byte, acts [][]byte, nb int) {
	for i, a := range acts {
		a = a[:nb*q8_KBytes]
		p := yp[i*nb*q8KPrepBytes : (i+1)*nb*q8KPrepBytes]
		splitQ8_K(&p[0], &a[0], nb)
	}
}

// actsPerPass is how many activations of nb blocks the prepared buffer
// holds (0: not one).
func actsPerPass(nb, acts int) int {
	return min(acts, MaxDotN, dotRowsNBlocks/nb)
}

// dotRowsNQ4_KSIMD128 is the Q4_K DotRowsN kernel.
func dotRowsNQ4_KSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qkK
	rowBytes := nb * q4_KBytes
	if nb == 0 || actsPerPass(nb, len(acts)) == 0 {
		eachRow(dotNQ4_KSIMD128, rowBytes, n, w, acts, outs, at)
		return
	}
	rows := len(w) / rowBytes
	w = w[:rows*rowBytes]
	var yp [dotRowsNPrep]byte
	var acc [4 * MaxDotN]int32
	var sums [2 * dotRowsNBlocks]int32 // [2][nb][k]: Σ scale·q·y, then Σ min·bsum
	var yd [dotRowsNBlocks]float32     // [nb][k]: the activations' scales
	var dx, dm [dotRowsNBlocks + 3]float32
	for len(acts) > 0 {
		k := actsPerPass(nb, len(acts))
		prepareQ8_K(yp[:], acts[:k], nb)
		prepareScales(yd[:nb*k], acts[:k], nb)
		s := sums[:2*nb*k]
		for r := range rows {
			x := w[r*rowBytes : (r+1)*rowBytes]
			q4KRowSumsN(&x[0], &yp[0], &acc[0], nb, k, &s[0])
			rowScales(dx[:], x, nb, q4_KBytes, 0)
			rowScales(dm[:], x, nb, q4_KBytes, 2)
			scaleActsQ4_K(outs[:k], at+r, s[:nb*k], s[nb*k:], yd[:nb*k], dx[:nb], dm[:nb])
		}
		acts, outs = acts[k:], outs[k:]
	}
}

// prepareScales sets yd[k*j+i] to the float32 scale of block j of acts[i]
// (Q8_K, nb blocks each; k = len(acts)).
func prepareScales(yd []float32, acts [][]byte, nb int) {
	k := len(acts)
	for i, a := range acts {
		a = a[:nb*q8_KBytes]
		for j := range nb {
			yd[k*j+i] = f32At(a[j*q8_KBytes:])
		}
	}
}

// rowScales sets d[j] to the fp16 scale at byte off of block j of the
// row x (nb blocks of size bytes), four at a time (fp16x4At); d has room
// for nb rounded up to four.
func rowScales(d []float32, x []byte, nb, size, off int) {
	j := 0
	for ; j+4 <= nb; j += 4 {
		fp16x4At(x[j*size+off:], size).StoreArray((*[4]float32)(d[j:]))
	}
	for ; j < nb; j++ {
		d[j] = fp16At(x[j*size+off:])
	}
}

// scaleActsQ4_K is the float part of Q4_K's DotRowsN for one row: it sets
// outs[i][at] to Σ_j float32(dx[j]·yd_ij·float32(is_ij)) -
// float32(dm[j]·yd_ij·float32(ms_ij)), the terms of scaleQ4_KSums in
// block order from zero, from the row's integer sums is[k*j+i], ms[k*j+i]
// and the activations' scales yd[k*j+i] (k = len(outs)). Four activations
// go in the lanes of a vector (their sums and scales are adjacent), the
// rest one at a time.
func scaleActsQ4_K(outs [][]float32, at int, is, ms []int32, yd, dx, dm []float32) {
	k := len(outs)
	nb := len(dx)
	is, ms, yd, dm = is[:nb*k], ms[:nb*k], yd[:nb*k], dm[:nb]
	i := 0
	for ; i+4 <= k; i += 4 {
		acc := archsimd.BroadcastFloat32x4(0)
		for j, d := range dx {
			y := archsimd.LoadFloat32x4Array((*[4]float32)(yd[k*j+i:]))
			iv := archsimd.LoadInt32x4Array((*[4]int32)(is[k*j+i:])).ConvertToFloat32()
			mv := archsimd.LoadInt32x4Array((*[4]int32)(ms[k*j+i:])).ConvertToFloat32()
			a := archsimd.BroadcastFloat32x4(d).Mul(y).Mul(iv)
			b := archsimd.BroadcastFloat32x4(dm[j]).Mul(y).Mul(mv)
			acc = acc.Add(a.Sub(b))
		}
		var r [4]float32
		acc.StoreArray(&r)
		outs[i][at], outs[i+1][at], outs[i+2][at], outs[i+3][at] = r[0], r[1], r[2], r[3]
	}
	for ; i < k; i++ {
		var sum float32
		for j, d := range dx {
			y := yd[k*j+i]
			sum += float32(d*y*float32(is[k*j+i])) - float32(dm[j]*y*float32(ms[k*j+i]))
		}
		outs[i][at] = sum
	}
}

// dotRowsNQ6_KSIMD128 is the Q6_K DotRowsN kernel.
func dotRowsNQ6_KSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qkK
	rowBytes := nb * q6_KBytes
	if nb == 0 || actsPerPass(nb, len(acts)) == 0 {
		eachRow(dotNQ6_KSIMD128, rowBytes, n, w, acts, outs, at)
		return
	}
	rows := len(w) / rowBytes
	w = w[:rows*rowBytes]
	var yp [dotRowsNPrep]byte
	var acc [4 * MaxDotN]int32
	var sums [dotRowsNBlocks]int32 // [nb][k]
	var yd [dotRowsNBlocks]float32 // [nb][k]
	var dx [dotRowsNBlocks + 3]float32
	for len(acts) > 0 {
		k := actsPerPass(nb, len(acts))
		prepareQ8_K(yp[:], acts[:k], nb)
		prepareScales(yd[:nb*k], acts[:k], nb)
		s := sums[:nb*k]
		for r := range rows {
			x := w[r*rowBytes : (r+1)*rowBytes]
			q6KRowSumsN(&x[0], &yp[0], &acc[0], nb, k, &s[0])
			rowScales(dx[:], x, nb, q6_KBytes, 208)
			scaleActsQ6_K(outs[:k], at+r, s, yd[:nb*k], dx[:nb])
		}
		acts, outs = acts[k:], outs[k:]
	}
}

// scaleActsQ6_K is scaleActsQ4_K for Q6_K: outs[i][at] = Σ_j dx[j]·yd_ij·
// float32(sums_ij), the terms of scaleQ6_KSums.
func scaleActsQ6_K(outs [][]float32, at int, sums []int32, yd, dx []float32) {
	k := len(outs)
	nb := len(dx)
	sums, yd = sums[:nb*k], yd[:nb*k]
	i := 0
	for ; i+4 <= k; i += 4 {
		acc := archsimd.BroadcastFloat32x4(0)
		for j, d := range dx {
			y := archsimd.LoadFloat32x4Array((*[4]float32)(yd[k*j+i:]))
			sv := archsimd.LoadInt32x4Array((*[4]int32)(sums[k*j+i:])).ConvertToFloat32()
			acc = acc.Add(archsimd.BroadcastFloat32x4(d).Mul(y).Mul(sv))
		}
		var r [4]float32
		acc.StoreArray(&r)
		outs[i][at], outs[i+1][at], outs[i+2][at], outs[i+3][at] = r[0], r[1], r[2], r[3]
	}
	for ; i < k; i++ {
		var sum float32
		for j, d := range dx {
			sum += d * yd[k*j+i] * float32(sums[k*j+i])
		}
		outs[i][at] = sum
	}
}

// q8PrepBlock is the size of a prepared Q8_0 quad block (prepQ8_0Quad in
// dotrowsn_wasm.s): four activations' pairs of a block, scales and sums.
const q8PrepBlock = 288

// dotRowsNQ8Blocks is the most quad blocks the prepared buffer holds.
const dotRowsNQ8Blocks = dotRowsNPrep / q8PrepBlock

// dotRowsNRowsPerCall is the rows a Q8_0/Q4_0 row kernel computes per
// call (their results then go to the outputs).
const dotRowsNRowsPerCall = 64

//go:noescape
func prepQ8_0Quad(dst *byte, ys *[4]*byte, tab *float32, nb int)

//go:noescape
func q8_0RowsN(x, yq *byte, tab *float32, nb, rows, quads int, out *float32)

//go:noescape
func q4_0RowsN(x, yq *byte, tab *float32, nb, rows, quads int, out *float32)

// dotRowsNQ8_0SIMD128 is the Q8_0 DotRowsN kernel.
func dotRowsNQ8_0SIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	if nb := n / qk; nb == 0 || nb > dotRowsNQ8Blocks {
		eachRow(dotNQ8_0SIMD128, nb*q8_0Bytes, n, w, acts, outs, at)
		return
	}
	dotRowsNQ8_0Acts(false, n, w, acts, outs, at)
}

// dotRowsNQ4_0SIMD128 is the Q4_0 DotRowsN kernel.
func dotRowsNQ4_0SIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	if nb := n / qk; nb == 0 || nb > dotRowsNQ8Blocks {
		eachRow(dotNQ4_0SIMD128, nb*q4_0Bytes, n, w, acts, outs, at)
		return
	}
	dotRowsNQ8_0Acts(true, n, w, acts, outs, at)
}

// dotRowsNQ8_0Acts is the DotRowsN kernel of Q4_0 (q4) or Q8_0 weights
// (rows of 1 to dotRowsNQ8Blocks blocks): the activations prepared four at
// a time into quads (as many quads as the buffer holds, up to four), then
// the rows against all of them, dotRowsNRowsPerCall at a time
// (q4_0RowsN, q8_0RowsN), each row's results bit-identical to its Dot.
func dotRowsNQ8_0Acts(q4 bool, n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	nb := n / qk
	rowBytes := nb * q8_0Bytes
	if q4 {
		rowBytes = nb * q4_0Bytes
	}
	rows := len(w) / rowBytes
	w = w[:rows*rowBytes]
	tab := &fp16ToFP32Table[0]
	var yq [dotRowsNPrep]byte
	var res [16 * dotRowsNRowsPerCall]float32 // [row][quad][lane]
	for len(acts) > 0 {
		quads := min((len(acts)+3)/4, MaxDotN/4, dotRowsNQ8Blocks/nb)
		k := min(len(acts), 4*quads)
		for q := range quads {
			var ys [4]*byte
			for l := range ys {
				a := acts[min(4*q+l, k-1)] // a short quad repeats its last activation
				ys[l] = &a[:nb*q8_0Bytes][0]
			}
			prepQ8_0Quad(&yq[q*nb*q8PrepBlock], &ys, tab, nb)
		}
		for r := 0; r < rows; r += dotRowsNRowsPerCall {
			m := min(dotRowsNRowsPerCall, rows-r)
			if q4 {
				q4_0RowsN(&w[r*rowBytes], &yq[0], tab, nb, m, quads, &res[0])
			} else {
				q8_0RowsN(&w[r*rowBytes], &yq[0], tab, nb, m, quads, &res[0])
			}
			for i, o := range outs[:k] {
				o = o[at+r : at+r+m]
				for t := range o {
					o[t] = res[16*t+i]
				}
			}
		}
		acts, outs = acts[k:], outs[k:]
	}
}

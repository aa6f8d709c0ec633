//go:build goexperiment.simd

package quant

// The AVX-512 VNNI DotRows kernels of Q4_0 and Q8_0 (decode: one
// activation against consecutive weight rows), for CPUs with AVX512-VNNI
// and AVX512-VBMI. They are the AVX2 kernels (dotrows_amd64.go) with the
// block terms computed sixteen at a time in 512-bit registers by
// q4_0TermsVNNI / q8_0TermsVNNI (dotrows_vnni_amd64.s); each row's terms are
// then added one at a time in block order, eight rows at once, by
// addRows8: the reference's running sum, so that the result is
// bit-identical to dotQ4_0Ref / dotQ8_0Ref per row. Rows whose blocks do
// not come in sixteens, and calls with fewer than eight rows, go through
// the AVX2 kernels.

// vnniGroup is a group of sixteen Q8_0 activation blocks laid out for
// q4_0TermsVNNI and q8_0TermsVNNI.
type vnniGroup struct {
	// q[g][h], 128-bit lane k: quants 16h..16h+15 of block 4g+k
	q [4][2][64]byte
	// init[g], dword 4k: -off·Σ of block 4g+k's quants, the weights'
	// offset (Q4_0: the nibbles' -8; Q8_0: 128, which makes its signed
	// quants unsigned); the other dwords 0
	init [4][16]int32
	fy   [16]float32 // the blocks' scales
}

// set lays out the sixteen blocks at y, with the offset sums -off·Σy.
func (v *vnniGroup) set(y []byte, off int32) {
	y = y[:16*q8_0Bytes]
	*v = vnniGroup{}
	for b := range 16 {
		yb := y[b*q8_0Bytes : (b+1)*q8_0Bytes]
		g, k := b/4, b%4
		copy(v.q[g][0][16*k:16*k+16], yb[2:18])
		copy(v.q[g][1][16*k:16*k+16], yb[18:34])
		var s int32
		for _, q := range yb[2:] {
			s += int32(int8(q))
		}
		v.init[g][4*k] = -off * s
		v.fy[b] = fp16At(yb)
	}
}

// vnniRowConsts are the permutations of q4_0TermsVNNI and q8_0TermsVNNI:
// the VPERMT2B indexes gathering a group's quants from its two tables (lo:
// the first three groups of Q4_0, quants 0..15 of Q8_0; hi: Q4_0's last
// group, quants 16..31 of Q8_0), the VPERMI2W index of the scales and the
// VPERMD index putting the transposed sums in block order.
type vnniRowConsts struct {
	lo, hi [64]byte
	halves [32]uint16
	perm   [16]uint32
}

// vnniPerm is the VPERMD index shared by both: after the transposition,
// dword 4k+i holds block 4i+k.
func vnniPerm() (p [16]uint32) {
	for m := range p {
		p[m] = uint32(4*(m%4) + m/4)
	}
	return p
}

var q4_0VK = func() (c vnniRowConsts) {
	for k := range 4 {
		for j := range 16 {
			p := 18*k + 2 + j // byte p of a group (72 bytes)
			c.lo[16*k+j] = byte(p)
			if p >= 64 { // the last group's second table starts at byte 8
				p += 56
			}
			c.hi[16*k+j] = byte(p)
		}
	}
	for j := range 8 {
		c.halves[j] = uint16(9 * j)
	}
	c.perm = vnniPerm()
	return c
}()

var q8_0VK = func() (c vnniRowConsts) {
	for k := range 4 {
		for j := range 16 {
			c.lo[16*k+j] = byte(34*k + 2 + j)
			c.hi[16*k+j] = byte(34*k + 18 + j - 8) // tables from byte 8
		}
	}
	for j := range 4 {
		c.halves[j] = uint16(17 * j)
	}
	c.perm = vnniPerm()
	return c
}()

// q4_0TermsVNNI sets p[b] to the term of block b of the Q4_0 row x and
// the activation groups yp, float32(sumi)·float32(dx·dy) as dotQ4_0Ref
// computes it, for b < 16·ng.
//
//go:noescape
func q4_0TermsVNNI(x *byte, yp *vnniGroup, p *float32, ng int, k *vnniRowConsts)

// q8_0TermsVNNI is q4_0TermsVNNI for a Q8_0 row.
//
//go:noescape
func q8_0TermsVNNI(x *byte, yp *vnniGroup, p *float32, ng int, k *vnniRowConsts)

// dotRowsQ4_0VNNI is dotRowsQ4_0AVX2 with the block terms of q4_0TermsVNNI.
func dotRowsQ4_0VNNI(n int, w, act []byte, out []float32) {
	dotRowsVNNI(n, w, act, out, false, dotRowsQ4_0AVX2)
}

// dotRowsQ8_0VNNI is dotRowsQ8_0AVX2 with the block terms of
// q8_0TermsVNNI; unlike the AVX2 kernel's, its products take any
// activation quant (-128 too).
func dotRowsQ8_0VNNI(n int, w, act []byte, out []float32) {
	dotRowsVNNI(n, w, act, out, true, dotRowsQ8_0AVX2)
}

// dotRowsVNNI is the driver of both (q8: Q8_0 weights, else Q4_0): the
// activation laid out once (its offset sums for the weights' offset), then
// eight rows at a time their block terms and the rows' running sums by
// addRows8; rows of other block counts, and the last rows short of eight,
// through avx2. (The terms kernel is called directly, not through a func
// value, so that yp and t stay on the stack.)
func dotRowsVNNI(n int, w, act []byte, out []float32, q8 bool, avx2 func(n int, w, act []byte, out []float32)) {
	nb := n / qk
	rowBytes, off := nb*q4_0Bytes, int32(8)
	if q8 {
		rowBytes, off = nb*q8_0Bytes, 128
	}
	if nb%16 != 0 || nb > rowsMaxBlocks || len(out) < 8 {
		avx2(n, w, act, out)
		return
	}
	act = act[:nb*q8_0Bytes]
	w = w[:len(out)*rowBytes]
	var yp [rowsMaxBlocks / 16]vnniGroup
	for g := range nb / 16 {
		yp[g].set(act[g*16*q8_0Bytes:], off)
	}
	var t [8][rowsMaxBlocks]float32 // eight rows' block terms
	r := 0
	for ; r+8 <= len(out); r += 8 {
		for j := range 8 {
			if q8 {
				q8_0TermsVNNI(&w[(r+j)*rowBytes], &yp[0], &t[j][0], nb/16, &q8_0VK)
			} else {
				q4_0TermsVNNI(&w[(r+j)*rowBytes], &yp[0], &t[j][0], nb/16, &q4_0VK)
			}
		}
		addRows8((*[8]float32)(out[r:]), &t, nb)
	}
	if r < len(out) {
		avx2(n, w[r*rowBytes:], act, out[r:])
	}
}

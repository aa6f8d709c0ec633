//go:build goexperiment.simd

package quant

import "simd/archsimd"

// The AVX-512 VNNI DotRowsN kernel of IQ4_XS (prefill), for CPUs with
// AVX512-VNNI and AVX512-VBMI, with its block work in
// iq4_xs_vnni_amd64.s. The loop order is x86MatMul's (rows in groups of
// kGroupRows, block by block): per block, the activations are widened to
// int16 once (iq4XSPrepVNNI), then each row of the group decodes its
// block once and adds its dots with every activation (iq4XSBlockVNNI) to
// the eight float32 lanes of each activation's running sum (x86Sums.acc),
// added at the end as hsumX86: dotIQ4_XSRef's operations, bit for bit.

// iq4Batch is a block of a batch of Q8_K activations prepared for
// iq4XSBlockVNNI: y16[i] activation i's quants as int16, in the kernel's
// vector order (iq4VConsts.act0, act1), yd[i] its scale.
type iq4Batch struct {
	y16 [MaxDotN][8][32]int16
	yd  [MaxDotN]float32
}

// iq4VConsts are the kernel's constants.
type iq4VConsts struct {
	lev   [64]int8      // kvaluesIQ4NL in every 128-bit lane (VPSHUFB)
	permB [64]byte      // VPERMB: nibble-order levels of two sub-blocks to vector order
	act0  [32]uint16    // VPERMT2W: two sub-blocks' int16 quants to vector 2p
	act1  [32]uint16    // and 2p+1
	sidx  [4][32]uint16 // VPERMW: the scales of vectors 2p, 2p+1
	shl   [8]uint32     // shifts of scales_l's nibbles
	shh   [8]uint32     // shifts of scales_h's bit pairs
	m0f   [8]uint32
	m3    [8]uint32
	c32   [8]uint32
}

// iq4Elem returns the element (0..63) of two sub-blocks at word w of vector
// 2p+t: dword d = w/2 holds weights 32j+4(d%8)+2t and the next, j = d/8.
func iq4Elem(t, w int) int {
	d := w / 2
	return 32*(d/8) + 4*(d%8) + 2*t + w%2
}

var iq4VK = func() (c iq4VConsts) {
	for i := range c.lev {
		c.lev[i] = kvaluesIQ4NL[i%16]
	}
	for t := range 2 {
		for w := range 32 {
			e := iq4Elem(t, w)
			jj, i := e/32, e%32
			// the nibble bytes: low nibbles of both sub-blocks, then high
			pos := 16*jj + i
			if i >= 16 {
				pos = 32 + 16*jj + i - 16
			}
			c.permB[32*t+w] = byte(pos)
			if t == 0 {
				c.act0[w] = uint16(e)
			} else {
				c.act1[w] = uint16(e)
			}
		}
	}
	for p := range 4 {
		for w := range 32 {
			c.sidx[p][w] = uint16(2*p + w/16)
		}
	}
	for j := range 8 {
		c.shl[j], c.shh[j] = uint32(4*j), uint32(2*j)
		c.m0f[j], c.m3[j], c.c32[j] = 0x0f, 3, 32
	}
	return c
}()

// iq4XSPrepVNNI sets dst to the Q8_K block y's quants as int16 in vector
// order.
//
//go:noescape
func iq4XSPrepVNNI(y *byte, dst *[8][32]int16, k *iq4VConsts)

// iq4XSBlockVNNI adds the int32 lanes of the IQ4_XS block x with each of
// the na activations of b, times float32(dx·yd), to acc[i] by one VFMADD
// per lane.
//
//go:noescape
func iq4XSBlockVNNI(x *byte, b *iq4Batch, acc *archsimd.Float32x8, na int, k *iq4VConsts)

// dotRowsNIQ4_XSVNNI is dotRowsNIQ4_XSAVX2 with the blocks' work in
// iq4_xs_vnni_amd64.s.
func dotRowsNIQ4_XSVNNI(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	if len(acts) < 4 || len(acts) > MaxDotN {
		dotRowsNIQ4_XSAVX2(n, w, acts, outs, at)
		return
	}
	nb := n / qkK
	rb := nb * iq4_XSBytes
	if rb == 0 {
		dotRowsNIQ4_XSAVX2(n, w, acts, outs, at)
		return
	}
	rows := len(w) / rb
	var (
		ba iq4Batch
		s  x86Sums
	)
	for r0 := 0; r0 < rows; r0 += kGroupRows {
		g := min(kGroupRows, rows-r0)
		clear(s.acc[:g])
		for b := range nb {
			for i, a := range acts {
				y := a[b*q8_KBytes : (b+1)*q8_KBytes]
				iq4XSPrepVNNI(&y[0], &ba.y16[i], &iq4VK)
				ba.yd[i] = f32At(y)
			}
			for r := range g {
				x := w[(r0+r)*rb+b*iq4_XSBytes:][:iq4_XSBytes]
				iq4XSBlockVNNI(&x[0], &ba, &s.acc[r][0], len(acts), &iq4VK)
			}
		}
		for r := range g {
			for i := range outs {
				outs[i][at+r0+r] = hsumX86Vec(s.acc[r][i])
			}
		}
	}
}

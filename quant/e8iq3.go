package quant

import (
	"encoding/binary"
	"math"
)

// E8_IQ3 is picoLM's E8/IQ3 container ("fmt=5" of the design notes): IQ3_XXS's
// published 256-point E8-derived codebook in a layout of its own. It is not a
// ggml type: its id lies far outside ggml's range, so llama.cpp and gguf-py
// refuse a file holding it ("invalid ggml type") instead of misreading it.
// A GGUF file with E8_IQ3 tensors names the layout in its metadata with
// E8IQ3Key = E8IQ3Version (uint32); a reader should accept the id only with
// that key present (see ExtensionKey).
//
// Super-blocks of 256 weights, 98 bytes, 3.0625 bits per weight:
//
//	offset size
//	0      64   idx[64]  grid index of each group of 4 weights: sub-block ib uses idx[8ib..8ib+7]
//	64     32   aux[8]   uint32 per 32-weight sub-block ib: bits 7l..7l+6 are the signs of
//	                     weights 8l..8l+6 of the sub-block (bit set: negative), the sign of
//	                     weight 8l+7 makes the count of negatives in the 8 even; bits 28..31
//	                     are the 4-bit sub-scale code
//	96     2    d        fp16 super-scale
//
// x = d·(0.5+code)·0.5 · (grid/2) · sign, where grid is iq3xxsGrid (magnitudes
// 4..62 stored doubled, so grid/2 is 2..31). Activation format: Q8_K.
const (
	E8_IQ3       Type   = 1001 // (1000 is the sample unknown id of TestUnknownTypes)
	E8IQ3Key            = "picolm.quant.e8_iq3"
	E8IQ3Version uint32 = 1
)

const e8iq3Bytes = qkK/4 + qkK/32*4 + 2

var _ [0]struct{} = [e8iq3Bytes - 98]struct{}{} // size check

// ExtensionKey returns the GGUF metadata key that must be present in a file
// holding tensors of type t, for the types that are picoLM's own (E8_IQ3);
// ok is false for ggml's types.
func ExtensionKey(t Type) (key string, ok bool) {
	if t == E8_IQ3 {
		return E8IQ3Key, true
	}
	return "", false
}

func dequantizeE8IQ3(dst []float32, src []byte) {
	for b := range len(dst) / qkK {
		blk := src[b*e8iq3Bytes : (b+1)*e8iq3Bytes]
		d := fp16At(blk[96:])
		y := dst[b*qkK : (b+1)*qkK]
		for ib := range qkK / 32 {
			aux := binary.LittleEndian.Uint32(blk[64+4*ib:])
			db := d * (0.5 + float32(aux>>28)) * 0.5
			for l := range 4 {
				signs := ksignsIQ2XS[aux>>(7*l)&127]
				for k := range 2 {
					g := &iq3xxsGrid[blk[8*ib+2*l+k]]
					for j := range 4 {
						v := db * (0.5 * float32(g[j]))
						if signs>>(4*k+j)&1 != 0 {
							v = -v
						}
						y[32*ib+8*l+4*k+j] = v
					}
				}
			}
		}
	}
}

// dotE8IQ3 is the E8_IQ3 x Q8_K dot: like IQ3_XXS's, integer sums per
// sub-block weighted by 2·code+1 and one float term per super-block; the
// weight is d·(2·code+1)·grid/8.
func dotE8IQ3(n int, w, act []byte) float32 {
	nb := n / qkK
	w, act = w[:nb*e8iq3Bytes], act[:nb*q8_KBytes]
	var sum float32
	for b := range nb {
		x := (*[e8iq3Bytes]byte)(w[b*e8iq3Bytes:])
		yd, q8 := q8KView(act, b)
		var bsum int32
		for ib := range qkK / 32 {
			aux := binary.LittleEndian.Uint32(x[64+4*ib:])
			var sumi int32
			for l := range 4 {
				g1, g2 := &iq3xxsGrid[x[8*ib+2*l]], &iq3xxsGrid[x[8*ib+2*l+1]]
				signs := ksignsIQ2XS[aux>>(7*l)&127]
				y := (*[8]byte)(q8[32*ib+8*l:])
				for j := range 4 {
					sumi += applySign(int32(g1[j])*int32(int8(y[j])), signs, j)
					sumi += applySign(int32(g2[j])*int32(int8(y[j+4])), signs, j+4)
				}
			}
			bsum += sumi * int32(2*(aux>>28)+1)
		}
		sum += fp16At(x[96:]) * yd * float32(bsum)
	}
	return 0.125 * sum
}

// e8iq3Levels are the 8 coordinate values of iq3xxsGrid (doubled units), and
// e8iq3Pairs[p] the level indices of grid point p's coordinates: bits 0..5
// are la*8+lb of coordinates 0,1 and bits 6..11 those of coordinates 2,3.
// Both are derived once from the generated grid and never written again.
var e8iq3Levels, e8iq3Pairs = func() ([8]float64, [256]uint16) {
	var lv [8]float64
	var pairs [256]uint16
	level := map[uint8]int{}
	for _, g := range iq3xxsGrid {
		for _, c := range g {
			level[c] = 0
		}
	}
	vals := make([]int, 0, 8)
	for c := range level {
		vals = append(vals, int(c))
	}
	for i := range vals { // insertion sort: 8 values
		for j := i; j > 0 && vals[j] < vals[j-1]; j-- {
			vals[j], vals[j-1] = vals[j-1], vals[j]
		}
	}
	if len(vals) != 8 {
		panic("quant: iq3xxsGrid does not have 8 coordinate levels")
	}
	for i, c := range vals {
		level[uint8(c)] = i
		lv[i] = float64(c) / 2
	}
	for p, g := range iq3xxsGrid {
		pairs[p] = uint16(level[g[0]]*8+level[g[1]]) | uint16(level[g[2]]*8+level[g[3]])<<6
	}
	return lv, pairs
}()

// e8iq3Nearest returns the index of the grid point (in weight units,
// grid/2) nearest to c: the argmin over the 256 points of |g|² − 2c·g,
// evaluated in float64 as sums of per-coordinate terms; ties go to the
// lowest index.
func e8iq3Nearest(c *[4]float32) uint8 {
	var t [4][8]float64 // t[j][L] = L·(L − 2c_j)
	for j := range 4 {
		for i, L := range e8iq3Levels {
			t[j][i] = L * (L - 2*float64(c[j]))
		}
	}
	var a, b [64]float64
	for la := range 8 {
		for lb := range 8 {
			a[la*8+lb] = t[0][la] + t[1][lb]
			b[la*8+lb] = t[2][la] + t[3][lb]
		}
	}
	best, bestS := 0, math.Inf(1)
	for p, pr := range &e8iq3Pairs {
		if s := a[pr&63] + b[pr>>6]; s < bestS {
			best, bestS = p, s
		}
	}
	return uint8(best)
}

// quantizeE8IQ3 is the encoder of the design note: per super-block
//  1. signs: every group of 8 with an odd count of negatives flips the sign
//     of its smallest magnitude (the first, on ties);
//  2. d = fp16(RMS/20 + 1e-12), clamped to the largest finite fp16;
//  3. per 32-weight sub-block, each of the 16 codes: every group of 4
//     magnitudes divided by db = d·(0.5+code)·0.5 goes to its nearest grid
//     point; the code with the least squared error (the first, on ties) wins.
func quantizeE8IQ3(dst []byte, src []float32) {
	for b := range len(src) / qkK {
		x := src[b*qkK : (b+1)*qkK]
		blk := dst[b*e8iq3Bytes : (b+1)*e8iq3Bytes]
		var mag [qkK]float32
		var neg [qkK]bool
		var ss float64
		for i, v := range x {
			mag[i], neg[i] = absf(v), v < 0
			ss += float64(mag[i]) * float64(mag[i])
		}
		for g := range qkK / 8 {
			odd, amin := false, 8*g
			for i := 8 * g; i < 8*g+8; i++ {
				odd = odd != neg[i]
				if mag[i] < mag[amin] {
					amin = i
				}
			}
			if odd {
				neg[amin] = !neg[amin]
			}
		}
		dh := FP32ToFP16(float32(math.Sqrt(ss/qkK)/20 + 1e-12))
		if dh&0x7fff >= 0x7c00 { // infinity (or NaN input): the largest finite fp16
			dh = 0x7bff
		}
		encodeE8IQ3(blk, &mag, &neg, dh)
	}
}

// encodeE8IQ3 writes one super-block with scale bits dh from the
// magnitudes and (parity-fixed) signs of its weights: step 3 of
// quantizeE8IQ3, then the sign words.
func encodeE8IQ3(blk []byte, mag *[qkK]float32, neg *[qkK]bool, dh uint16) {
	blk = blk[:e8iq3Bytes]
	binary.LittleEndian.PutUint16(blk[96:], dh)
	d := FP16ToFP32(dh)
	for ib := range qkK / 32 {
		m := mag[32*ib : 32*ib+32]
		var bestIdx, idx [8]uint8
		bestCode, bestErr := 0, math.Inf(1)
		for code := range 16 {
			db := d * (0.5 + float32(code)) * 0.5
			div := max(db, 1e-20)
			var e float64
			for k := range 8 {
				c := [4]float32{m[4*k] / div, m[4*k+1] / div, m[4*k+2] / div, m[4*k+3] / div}
				idx[k] = e8iq3Nearest(&c)
				for j, g := range iq3xxsGrid[idx[k]] {
					r := float64(0.5*float32(g)*db) - float64(m[4*k+j])
					e += r * r
				}
			}
			if code == 0 || e < bestErr {
				bestIdx, bestCode, bestErr = idx, code, e
			}
		}
		copy(blk[8*ib:8*ib+8], bestIdx[:])
		aux := uint32(bestCode) << 28
		for l := range 4 {
			for j := range 7 {
				if neg[32*ib+8*l+j] {
					aux |= 1 << (7*l + j)
				}
			}
		}
		binary.LittleEndian.PutUint32(blk[64+4*ib:], aux)
	}
}

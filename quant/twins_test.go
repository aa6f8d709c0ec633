package quant

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The kernels that have platform twins are checked here against the
// readable references on random blocks: random bytes for every quant and
// scale field (including the extreme values -128 and 0xff), with the
// fp16/f32 scales made finite. Each test runs on every kernel set (see
// kernels_test.go): the portable kernels, and those with the platform
// tables the CPU runs (natively with GOEXPERIMENT=simd: AVX2, VNNI; under
// `GOOS=js GOARCH=wasm GOEXPERIMENT=simd go test`: SIMD128). The integer
// dots and the quantizers are exact, so the results must be bit-identical.

// twinTypes are the types with platform kernels (on some platform; in a
// build without them their kernels are the portable ones), which the tests
// below check against their references.
var twinTypes = []Type{Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS}

// randFP16 stores a random finite fp16 scale at b[0:2].
func randFP16(rng *rand.Rand, b []byte) {
	putFP16(b, float32(rng.NormFloat64()*math.Pow(2, float64(rng.IntN(20)-14))))
}

// randBlocks returns nb random blocks of typ, with every scale finite (and
// every F16, BF16, F32 value: their blocks are single values).
func randBlocks(rng *rand.Rand, typ Type, nb int) []byte {
	tr := TraitsOf(typ)
	buf := make([]byte, nb*tr.TypeSize)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	for b := range nb {
		blk := buf[b*tr.TypeSize : (b+1)*tr.TypeSize]
		switch typ {
		case Q4_0, Q8_0:
			randFP16(rng, blk)
		case Q5_0, IQ4_NL, IQ4_XS:
			randFP16(rng, blk)
		case Q4_K, Q5_K, Q4_1, Q5_1, Q8_1:
			randFP16(rng, blk)
			randFP16(rng, blk[2:])
		case Q2_K:
			randFP16(rng, blk[80:])
			randFP16(rng, blk[82:])
		case Q3_K:
			randFP16(rng, blk[108:])
		case Q6_K:
			randFP16(rng, blk[208:])
		case IQ3_S, IQ3_XXS, IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S:
			randFP16(rng, blk)
		case TQ2_0:
			randFP16(rng, blk[64:])
		case TQ1_0:
			randFP16(rng, blk[52:])
		case IQ1_M: // d's nibbles are the top ones of the four scale words
			var h [2]byte
			randFP16(rng, h[:])
			d := binary.LittleEndian.Uint16(h[:])
			for k := range 4 {
				sc := binary.LittleEndian.Uint16(blk[48+2*k:])
				binary.LittleEndian.PutUint16(blk[48+2*k:], sc&0x0fff|(d>>(4*k)&0xf)<<12)
			}
		case F16:
			randFP16(rng, blk)
		case BF16:
			binary.LittleEndian.PutUint16(blk, FP32ToBF16(float32(rng.NormFloat64()*math.Pow(2, float64(rng.IntN(20)-10)))))
		case F32:
			binary.LittleEndian.PutUint32(blk, math.Float32bits(float32(rng.NormFloat64()*math.Pow(2, float64(rng.IntN(20)-10)))))
		case Q8_K:
			binary.LittleEndian.PutUint32(blk, math.Float32bits(float32(rng.NormFloat64())))
			for j := range qkK / 16 {
				var s int32
				for _, q := range blk[4+16*j : 4+16*j+16] {
					s += int32(int8(q))
				}
				binary.LittleEndian.PutUint16(blk[4+qkK+2*j:], uint16(int16(s)))
			}
		}
	}
	return buf
}

func TestDotTwinsRandom(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		rng := rand.New(rand.NewPCG(7, 7))
		for _, typ := range slices.Concat(twinTypes, []Type{IQ3_S, IQ3_XXS, IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M, TQ2_0, TQ1_0}) {
			tr := ks.traits(typ)
			ref := refDots[typ]
			for iter := range 300 {
				nb := 1 + iter%9
				w := randBlocks(rng, typ, nb)
				n := nb * tr.BlockSize
				act := randBlocks(rng, tr.VecDotType, n/TraitsOf(tr.VecDotType).BlockSize)
				if iter%50 == 0 { // extreme quants: every byte 0x80 or 0xff
					for i := range w {
						w[i] |= 0x80
					}
					act = randBlocks(rng, tr.VecDotType, n/TraitsOf(tr.VecDotType).BlockSize)
				}
				got, want := tr.Dot(n, w, act), ref(n, w, act)
				if math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("%v n=%d iter %d: Dot %g, reference %g", typ, n, iter, got, want)
				}
			}
		}
	})
}

// activationRefs maps each activation quantizer with a SIMD twin to its
// readable reference.
var activationRefs = map[Type]func(dst []byte, src []float32){
	Q8_0: quantizeQ8_0Ref,
	Q8_K: quantizeQ8_KRef,
}

// randActivation returns n floats of one of several shapes: normal, wide
// range, ties at half steps, blocks of zeros, a single spike, and ±amax
// ties (where the sign of the first extreme decides Q8_K's scale).
func randActivation(rng *rand.Rand, n, shape int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch shape % 6 {
		case 0:
			x[i] = float32(rng.NormFloat64())
		case 1:
			x[i] = float32(rng.NormFloat64() * math.Pow(2, float64(rng.IntN(60)-30)))
		case 2:
			x[i] = float32(rng.IntN(255)-127) / 2
		case 3:
			if i%64 < 40 {
				x[i] = 0
			} else {
				x[i] = float32(rng.NormFloat64())
			}
		case 4:
			if i%37 == 0 {
				x[i] = 1e4
			} else {
				x[i] = float32(rng.NormFloat64()) * 1e-3
			}
		case 5:
			x[i] = float32(rng.IntN(3)-1) * 3
		}
	}
	return x
}

func TestActivationTwinsRandom(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		rng := rand.New(rand.NewPCG(8, 8))
		for typ, ref := range activationRefs {
			tr := ks.traits(typ)
			for iter := range 120 {
				n := (1 + iter%5) * qkK
				x := randActivation(rng, n, iter)
				got := make([]byte, n/tr.BlockSize*tr.TypeSize)
				want := make([]byte, len(got))
				tr.FromFloat(got, x)
				ref(want, x)
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%v shape %d n=%d: byte %d (block %d) = %#x, reference %#x", typ, iter%6, n, i, i/tr.TypeSize, got[i], want[i])
					}
				}
			}
		}
	})
}

// TestFloatDotTwinsRandom checks the F32, F16 and BF16 dots against their
// references (ggml's lane order, float.go), bit for bit, on row lengths
// around the 32 lanes, and the references against the exact dot: the
// lanes' float32 sums stay within n·2^-24·Σ|x·y| of it.
func TestFloatDotTwinsRandom(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		rng := rand.New(rand.NewPCG(9, 9))
		for _, typ := range []Type{F32, F16, BF16} {
			tr := ks.traits(typ)
			ref := refDots[typ]
			for iter := range 300 {
				n := 1 + rng.IntN(700)
				if iter%3 == 0 {
					n = 32 * (1 + rng.IntN(20))
				}
				x, y := make([]float32, n), make([]float32, n)
				for i := range x {
					x[i] = float32(rng.NormFloat64() * math.Pow(2, float64(rng.IntN(8)-4)))
					y[i] = float32(rng.NormFloat64())
				}
				w, act := make([]byte, n*tr.TypeSize), make([]byte, n*tr.TypeSize)
				tr.FromFloat(w, x)
				tr.FromFloat(act, y)
				xd, yd := make([]float32, n), make([]float32, n)
				tr.Dequantize(xd, w)
				tr.Dequantize(yd, act)
				var mag, exact float64
				for i := range xd {
					mag += math.Abs(float64(xd[i]) * float64(yd[i]))
					exact += float64(xd[i]) * float64(yd[i])
				}
				got, want := tr.Dot(n, w, act), ref(n, w, act)
				if !sameFloat(got, want) {
					t.Fatalf("%v n=%d: Dot %g, reference %g", typ, n, got, want)
				}
				if d := math.Abs(float64(want) - exact); d > float64(n)*0x1p-24*mag {
					t.Fatalf("%v n=%d: reference %g, exact %g (Σ|xy| %g)", typ, n, want, exact, mag)
				}
			}
		}
	})
}

// TestF16DotWidenAll checks the F16 dot's fp16 conversion on every bit
// pattern (subnormals, infinities, NaNs): x = (h, 0, ..., 0) against
// 32 ones (the kernels' lanes, not their tail) is h itself.
func TestF16DotWidenAll(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		const n = 32
		w, act := make([]byte, 2*n), make([]byte, 2*n)
		for i := range n {
			binary.LittleEndian.PutUint16(act[2*i:], 0x3c00) // 1.0
		}
		for h := range 1 << 16 {
			binary.LittleEndian.PutUint16(w, uint16(h))
			got, want := ks.traits(F16).Dot(n, w, act), FP16ToFP32(uint16(h))
			if got != want && !(got != got && want != want) {
				t.Fatalf("fp16 %#04x: %g, want %g", h, got, want)
			}
		}
	})
}

// TestDotNRandom: the multi-activation kernels must give, for every
// activation, exactly what the reference dot gives for it alone; 1 to 20
// activations (DotEach splits past MaxDotN).
func TestDotNRandom(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		rng := rand.New(rand.NewPCG(10, 10))
		for _, typ := range slices.Concat(twinTypes, []Type{IQ3_S, IQ3_XXS, IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M, TQ2_0, TQ1_0}) {
			tr := ks.traits(typ)
			at := TraitsOf(tr.VecDotType)
			ref := refDots[typ]
			for iter := range 60 {
				nb := 1 + iter%5
				w := randBlocks(rng, typ, nb)
				if iter%20 == 0 {
					for i := range w {
						w[i] |= 0x80
					}
				}
				n := nb * tr.BlockSize
				acts := make([][]byte, 1+iter%20)
				for i := range acts {
					acts[i] = randBlocks(rng, tr.VecDotType, n/at.BlockSize)
				}
				out := make([]float32, len(acts))
				tr.DotEach(n, w, acts, out)
				for i, a := range acts {
					if want := ref(n, w, a); math.Float32bits(out[i]) != math.Float32bits(want) {
						t.Fatalf("%v n=%d iter %d activation %d of %d: DotN %g, reference %g", typ, n, iter, i, len(acts), out[i], want)
					}
				}
			}
		}
	})
}

// TestScalesMinsK4: the word-wise unpacking of a Q4_K block's scales and
// mins agrees with scaleMinK4 on random packed bytes.
func TestScalesMinsK4(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	q := make([]byte, 12)
	for range 10000 {
		for i := range q {
			q[i] = byte(rng.Uint32())
		}
		sc, mn := scalesMinsK4(q)
		for k := range 8 {
			s, m := scaleMinK4(k, q)
			if uint8(sc>>(8*k)) != s || uint8(mn>>(8*k)) != m {
				t.Fatalf("% x sub-block %d: %d %d, scaleMinK4 %d %d", q, k, uint8(sc>>(8*k)), uint8(mn>>(8*k)), s, m)
			}
		}
	}
}

// TestDotTwinsManyBlocks runs the dots and DotEach on rows of many blocks,
// multiples of four and not (the SIMD kernels reduce four blocks at once
// and finish the rest one by one), including the row lengths of
// TinyLlama (2048 and 5632 weights).
func TestDotTwinsManyBlocks(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		rng := rand.New(rand.NewPCG(12, 12))
		for _, typ := range slices.Concat(twinTypes, []Type{IQ3_S, IQ3_XXS, IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M, TQ2_0, TQ1_0}) {
			tr := ks.traits(typ)
			at := TraitsOf(tr.VecDotType)
			ref := refDots[typ]
			for _, n := range []int{2048, 5632, 256 * 4, 256 * 5, 256 * 7, 256 * 13, 256 * 33} {
				nb := n / tr.BlockSize
				w := randBlocks(rng, typ, nb)
				acts := make([][]byte, 1+n%7)
				for i := range acts {
					acts[i] = randBlocks(rng, tr.VecDotType, n/at.BlockSize)
				}
				out := make([]float32, len(acts))
				tr.DotEach(n, w, acts, out)
				for i, a := range acts {
					want := ref(n, w, a)
					if got := tr.Dot(n, w, a); math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("%v n=%d activation %d: Dot %g, reference %g", typ, n, i, got, want)
					}
					if math.Float32bits(out[i]) != math.Float32bits(want) {
						t.Fatalf("%v n=%d activation %d of %d: DotEach %g, reference %g", typ, n, i, len(acts), out[i], want)
					}
				}
			}
		}
	})
}

// TestDotScalesAllFP16 sets a weight block's fp16 scale to every bit
// pattern (subnormals, infinities and NaNs included), cycling through the
// four blocks of a four-block group and the type's scale fields: the SIMD
// kernels convert four scales at once in vector lanes. Results must be
// equal (or both NaN).
func TestDotScalesAllFP16(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		rng := rand.New(rand.NewPCG(13, 13))
		for _, typ := range slices.Concat(twinTypes, []Type{IQ3_S, IQ3_XXS, IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, TQ2_0, TQ1_0}) {
			tr := ks.traits(typ)
			at := TraitsOf(tr.VecDotType)
			ref := refDots[typ]
			const nb = 4
			n := nb * tr.BlockSize
			w := randBlocks(rng, typ, nb)
			act := randBlocks(rng, tr.VecDotType, n/at.BlockSize)
			off := map[Type][]int{Q4_0: {0}, Q4_1: {0, 2}, Q5_0: {0}, Q5_1: {0, 2}, Q8_0: {0}, Q2_K: {80, 82}, Q3_K: {108}, Q4_K: {0, 2}, Q5_K: {0, 2}, Q6_K: {208}, IQ4_NL: {0}, IQ4_XS: {0}, IQ3_S: {0}, IQ3_XXS: {0}, IQ2_XXS: {0}, IQ2_XS: {0}, IQ2_S: {0}, IQ1_S: {0}, TQ2_0: {64}, TQ1_0: {52}}[typ]
			out := make([]float32, 1)
			for h := range 1 << 16 {
				b := h % nb
				o := off[h/nb%len(off)]
				blk := w[b*tr.TypeSize+o:]
				saved := binary.LittleEndian.Uint16(blk)
				binary.LittleEndian.PutUint16(blk, uint16(h))
				want := ref(n, w, act)
				got := tr.Dot(n, w, act)
				tr.DotEach(n, w, [][]byte{act}, out)
				binary.LittleEndian.PutUint16(blk, saved)
				for _, g := range []float32{got, out[0]} {
					if math.Float32bits(g) != math.Float32bits(want) && !(g != g && want != want) {
						t.Fatalf("%v fp16 scale %#04x in block %d (offset %d): %g, reference %g", typ, h, b, o, g, want)
					}
				}
			}
		}
	})
}

// TestMatVecTwins checks MatVec (the DotRows kernels) against the scalar
// reference row by row: many rows and odd row counts (the kernels take
// several rows per call), TinyLlama's row lengths, rows of one block, the
// longest row the kernels prepare on the stack and longer ones (Dot per
// row), extreme quants (every byte 0x80 or above) and zero rows.
func TestMatVecTwins(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		rng := rand.New(rand.NewPCG(21, 21))
		for _, typ := range slices.Concat(twinTypes, []Type{IQ3_S, IQ3_XXS, IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M, TQ2_0, TQ1_0, F32, F16, BF16}) {
			tr := ks.traits(typ)
			at := TraitsOf(tr.VecDotType)
			ref := refDots[typ]
			shapes := []struct{ n, rows int }{
				{2048, 67}, {5632, 33}, {2048, 256}, {256, 1}, {256, 65}, {256 * 3, 23},
				{256 * 63, 3}, {16384, 5}, {16384 + 256, 3}, {256 * 129, 2}, {256, 0},
			}
			if tr.BlockSize == qk {
				shapes = append(shapes, struct{ n, rows int }{32, 600}, struct{ n, rows int }{96, 171}, struct{ n, rows int }{32 * 511, 2})
			}
			for si, s := range shapes {
				nb := s.n / tr.BlockSize
				rowBytes := nb * tr.TypeSize
				w := randBlocks(rng, typ, nb*s.rows)
				if si%4 == 1 {
					for i := range w[:len(w)/2] {
						w[i] |= 0x80
					}
				}
				act := randBlocks(rng, tr.VecDotType, s.n/at.BlockSize)
				out := make([]float32, s.rows+1)
				out[s.rows] = 42 // past the rows: must stay untouched
				tr.MatVec(s.n, w, act, out[:s.rows])
				if out[s.rows] != 42 {
					t.Fatalf("%v n=%d rows=%d: MatVec wrote past its rows", typ, s.n, s.rows)
				}
				for r := range s.rows {
					want := ref(s.n, w[r*rowBytes:(r+1)*rowBytes], act)
					if math.Float32bits(out[r]) != math.Float32bits(want) {
						t.Fatalf("%v n=%d rows=%d row %d: MatVec %g, reference %g", typ, s.n, s.rows, r, out[r], want)
					}
				}
			}
		}
	})
}

// q8Bytes returns n random int8 bytes in -127..127, as ggml's quantizers
// write them (never -128).
func q8Bytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(int8(rng.IntN(255) - 127))
	}
	return b
}

// TestMatVecQ8_0Signs checks Q8_0's MatVec on quants as ggml writes them
// (-127..127; random blocks nearly always hold a -128 among thousands of
// bytes), and then with one byte of -128 in a weight row (against a
// negative and a positive activation) or in the activation: the relaxed
// kernel takes x·sign(y) times |y|, exact on the former, and must notice
// the latter and still give the reference's bits. Rows past 256 and 512
// lie beyond its first calls.
func TestMatVecQ8_0Signs(t *testing.T) {
	forEachSet(t, func(t *testing.T, ks kernelSet) {
		rng := rand.New(rand.NewPCG(8, 128))
		tr := ks.traits(Q8_0)
		ref := refDots[Q8_0]
		for _, s := range []struct{ n, rows int }{{2048, 67}, {5632, 33}, {32, 600}, {96, 1031}, {2048, 4}} {
			nb := s.n / qk
			rowBytes := nb * q8_0Bytes
			w := randBlocks(rng, Q8_0, nb*s.rows)
			act := randBlocks(rng, Q8_0, nb)
			for b := range nb * s.rows {
				copy(w[b*q8_0Bytes+2:(b+1)*q8_0Bytes], q8Bytes(rng, qk))
			}
			for b := range nb {
				copy(act[b*q8_0Bytes+2:(b+1)*q8_0Bytes], q8Bytes(rng, qk))
			}
			// at ±127 everywhere: the largest sums
			wx, ax := slices.Clone(w), slices.Clone(act)
			for i := range wx {
				if i%q8_0Bytes >= 2 {
					wx[i] = byte(int8(127 - 254*rng.IntN(2)))
				}
			}
			for i := range ax {
				if i%q8_0Bytes >= 2 {
					ax[i] = 0x81 // -127
				}
			}
			check := func(what string, w, act []byte) {
				t.Helper()
				out := make([]float32, s.rows)
				tr.MatVec(s.n, w, act, out)
				for r := range s.rows {
					if want := ref(s.n, w[r*rowBytes:(r+1)*rowBytes], act); math.Float32bits(out[r]) != math.Float32bits(want) {
						t.Fatalf("n=%d rows=%d %s: row %d: MatVec %g, reference %g", s.n, s.rows, what, r, out[r], want)
					}
				}
			}
			check("quants in -127..127", w, act)
			check("quants ±127", wx, ax)
			for _, r := range []int{0, s.rows / 2, s.rows - 1} {
				for _, neg := range []bool{true, false} {
					w2, act2 := slices.Clone(w), slices.Clone(act)
					i := rng.IntN(s.n)
					w2[r*rowBytes+i/qk*q8_0Bytes+2+i%qk] = 0x80
					y := &act2[i/qk*q8_0Bytes+2+i%qk]
					if neg {
						*y = byte(int8(-1 - rng.IntN(127)))
					} else {
						*y = byte(rng.IntN(128))
					}
					check(fmt.Sprintf("weight %d of row %d -128 (activation %d)", i, r, int8(*y)), w2, act2)
				}
			}
			act2 := slices.Clone(act)
			act2[rng.IntN(nb)*q8_0Bytes+2+rng.IntN(qk)] = 0x80
			check("an activation -128", w, act2)
		}
	})
}

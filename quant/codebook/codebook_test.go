package codebook

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/picolm/picolm-wasm/quant"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

func golden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(shareddata.Path(t, "quant/"+name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// blocks returns the golden blocks of a ggml format, and for E8_IQ3 the
// golden IQ3_XXS source rows encoded by package quant.
func blocks(t *testing.T, typ quant.Type) []byte {
	if typ != quant.E8_IQ3 {
		return golden(t, typ.String()+".blocks")
	}
	src := f32s(golden(t, "IQ3_XXS.src.f32"))
	b := make([]byte, len(src)/256*98)
	quant.TraitsOf(typ).FromFloat(b, src)
	return b
}

// magnitudes returns the set of codebook magnitudes of each format, read
// from grids.json independently of package quant's generated tables.
func magnitudes(t *testing.T) map[quant.Type]map[int]bool {
	var g map[string]json.RawMessage
	if err := json.Unmarshal(golden(t, "grids.json"), &g); err != nil {
		t.Fatal(err)
	}
	bytesOf := func(key string, width int) map[int]bool {
		var raw []json.RawMessage
		if err := json.Unmarshal(g[key], &raw); err != nil {
			t.Fatal(err)
		}
		set := map[int]bool{}
		for _, r := range raw {
			s := string(r)
			if u, err := strconv.Unquote(s); err == nil {
				s = u
			}
			w, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			for j := range width {
				set[int(w>>(8*j)&0xff)] = true
			}
		}
		return set
	}
	var kv []int
	if err := json.Unmarshal(g["kvalues_iq4nl"], &kv); err != nil {
		t.Fatal(err)
	}
	iq4 := map[int]bool{}
	for _, v := range kv {
		iq4[v] = true
	}
	return map[quant.Type]map[int]bool{
		quant.IQ2_XXS: bytesOf("iq2xxs_grid", 8),
		quant.IQ2_XS:  bytesOf("iq2xs_grid", 8),
		quant.IQ2_S:   bytesOf("iq2s_grid", 8),
		quant.IQ3_XXS: bytesOf("iq3xxs_grid", 4),
		quant.IQ3_S:   bytesOf("iq3s_grid", 4),
		quant.IQ4_XS:  iq4,
		quant.IQ4_NL:  iq4,
		quant.E8_IQ3:  bytesOf("iq3xxs_grid", 4),
	}
}

func eqBits(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestGoldenBlocks runs the properties over every block of the golden files:
// set(get(b)) == b byte for byte; quant's dequantiser == Eff·v bit for bit,
// for the file's own d and s and for random ones; v an integer of the
// format's codebook (with its sign).
func TestGoldenBlocks(t *testing.T) {
	mags := magnitudes(t)
	for _, typ := range Formats() {
		t.Run(typ.String(), func(t *testing.T) {
			f, err := Of(typ)
			if err != nil {
				t.Fatal(err)
			}
			tr := quant.TraitsOf(typ)
			if tr.BlockSize != f.Block || tr.TypeSize != f.Bytes {
				t.Fatalf("block %d/%d bytes, quant says %d/%d", f.Block, f.Bytes, tr.BlockSize, tr.TypeSize)
			}
			src := blocks(t, typ)
			n := len(src) / f.Bytes
			if n == 0 || n*f.Bytes != len(src) {
				t.Fatalf("%d bytes is not whole blocks", len(src))
			}
			v := make([]int8, n*f.Block)
			if err := f.Values(v, src); err != nil {
				t.Fatal(err)
			}
			seen := map[int]bool{}
			for i, x := range v {
				m := int(x)
				if m < 0 {
					m = -m
				}
				if !mags[typ][int(x)] && !mags[typ][m] {
					t.Fatalf("weight %d: v = %d is not a codebook value", i, x)
				}
				seen[int(x)] = true
			}
			if len(seen) < 4 {
				t.Errorf("only %d distinct v: %v", len(seen), seen)
			}
			want := make([]float32, len(v))
			tr.Dequantize(want, src)
			got := make([]float32, len(v))
			f.Dequantize(got, src, v)
			if i := eqBits(got, want); i >= 0 {
				t.Fatalf("weight %d: Eff·v = %v, dequantize = %v", i, got[i], want[i])
			}
			// The golden deq files are ggml's own dequantisation.
			if typ != quant.E8_IQ3 {
				if i := eqBits(got, f32s(golden(t, typ.String()+".deq.f32"))); i >= 0 {
					t.Fatalf("weight %d differs from the golden dequantisation", i)
				}
			}

			rng := rand.New(rand.NewPCG(1, uint64(typ)))
			var s [MaxSubs]uint8
			for b := range n {
				blk := src[b*f.Bytes : (b+1)*f.Bytes]
				d := f.D(blk)
				f.S(blk, s[:])
				// Overwrite the fields with random ones, then set the
				// originals back: the bytes must be the original block.
				c := bytes.Clone(blk)
				for range 8 {
					var s2 [MaxSubs]uint8
					f.SetD(c, uint16(rng.Uint32()))
					for k := range f.Subs() {
						s2[k] = uint8(rng.IntN(f.SMax + 1))
					}
					if err := f.SetS(c, s2[:]); err != nil {
						t.Fatal(err)
					}
					var s3 [MaxSubs]uint8
					f.S(c, s3[:])
					if s3 != s2 {
						t.Fatalf("block %d: wrote s %v, read %v", b, s2[:f.Subs()], s3[:f.Subs()])
					}
					// Only d and s bytes changed: v is the same.
					vc := make([]int8, f.Block)
					if err := f.Values(vc, c); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(i8b(vc), i8b(v[b*f.Block:(b+1)*f.Block])) {
						t.Fatalf("block %d: v changed with d and s", b)
					}
					// With finite d, quant's dequantiser is Eff·v.
					if df := quant.FP16ToFP32(f.D(c)); !math.IsInf(float64(df), 0) && !math.IsNaN(float64(df)) {
						w1, w2 := make([]float32, f.Block), make([]float32, f.Block)
						tr.Dequantize(w1, c)
						f.Dequantize(w2, c, vc)
						if i := eqBits(w2, w1); i >= 0 {
							t.Fatalf("block %d, d %#04x: weight %d: Eff·v = %v, dequantize = %v", b, f.D(c), i, w2[i], w1[i])
						}
					}
				}
				f.S(blk, s[:])
				f.SetD(c, d)
				if err := f.SetS(c, s[:]); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(c, blk) {
					t.Fatalf("block %d: set(get(b)) != b:\n%x\n%x", b, c, blk)
				}
			}
		})
	}
}

func i8b(v []int8) []byte {
	b := make([]byte, len(v))
	for i, x := range v {
		b[i] = byte(x)
	}
	return b
}

func f32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
	}
	return out
}

// TestFieldPositions checks each format's field positions against bytes set
// by hand from the layout table.
func TestFieldPositions(t *testing.T) {
	cases := []struct {
		typ  quant.Type
		set  func(b []byte) // marks sub-block 1's scale as 5 by hand
		want int            // sub-block index that must read 5
	}{
		{quant.IQ2_XXS, func(b []byte) { b[2+8+7] = 5 << 4 }, 1},
		{quant.IQ3_XXS, func(b []byte) { b[66+4+3] = 5 << 4 }, 1},
		{quant.E8_IQ3, func(b []byte) { b[64+4+3] = 5 << 4 }, 1},
		{quant.IQ2_XS, func(b []byte) { b[66] = 5 << 4 }, 1},
		{quant.IQ2_S, func(b []byte) { b[74] = 5 << 4 }, 1},
		{quant.IQ3_S, func(b []byte) { b[106] = 5 << 4 }, 1},
		{quant.IQ4_XS, func(b []byte) { b[4] = 5 << 4; b[2] = 2 << 2 }, 1}, // 5 | 2<<4 = 37
	}
	for _, c := range cases {
		f, _ := Of(c.typ)
		b := make([]byte, f.Bytes)
		c.set(b)
		var s [MaxSubs]uint8
		f.S(b, s[:])
		want := uint8(5)
		if c.typ == quant.IQ4_XS {
			want = 37
		}
		for k := range f.Subs() {
			w := uint8(0)
			if k == c.want {
				w = want
			}
			if s[k] != w {
				t.Errorf("%v: s[%d] = %d, want %d", c.typ, k, s[k], w)
			}
		}
		c2 := make([]byte, f.Bytes)
		if err := f.SetS(c2, s[:]); err != nil || !bytes.Equal(c2, b) {
			t.Errorf("%v: SetS wrote %x, want %x (%v)", c.typ, c2, b, err)
		}
	}
}

func TestEff(t *testing.T) {
	d := quant.FP32ToFP16(1.5)
	for _, c := range []struct {
		typ  quant.Type
		s    uint8
		want float32
	}{
		{quant.IQ2_XXS, 3, 1.5 * 3.5 * 0.25},
		{quant.IQ2_XS, 0, 1.5 * 0.5 * 0.25},
		{quant.IQ2_S, 15, 1.5 * 15.5 * 0.25},
		{quant.IQ3_XXS, 7, 1.5 * 7.5 * 0.5},
		{quant.IQ3_S, 4, 1.5 * 9},
		{quant.IQ4_XS, 10, 1.5 * -22},
		{quant.IQ4_XS, 63, 1.5 * 31},
		{quant.IQ4_NL, 0, 1.5},
		{quant.E8_IQ3, 3, 1.5 * 3.5 * 0.25},
	} {
		f, _ := Of(c.typ)
		if got := f.Eff(d, c.s); got != c.want {
			t.Errorf("%v: Eff(1.5, %d) = %v, want %v", c.typ, c.s, got, c.want)
		}
	}
}

func TestErrors(t *testing.T) {
	if _, err := Of(quant.Q4_K); !errors.Is(err, ErrFormat) {
		t.Errorf("Of(Q4_K) = %v", err)
	}
	f, _ := Of(quant.IQ3_S)
	b := make([]byte, f.Bytes)
	s := []uint8{0, 1, 2, 16, 0, 0, 0, 0}
	if err := f.SetS(b, s); !errors.Is(err, ErrScaleRange) {
		t.Errorf("SetS(16) = %v", err)
	}
	if !bytes.Equal(b, make([]byte, f.Bytes)) {
		t.Error("a refused SetS wrote bytes")
	}
	f, _ = Of(quant.IQ4_XS)
	if err := f.SetS(make([]byte, f.Bytes), []uint8{63, 64, 0, 0, 0, 0, 0, 0}); !errors.Is(err, ErrScaleRange) {
		t.Errorf("IQ4_XS SetS(64) = %v", err)
	}
}

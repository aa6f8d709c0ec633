package refit

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/quant"
	"github.com/picolm/picolm-wasm/quant/codebook"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

func read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(shareddata.Path(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// blocks returns the golden blocks of a ggml format and its source rows;
// for E8_IQ3, the golden IQ3_XXS source rows encoded by package quant.
func blocks(t *testing.T, typ quant.Type) ([]byte, []float32) {
	if typ != quant.E8_IQ3 {
		return read(t, "quant/"+typ.String()+".blocks"), f32s(read(t, "quant/"+typ.String()+".src.f32"))
	}
	src := f32s(read(t, "quant/IQ3_XXS.src.f32"))
	b := make([]byte, len(src)/256*98)
	quant.TraitsOf(typ).FromFloat(b, src)
	return b, src
}

func f32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
	}
	return out
}

// codesEqual reports whether a and b (blocks of f) differ at most in their
// d and s fields: a's fields are copied into a copy of b, which must then
// equal a.
func codesEqual(f *codebook.Format, a, b []byte) bool {
	c := bytes.Clone(b)
	var s [codebook.MaxSubs]uint8
	for i := 0; i < len(a); i += f.Bytes {
		f.SetD(c[i:], f.D(a[i:]))
		f.S(a[i:], s[:])
		if err := f.SetS(c[i:], s[:]); err != nil {
			return false
		}
	}
	return bytes.Equal(a, c)
}

func sqErr(f *codebook.Format, blocks []byte, w []float32) float64 {
	y := make([]float32, len(w))
	quant.TraitsOf(f.Type).Dequantize(y, blocks)
	var e float64
	for i := range w {
		r := float64(y[i]) - float64(w[i])
		e += r * r
	}
	return e
}

// TestGolden re-fits ggml's golden blocks of every codebook format against
// their source rows: the error never grows, the RMSE Tensor reports is the
// one of package quant's dequantisation, only d and s bytes change, and
// the result is a local optimum (no single s step, no fp16 neighbour of d
// is better).
func TestGolden(t *testing.T) {
	for _, typ := range codebook.Formats() {
		t.Run(typ.String(), func(t *testing.T) {
			f, _ := codebook.Of(typ)
			orig, src := blocks(t, typ)
			blocks := bytes.Clone(orig)
			st, err := Tensor(f, blocks, src)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%-8v rmse %.6g -> %.6g (%+.2f%%), %d of %d blocks changed", typ, st.Before, st.After, 100*(st.After-st.Before)/st.Before, st.Changed, st.Blocks)
			e0, e1 := sqErr(f, orig, src), sqErr(f, blocks, src)
			n := float64(len(src))
			if math.Abs(math.Sqrt(e0/n)-st.Before) > 1e-12 || math.Abs(math.Sqrt(e1/n)-st.After) > 1e-12 {
				t.Errorf("reported rmse %g -> %g, dequantised %g -> %g", st.Before, st.After, math.Sqrt(e0/n), math.Sqrt(e1/n))
			}
			if !(e1 <= e0) {
				t.Errorf("error grew: %g -> %g", e0, e1)
			}
			if st.Changed == 0 || e1 >= e0 {
				t.Errorf("nothing improved on ggml's blocks (%d changed)", st.Changed)
			}
			if !codesEqual(f, blocks, orig) {
				t.Error("code bytes changed")
			}
			// Local optimum.
			v := make([]int8, len(src))
			if err := f.Values(v, blocks); err != nil {
				t.Fatal(err)
			}
			var s [codebook.MaxSubs]uint8
			for b := 0; b < len(src)/f.Block; b++ {
				blk := bytes.Clone(blocks[b*f.Bytes : (b+1)*f.Bytes])
				w, vb := src[b*f.Block:(b+1)*f.Block], v[b*f.Block:(b+1)*f.Block]
				d := f.D(blk)
				f.S(blk, s[:])
				best := errOf(f, d, s[:], w, vb)
				for _, dd := range []uint16{d + 1, d - 1} {
					if dd&0x7c00 != 0x7c00 {
						if e := errOf(f, dd, s[:], w, vb); e < best {
							t.Errorf("block %d: d %#04x -> %#04x lowers the error %g -> %g", b, d, dd, best, e)
						}
					}
				}
				for k := range f.Subs() {
					for _, step := range []int{-1, 1} {
						s2 := s
						if x := int(s[k]) + step; x >= 0 && x <= f.SMax {
							s2[k] = uint8(x)
							if e := errOf(f, d, s2[:], w, vb); e < best {
								t.Errorf("block %d: s[%d] %d -> %d lowers the error %g -> %g", b, k, s[k], s2[k], best, e)
							}
						}
					}
				}
			}
		})
	}
}

// TestBlockNoImprovement: a teacher equal to the student's own weights
// leaves every block's bytes alone.
func TestBlockNoImprovement(t *testing.T) {
	for _, typ := range codebook.Formats() {
		f, _ := codebook.Of(typ)
		orig, _ := blocks(t, typ)
		w := make([]float32, len(orig)/f.Bytes*f.Block)
		quant.TraitsOf(typ).Dequantize(w, orig)
		blocks := bytes.Clone(orig)
		st, err := Tensor(f, blocks, w)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(blocks, orig) || st.Changed != 0 || st.Before != 0 || st.After != 0 {
			t.Errorf("%v: %+v, bytes equal %v", typ, st, bytes.Equal(blocks, orig))
		}
	}
}

func openFile(t testing.TB, path string) *gguf.File {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// teacherOf writes an F32 GGUF holding the dequantised tensors of the file.
func teacherOf(t *testing.T, sf *gguf.File, path string) {
	var ts []gguf.TensorInfo
	for _, ti := range sf.Tensors {
		y := make([]float32, ti.Elements())
		quant.TraitsOf(ti.Type).Dequantize(y, ti.Data)
		b := make([]byte, 4*len(y))
		for i, x := range y {
			u := math.Float32bits(x)
			b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
		}
		ts = append(ts, gguf.TensorInfo{Name: ti.Name, Dims: ti.Dims, Type: quant.F32, Data: b})
	}
	var buf bytes.Buffer
	if err := gguf.Write(&buf, sf.KV, ts, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFileNothingToChange: with the student's own dequantised weights as
// the teacher, the output is the student file byte for byte.
func TestFileNothingToChange(t *testing.T) {
	dir := t.TempDir()
	student := shareddata.Path(t, "synth/synth-small-IQ4_XS.gguf")
	teacherOf(t, openFile(t, student), filepath.Join(dir, "teacher.gguf"))
	out := filepath.Join(dir, "out.gguf")
	stats, err := File(filepath.Join(dir, "teacher.gguf"), student, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	refit := 0
	for _, s := range stats {
		if s.Refit {
			refit++
			if s.Changed != 0 || s.Before != 0 {
				t.Errorf("%+v", s)
			}
		}
	}
	if refit == 0 {
		t.Fatal("no tensor was refit")
	}
	a, b := read(t, "synth/synth-small-IQ4_XS.gguf"), must(os.ReadFile(out))
	if !bytes.Equal(a, b) {
		t.Error("output differs from the student")
	}
}

func must[T any](x T, err error) T {
	if err != nil {
		panic(err)
	}
	return x
}

// TestFilePair re-fits llama.cpp's IQ4_XS synth-small against its F32
// teacher: every refit tensor's RMSE drops, only d and s bytes change
// (metadata, other tensors and padding are identical), and the engine
// loads and runs the output.
func TestFilePair(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.gguf")
	stats, err := File(shareddata.Path(t, "synth/synth-small-F32.gguf"), shareddata.Path(t, "synth/synth-small-IQ4_XS.gguf"), out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sf := openFile(t, shareddata.Path(t, "synth/synth-small-IQ4_XS.gguf"))
	of := openFile(t, out)
	if len(of.Bytes()) != len(sf.Bytes()) {
		t.Fatalf("size %d, student %d", len(of.Bytes()), len(sf.Bytes()))
	}
	patched := bytes.Clone(sf.Bytes())
	refit := 0
	for i, s := range stats {
		ti, oi := &sf.Tensors[i], &of.Tensors[i]
		if s.Name != ti.Name || oi.Name != ti.Name || oi.Offset != ti.Offset {
			t.Fatalf("tensor %d: %q %q %q", i, s.Name, ti.Name, oi.Name)
		}
		if !s.Refit {
			continue
		}
		refit++
		t.Logf("%-26s %v rmse %.6g -> %.6g (%+.2f%%)", s.Name, s.Type, s.Before, s.After, 100*(s.After-s.Before)/s.Before)
		if !(s.After < s.Before) {
			t.Errorf("%s: rmse %g -> %g", s.Name, s.Before, s.After)
		}
		f, _ := codebook.Of(ti.Type)
		if !codesEqual(f, oi.Data, ti.Data) {
			t.Errorf("%s: code bytes changed", s.Name)
		}
		copy(patched[sf.DataOffset+ti.Offset:], oi.Data)
	}
	if refit == 0 {
		t.Fatal("no tensor was refit")
	}
	if !bytes.Equal(patched, of.Bytes()) {
		t.Error("bytes outside the refit tensors changed")
	}
	m, err := engine.Load(of)
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.NewSession(engine.SessionOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	if _, err := s.Generate([]int{1}, engine.GenerateOptions{MaxTokens: 8}, func(id int, _ []byte) bool {
		n++
		return true
	}); err != nil || n == 0 {
		t.Fatalf("generate: %d tokens, %v", n, err)
	}
}

func TestFileErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.gguf")
	student := shareddata.Path(t, "synth/synth-small-IQ4_XS.gguf")
	// A quantised teacher.
	if _, err := File(shareddata.Path(t, "synth/synth-small-Q8_0.gguf"), student, out, Options{}); !errors.Is(err, ErrTeacher) {
		t.Errorf("Q8_0 teacher: %v", err)
	}
	// Another model as teacher: missing tensors or other shapes.
	sf := openFile(t, student)
	var ts []gguf.TensorInfo
	for _, ti := range sf.Tensors[:len(sf.Tensors)/2] {
		ts = append(ts, gguf.TensorInfo{Name: ti.Name, Dims: []uint64{ti.Elements()}, Type: quant.F32, Data: make([]byte, 4*ti.Elements())})
	}
	var buf bytes.Buffer
	if err := gguf.Write(&buf, nil, ts, 0); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.gguf")
	if err := os.WriteFile(bad, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := File(bad, student, out, Options{}); !errors.Is(err, ErrMismatch) {
		t.Errorf("mismatched teacher: %v", err)
	}
	if _, err := File(shareddata.Path(t, "synth/synth-small-F32.gguf"), student, student, Options{}); !errors.Is(err, ErrSameFile) {
		t.Errorf("out = student: %v", err)
	}
	if _, err := File(shareddata.Path(t, "synth/nonexistent.gguf"), student, out, Options{}); err == nil {
		t.Error("missing teacher: no error")
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed refit left %s (%v)", out, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 { // bad.gguf only: no temporary files left
		t.Errorf("directory holds %d entries", len(entries))
	}
}

package engine

import (
	"io"
	"sync/atomic"
	"testing"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// TestPartBytes holds PartBytes, computed from the header, equal to the
// bytes LoadWith reads for each part, over models with tied and untied
// outputs, F32 and quantized matrices and rows that are not whole blocks
// (stories260K's Q8_0 ffn_down), split in 1 to 5 parts; and the parts'
// matrices add up to the file's tensor data once.
func TestPartBytes(t *testing.T) {
	for _, name := range []string{"stories260K.gguf", "tinyllamas-stories-260k-q8_0.gguf", "llama-2-tiny-random.gguf", "synth/synth-small-Q4_K_M.gguf"} {
		path := shareddata.Path(t, name)
		fh, size := readerOf(t, path)
		f, err := gguf.ParseHeader(fh, size)
		if err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= 5; n++ {
			for k := range n {
				want, err := PartBytes(f, k, n)
				if err != nil {
					t.Fatalf("%s part %d of %d: %v", name, k, n, err)
				}
				c := &countingReader{r: fh}
				if _, err := LoadWith(f, LoadOptions{Data: c, Part: k, Parts: n, SkipWeightCheck: true}); err != nil {
					t.Fatalf("%s part %d of %d: %v", name, k, n, err)
				}
				if got := c.n.Load(); got != want {
					t.Errorf("%s part %d of %d: LoadWith read %d bytes, PartBytes says %d", name, k, n, got, want)
				}
			}
		}
	}
}

// TestPartBytesErrors: a part out of range is an error, not a count.
func TestPartBytesErrors(t *testing.T) {
	fh, size := readerOf(t, shareddata.Path(t, "stories260K.gguf"))
	f, err := gguf.ParseHeader(fh, size)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]int{{-1, 2}, {2, 2}, {0, maxParts + 1}} {
		if _, err := PartBytes(f, p[0], p[1]); err == nil {
			t.Errorf("PartBytes(part %d of %d) did not fail", p[0], p[1])
		}
		if _, err := KVBytes(f, p[0], p[1], SessionOptions{}); err == nil {
			t.Errorf("KVBytes(part %d of %d) did not fail", p[0], p[1])
		}
	}
}

// TestKVBytes holds KVBytes to the KV cache a session (or shard) of each
// part allocates.
func TestKVBytes(t *testing.T) {
	path := shareddata.Path(t, "synth/synth-small-Q4_K_M.gguf")
	for n := 1; n <= 3; n++ {
		for k := range n {
			m := loadPart(t, path, k, n)
			s, err := m.newState(SessionOptions{Context: 100})
			if err != nil {
				t.Fatal(err)
			}
			got := int64(2*len(s.keyCache)) + int64(2*len(s.valCache))
			want, err := KVBytes(m.file, k, n, SessionOptions{Context: 100})
			if err != nil {
				t.Fatal(err)
			}
			rope := want - got
			if rope < 0 || rope > 2*100*int64(m.Config.RopeDim)*4 {
				t.Errorf("part %d of %d: KVBytes %d, the caches %d", k, n, want, got)
			}
			s.Close()
		}
	}
}

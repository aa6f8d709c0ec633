package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/quant"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// poisoned returns the bytes of the test model name with the little-endian
// value bits written at byte off of tensor's data (size: 2 or 4 bytes).
func poisoned(t testing.TB, name, tensor string, off int, bits uint32, size int) []byte {
	t.Helper()
	b := readTestFile(t, name)
	f, err := gguf.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	ti, ok := f.Tensor(tensor)
	if !ok {
		t.Fatalf("%s has no %s", name, tensor)
	}
	p := int(f.DataOffset+ti.Offset) + off
	if size == 2 {
		binary.LittleEndian.PutUint16(b[p:], uint16(bits))
	} else {
		binary.LittleEndian.PutUint32(b[p:], bits)
	}
	return b
}

const (
	fp16NaN = 0x7e00
	fp16Inf = 0x7c00
	f32NaN  = 0x7fc00000
	f32Inf  = 0xff800000 // -Inf
)

// TestNonFiniteWeightsRefused: a model whose Q8_0 scales (or F32 norms)
// were NaN or infinite loaded and emitted token 0 at every step. It is now
// refused at load with an error naming the tensor, the block and its row;
// SkipWeightCheck loads it anyway. Every kind of tensor: a plain matrix, the
// one the loader dequantizes (stories260K Q8_0's 172-wide ffn_down), the
// tied embeddings, a norm, F16 and F32 matrices, a K-quant's dmin.
func TestNonFiniteWeightsRefused(t *testing.T) {
	q8, synth := "tinyllamas-stories-260k-q8_0.gguf", "synth/synth-small-Q4_K_M.gguf"
	for _, tc := range []struct {
		model, tensor string
		off           int
		bits          uint32
		size          int
		want          string
	}{
		{q8, "blk.0.attn_q.weight", 5 * 34, fp16NaN, 2, "blk.0.attn_q.weight (Q8_0) block 5 of 128 (row 2): scale d is NaN"},
		{q8, "blk.3.attn_v.weight", 63 * 34, fp16Inf, 2, "blk.3.attn_v.weight (Q8_0) block 63 of 64 (row 31): scale d is +Inf"},
		{q8, "blk.1.ffn_down.weight", 100 * 34, fp16Inf, 2, "blk.1.ffn_down.weight (Q8_0) block 100 of 344 (row 18): a dequantized value is"},
		{q8, "token_embd.weight", 7 * 34, fp16NaN, 2, "token_embd.weight (Q8_0) block 7 of 1024 (row 3): scale d is NaN"},
		{q8, "blk.4.ffn_norm.weight", 4 * 3, f32NaN, 4, "blk.4.ffn_norm.weight (F32) block 3 of 64: element 3 is NaN"},
		{"stories260K.gguf", "output_norm.weight", 4 * 63, f32Inf, 4, "output_norm.weight (F32) block 63 of 64: element 63 is -Inf"},
		{"stories260K.gguf", "output.weight", 4 * 1000, f32NaN, 4, "output.weight (F32) block 1000 of 32768 (row 15): value is NaN"},
		{"llama-2-tiny-random.gguf", "token_embd.weight", 2 * 12345, fp16Inf, 2, "token_embd.weight (F16) block 12345 of 256000 (row 1543): value is +Inf"},
	} {
		b := poisoned(t, tc.model, tc.tensor, tc.off, tc.bits, tc.size)
		f, err := gguf.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Load(f)
		if !errors.Is(err, ErrWeights) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: %v\nwant an error containing %q", tc.model, tc.tensor, err, tc.want)
			continue
		}
		t.Logf("%s: %v", tc.model, err)
		if _, err := LoadWith(f, LoadOptions{SkipWeightCheck: true}); err != nil {
			t.Errorf("%s %s: SkipWeightCheck: %v", tc.model, tc.tensor, err)
		}
	}
	// A K-quant: the dmin of a Q4_K block.
	f, err := gguf.Parse(readTestFile(t, synth))
	if err != nil {
		t.Fatal(err)
	}
	var name string
	for _, ti := range f.Tensors {
		if ti.Type == quant.Q4_K {
			name = ti.Name
			break
		}
	}
	b := poisoned(t, synth, name, 2*144+2, fp16NaN, 2)
	if f, err = gguf.Parse(b); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(f); !errors.Is(err, ErrWeights) || !strings.Contains(err.Error(), name+" (Q4_K) block 2 of") || !strings.Contains(err.Error(), "scale dmin is NaN") {
		t.Errorf("Q4_K dmin: %v", err)
	}
}

func readTestFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(shareddata.Path(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNonFiniteWeightsSplit: split over instances (the browser's Workers),
// each checks the rows it holds, through a reader: a NaN in the last row of
// attn_q is found by the part holding it, and named with the tensor's block.
func TestNonFiniteWeightsSplit(t *testing.T) {
	b := poisoned(t, "tinyllamas-stories-260k-q8_0.gguf", "blk.2.attn_q.weight", 127*34, fp16NaN, 2)
	load := func(part int) error {
		f, err := gguf.ParseHeader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = LoadWith(f, LoadOptions{Data: bytes.NewReader(b), Part: part, Parts: 2})
		return err
	}
	if err := load(0); err != nil {
		t.Errorf("part 0 (rows 0-31): %v", err)
	}
	if err := load(1); !errors.Is(err, ErrWeights) || !strings.Contains(err.Error(), "blk.2.attn_q.weight (Q8_0) block 127 of 128 (row 63)") {
		t.Errorf("part 1 (rows 32-63): %v", err)
	}
}

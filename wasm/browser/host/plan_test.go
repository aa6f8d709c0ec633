package host

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/gguf/tools/synth"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// fakeHeader is the header of a Q4_K_M model of shape s with a vocabulary
// of vocab tokens, and the size its file would have: the planner's input,
// without the gigabytes of data.
func fakeHeader(t *testing.T, s synth.Shape, vocab int) (*gguf.File, int64) {
	t.Helper()
	v, err := gguf.Open(shareddata.Path(t, "ggml-vocab-llama-spm.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	m := synth.Model{Shape: s, Seed: 1, Vocab: v, VocabSize: vocab, RandomBlocks: true}
	ft, err := synth.ParseFileType("Q4_K_M")
	if err != nil {
		t.Fatal(err)
	}
	h, size, err := m.Header(ft)
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.ParseHeaderPrefix(h, size)
	if err != nil {
		t.Fatal(err)
	}
	return f, size
}

// TestPlanLlama3_8B plans a Llama-3-8B-shaped Q4_K_M (4.9 GB, over one
// wasm memory) from its header alone: one Worker is refused with what it
// would need and the fewest that fit, the default count is raised to it,
// and each Worker's share fits a wasm memory.
func TestPlanLlama3_8B(t *testing.T) {
	f, size := fakeHeader(t, synth.Llama3_8B, synth.Llama3Vocab)
	if size < 4_800_000_000 || size > 5_000_000_000 {
		t.Fatalf("the fake 8B file is %d bytes, want about 4.9 GB", size)
	}
	// Not cross-origin isolated: one Worker, refused.
	_, err := PlanSplit("l3-8b.gguf", f, size, 1, true, 1)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("one Worker: %v, want ErrTooLarge", err)
	}
	for _, s := range []string{"l3-8b.gguf is 4.9 GB", "does not fit in 1 Worker: the Worker needs 4.", "a wasm memory holds 4.00 GiB", "Split over 2 Workers it would fit (the lead needs 2.", "cross-origin isolated", "Nothing was downloaded"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("the refusal %q does not say %q", err, s)
		}
	}
	// workers: 1 asked for on an isolated page: refused, naming the count that fits.
	_, err = PlanSplit("l3-8b.gguf", f, size, 1, false, MaxWorkers)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "load it with workers: 2") {
		t.Errorf("workers: 1: %v", err)
	}
	// The default of one Worker (a 1-core machine) is raised to 2.
	p, err := PlanSplit("l3-8b.gguf", f, size, 1, true, MaxWorkers)
	if err != nil {
		t.Fatal(err)
	}
	if p.Workers != 2 || p.MaxWorkers != 8 || len(p.Need) != 2 {
		t.Fatalf("plan %+v, want 2 Workers of at most 8", p)
	}
	total := int64(0)
	for k, v := range p.Need {
		if v > WorkerBudget {
			t.Errorf("Worker %d needs %d bytes, over %d", k, v, WorkerBudget)
		}
		total += v
	}
	// The weights once, with the KV cache and the headers: within 10%.
	if total < size || total > size+size/10 {
		t.Errorf("the Workers need %d bytes in all for a %d-byte file", total, size)
	}
	// The default of 4 stays 4; of 16 is capped at the 8 KV heads.
	if p, err := PlanSplit("l3-8b.gguf", f, size, 4, true, MaxWorkers); err != nil || p.Workers != 4 {
		t.Errorf("4 by default: %+v, %v", p, err)
	}
	if p, err := PlanSplit("l3-8b.gguf", f, size, 16, true, MaxWorkers); err != nil || p.Workers != 8 {
		t.Errorf("16 by default: %+v, %v", p, err)
	}
	if _, err := PlanSplit("l3-8b.gguf", f, size, 0, false, MaxWorkers); !errors.Is(err, ErrBadParams) {
		t.Errorf("0 Workers: %v", err)
	}
}

// TestPlanTooLargeForAny: a model whose parts do not fit even split over
// its KV heads is refused with what the most Workers would need.
func TestPlanTooLargeForAny(t *testing.T) {
	s := synth.Shape{Embd: 8192, Layers: 160, Heads: 64, KVHeads: 4, FF: 28672, Context: 4096}
	f, size := fakeHeader(t, s, 32000)
	_, err := PlanSplit("huge.gguf", f, size, 16, true, MaxWorkers)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "does not fit in 4 Workers either, the most its attention divides over") {
		t.Errorf("%v", err)
	}
}

// TestPlanSmall: a small model fits in the Workers asked for.
func TestPlanSmall(t *testing.T) {
	b, err := os.ReadFile(shareddata.Path(t, "synth/synth-small-Q4_K_M.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := gguf.ParseHeader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	pre := [][]byte{h.Bytes()[:h.DataOffset]}
	p, _, err := PlanHeaders("small.gguf", pre, OneFile("small.gguf", int64(len(b))), 2, true, MaxWorkers)
	if err != nil || p.Workers != 2 || p.MaxWorkers != 2 {
		t.Fatalf("%+v, %v", p, err)
	}
	// Loaded by parts through a reader, it runs as the whole file does.
	var r io.ReaderAt = bytes.NewReader(b)
	sh, err := LoadShardParts(pre, r, OneFile("small.gguf", int64(len(b))), 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	sh.Close()
	if _, err := LoadShardParts([][]byte{pre[0][:100]}, r, OneFile("small.gguf", int64(len(b))), 1, 2); err == nil {
		t.Error("a cut header loaded")
	}
}

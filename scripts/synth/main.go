// Command synth writes a random-weight Llama GGUF model of a given shape in
// any type picolm can quantize to (or, for the IQ1/IQ2/IQ3 formats, with
// random codes: see gguf/tools/synth), deterministically from a seed:
//
//	go run ./scripts/synth -o tinyllama-q4km.gguf                 # TinyLlama-1.1B shape, Q4_K_M
//	go run ./scripts/synth -small -type Q8_0 -seed 7 -o small.gguf  # a 2-layer model, instantly
//	go run ./scripts/synth -preset llama3-8b -random-blocks -o /tmp/l3-8b.gguf  # Llama-3-8B shape, Q4_K_M, 4.9 GB
//	go run ./scripts/synth -layers 4 -embd 512 -ff 1536 -type F16 -o m.gguf
//
// Weights are N(0, 0.05²), output.weight N(0, 0.2²), norms 1.0; the
// tokenizer is copied from -vocab (default: the LLaMA SentencePiece
// vocabulary of the shared test data). Tensors are generated and quantized a
// chunk at a time, so memory stays small whatever the model size; progress
// and the peak resident memory (where /proc tells it) go to stderr.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/gguf/tools/quantize"
	"github.com/picolm/picolm-wasm/gguf/tools/synth"
)

func main() {
	shape := synth.TinyLlama
	var (
		out    = flag.String("o", "", "output `FILE` (required)")
		typ    = flag.String("type", "Q4_K_M", "file `TYPE`: "+strings.Join(synth.FileTypes(), " "))
		seed   = flag.Uint64("seed", 1, "random seed")
		small  = flag.Bool("small", false, "the small shape (n_embd 256, 2 layers, 4 heads, 2 KV heads, n_ff 768, context 256) instead of TinyLlama-1.1B's")
		vocab  = flag.String("vocab", "../shared/testdata/ggml-vocab-llama-spm.gguf", "GGUF `FILE` to copy the tokenizer from")
		name   = flag.String("name", "", "general.name (default synth-EMBDxLAYERS)")
		pure   = flag.Bool("pure", false, "no mix rules: every weight matrix in TYPE")
		j      = flag.Int("j", 0, "threads (default: all cores)")
		quiet  = flag.Bool("q", false, "no per-tensor progress")
		preset = flag.String("preset", "", "a shape: tinyllama (the default), small (as -small), llama3-8b (Llama-3-8B's shape, its vocabulary of 128256 tokens padded from -vocab's)")
		blocks = flag.Bool("random-blocks", false, "write the weight matrices as random blocks of their quantized type (finite scales) instead of quantizing random floats: an 8B model in a minute (Q4_K, Q5_K, Q6_K, Q4_0, Q5_0, Q8_0 only)")
		sparse = flag.Bool("sparse", false, "write only the header, the tensor data left a hole of zeros (a sparse file of the full size: no disk, no time): for tests of what reads headers, not for running")
		vsize  = flag.Int("vocab-size", 0, "pad the vocabulary to `N` tokens with unused ones (default: -vocab's own; llama3-8b: 128256)")
	)
	var embd, layers, heads, kvHeads, ff, ctx int
	flag.IntVar(&embd, "embd", 0, "override n_embd")
	flag.IntVar(&layers, "layers", 0, "override the layer count")
	flag.IntVar(&heads, "heads", 0, "override the head count")
	flag.IntVar(&kvHeads, "kv-heads", 0, "override the KV head count")
	flag.IntVar(&ff, "ff", 0, "override n_ff")
	flag.IntVar(&ctx, "ctx", 0, "override the context length")
	flag.Parse()
	if *out == "" || flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	pad := *vsize
	switch *preset {
	case "", "tinyllama":
	case "small":
		shape = synth.Small
	case "llama3-8b":
		shape = synth.Llama3_8B
		if pad == 0 {
			pad = synth.Llama3Vocab
		}
	default:
		fail(fmt.Errorf("unknown -preset %q: tinyllama, small or llama3-8b", *preset))
	}
	if *small {
		shape = synth.Small
	}
	for _, o := range []struct{ v, dst *int }{{&embd, &shape.Embd}, {&layers, &shape.Layers}, {&heads, &shape.Heads}, {&kvHeads, &shape.KVHeads}, {&ff, &shape.FF}, {&ctx, &shape.Context}} {
		if *o.v != 0 {
			*o.dst = *o.v
		}
	}
	ft, err := synth.ParseFileType(*typ)
	if err != nil {
		fail(err)
	}
	v, err := gguf.Open(*vocab)
	if err != nil {
		fail(err)
	}
	defer v.Close()
	m := synth.Model{Shape: shape, Seed: *seed, Name: *name, Vocab: v, VocabSize: pad, RandomBlocks: *blocks}
	if *sparse {
		h, size, err := m.Header(ft)
		if err == nil {
			err = writeSparse(*out, h, size)
		}
		if err != nil {
			fail(err)
		}
		fmt.Fprintf(os.Stderr, "synth: wrote %s: the %d-byte header of a %d-byte %s model, the rest a hole\n", *out, len(h), size, ft.Name)
		return
	}
	o := quantize.Options{Pure: *pure, Threads: *j}
	if !*quiet {
		o.Progress = os.Stderr
	}
	st, err := m.WriteFile(*out, ft, o)
	if err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "synth: wrote %s: %s, %+v, seed %d, %.1f MiB of tensors in %v%s\n",
		*out, ft.Name, shape, *seed, float64(st.OutBytes)/(1<<20), st.Duration.Round(1e6), peakRSS())
}

// writeSparse writes header h and extends the file to size bytes (a hole).
func writeSparse(path string, h []byte, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(h); err != nil {
		f.Close()
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// peakRSS reports VmHWM from /proc/self/status, where there is one.
func peakRSS() string {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			return ", peak RSS " + strings.TrimSpace(v)
		}
	}
	return ""
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "synth:", err)
	os.Exit(1)
}

package engine

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/quant"
)

// formatDivergence is a case of testdata/format-refs.jsonl whose greedy
// tokens leave llama.cpp's at a step where llama.cpp's top-2 margin is 0.01
// or more: the model, the prompt, the first step that differs and llama.cpp's
// margin there.
type formatDivergence struct {
	model, prompt string
	step          int
	margin        float64
}

// knownDivergences are the cases of testdata/format-refs.jsonl the engine
// does not yet reproduce within the quality bar (a divergence only at a
// margin below 0.01). They are kernels whose sums do not run in the order of
// llama.cpp's x86 paths (the references were made on an AMD EPYC Zen 4 with
// avx2 and avx512_vnni; see each line's cpu): the scalar references of
// these formats sum in ggml's generic order, and a last-bit difference in
// one product eventually crosses a rounding boundary of a quantized
// activation. TestFormatsMatchLlamaCpp fails when a listed case starts to
// agree or diverges elsewhere (update the list: it only shrinks as the
// kernels are fixed) and when a case that is not listed diverges.
var knownDivergences = []formatDivergence{
	{"synth-Q6_K", "Hello, wörld! 123", 14, 0.06435},
	{"synth-IQ1_S", "Hello, wörld! 123", 12, 0.0157},
}

// TestFormatsMatchLlamaCpp regenerates the synthetic model of every format of
// testdata/format-refs.jsonl (the file types people download, and the
// codebook formats with random codes: scripts/llamaref/formats.json),
// checks each is the file llama.cpp ran, and compares the greedy tokens with
// llama.cpp's: they must agree at every step, or diverge only at a step whose
// llama.cpp margin is below 0.01, or be a known divergence. About 9 s
// natively on one core.
func TestFormatsMatchLlamaCpp(t *testing.T) {
	refs := readSynthRefs(t, "format-refs.jsonl", 60)
	// Under wasm (Node, wazero: four runs in CI, each several times slower
	// than native) and with -short, only each model's first prompt runs: its
	// kernels are still checked on every platform.
	cheap := runtime.GOARCH == "wasm" || testing.Short()
	known := map[[2]string]formatDivergence{}
	for _, d := range knownDivergences {
		known[[2]string{d.model, d.prompt}] = d
	}
	seen := map[[2]string]bool{}
	dir := t.TempDir()
	models := map[string]*Model{}
	var order []string
	rows := map[string][]string{}
	for _, r := range refs {
		m, ok := models[r.Model]
		if !ok {
			m = writeArchModel(t, dir, r)
			models[r.Model] = m
			order = append(order, r.Model)
		}
		key := [2]string{r.Model, r.Prompt}
		seen[key] = true
		if cheap && len(rows[r.Model]) > 0 {
			continue
		}
		step, got := firstDivergence(t, m, r)
		d, listed := known[key]
		var note string
		switch {
		case step < 0:
			note = "agrees"
			if listed {
				t.Errorf("%s %q agrees with llama.cpp at every step now: remove it from knownDivergences", r.Model, r.Prompt)
			}
		case r.Margins[step] < 0.01:
			note = fmt.Sprintf("step %d, margin %.4g (accepted)", step, r.Margins[step])
			if listed {
				t.Errorf("%s %q diverges only at step %d, margin %.4g, within the bar now: remove it from knownDivergences", r.Model, r.Prompt, step, r.Margins[step])
			}
		case listed && d.step == step && math.Abs(d.margin-r.Margins[step]) < 5e-4:
			note = fmt.Sprintf("step %d, margin %.4g (known)", step, r.Margins[step])
		case listed:
			t.Errorf("%s %q: step %d: token %d, llama.cpp %d (margin %.4g); knownDivergences says step %d, margin %.4g: update it", r.Model, r.Prompt, step, got, r.IDs[step], r.Margins[step], d.step, d.margin)
			note = fmt.Sprintf("step %d, margin %.4g (moved)", step, r.Margins[step])
		default:
			t.Errorf("%s %q: step %d: token %d, llama.cpp %d (margin %.4g)", r.Model, r.Prompt, step, got, r.IDs[step], r.Margins[step])
			note = fmt.Sprintf("step %d, margin %.4g (NEW)", step, r.Margins[step])
		}
		rows[r.Model] = append(rows[r.Model], note)
	}
	for _, d := range knownDivergences {
		if !seen[[2]string{d.model, d.prompt}] {
			t.Errorf("knownDivergences lists %s %q, which the references do not hold", d.model, d.prompt)
		}
	}
	for _, name := range order {
		t.Logf("%-14s %-40s %s", name, weightTypes(models[name]), strings.Join(rows[name], "; "))
	}
	if len(order) > 0 {
		t.Logf("references made on %s", refs[0].CPU)
	}
}

// weightTypes lists the types of m's weight matrices, most used first.
func weightTypes(m *Model) string {
	n := map[quant.Type]uint64{}
	for _, ti := range m.file.Tensors {
		if len(ti.Dims) >= 2 {
			n[ti.Type] += uint64(len(ti.Data))
		}
	}
	types := make([]quant.Type, 0, len(n))
	for t := range n {
		types = append(types, t)
	}
	slices.SortFunc(types, func(a, b quant.Type) int {
		if n[a] != n[b] {
			if n[a] > n[b] {
				return -1
			}
			return 1
		}
		return int(a) - int(b)
	})
	s := make([]string, len(types))
	for i, t := range types {
		s[i] = t.String()
	}
	return strings.Join(s, ",")
}

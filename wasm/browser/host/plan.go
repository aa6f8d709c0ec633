package host

import (
	"fmt"
	"io"
	"strings"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/gguf"
)

// WasmMemoryBytes is the most one wasm32 memory holds (one Worker's Go
// heap): 4 GiB.
const WasmMemoryBytes = 4 << 30

// WorkerBudget is how much of a Worker's wasm memory its part of a model
// may take (its weights, KV cache, header and tokenizer): the rest is Go's
// runtime, the engine's code and data, stacks, activations and the heap's
// slack.
const WorkerBudget = WasmMemoryBytes - 256<<20

// MaxWorkers is the most Web Workers the page splits a model over.
const MaxWorkers = 16

// Plan is how a model loaded by parts (each Worker reading only its rows,
// LoadPartsFiles and LoadShardParts) is split over Workers.
type Plan struct {
	Workers    int     // the Workers it is split over
	MaxWorkers int     // the most its attention divides over (its KV heads, engine.MaxParts)
	Need       []int64 // bytes of wasm memory each Worker needs, the lead first (PartNeed)
}

// PartNeed is what part of parts of the model in f (parsed from its
// header alone) needs of a Worker's wasm memory: the tensor bytes it reads
// (engine.PartBytes), its KV cache for the session the page opens
// (DefaultContext), and its header and, for the lead, its tokenizer (the
// header's bytes three times over: the bytes kept, the tokens' strings and
// the tokenizer's tables; the other parts keep the header's bytes alone).
func PartNeed(f *gguf.File, part, parts int) (int64, error) {
	w, err := engine.PartBytes(f, part, parts)
	if err != nil {
		return 0, err
	}
	kv, err := engine.KVBytes(f, part, parts, engine.SessionOptions{Context: DefaultContext})
	if err != nil {
		return 0, err
	}
	hdr := int64(0)
	for _, p := range f.Parts() {
		hdr += int64(p.DataOffset)
	}
	if part == 0 {
		hdr *= 3
	}
	return w + kv + hdr, nil
}

// needs are the parts' PartNeed for n parts, and whether each fits
// WorkerBudget.
func needs(f *gguf.File, n int) ([]int64, bool, error) {
	out := make([]int64, n)
	fits := true
	for k := range n {
		v, err := PartNeed(f, k, n)
		if err != nil {
			return nil, false, err
		}
		out[k] = v
		fits = fits && v <= WorkerBudget
	}
	return out, fits, nil
}

// PlanSplit plans a model of size bytes whose header is f over Workers,
// before any of its weights is read. workers is the count asked for; auto
// marks it as the page's default, which the plan caps at the model's
// MaxWorkers and raises to the fewest Workers every part fits in. limit is
// the most the page can start (1 where it is not cross-origin isolated,
// else MaxWorkers). A model that does not fit is an ErrTooLarge error
// that says what each Worker would need, and in how many it would fit.
func PlanSplit(name string, f *gguf.File, size int64, workers int, auto bool, limit int) (Plan, error) {
	most, err := engine.MaxParts(f)
	if err != nil {
		return Plan{}, fmt.Errorf("%s: %w", name, err)
	}
	limit = min(max(limit, 1), MaxWorkers)
	if workers < 1 || workers > MaxWorkers {
		return Plan{}, fmt.Errorf("%w: %d Workers (1 to %d)", ErrBadParams, workers, MaxWorkers)
	}
	// fewest is the fewest Workers (up to the model's and the page's
	// limits) every part fits in, 0 if none.
	fewest := 0
	var fewestNeed []int64
	for n := 1; n <= min(max(most, 1), MaxWorkers); n++ {
		need, fits, err := needs(f, n)
		if err != nil {
			return Plan{}, fmt.Errorf("%s: %w", name, err)
		}
		if fits {
			fewest, fewestNeed = n, need
			break
		}
	}
	n := workers
	if auto {
		n = min(n, max(most, 1), limit)
		if fewest > n && fewest <= limit {
			n = fewest
		}
	}
	need, fits, err := needs(f, n)
	if err != nil {
		return Plan{}, fmt.Errorf("%s: %w", name, err)
	}
	if fits {
		return Plan{Workers: n, MaxWorkers: most, Need: need}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s is %s: it does not fit in %s: %s; a wasm memory holds %s, %s of it for a Worker's part of the model, its KV cache and tokenizer",
		name, FormatBytes(size), workersWord(n), describeNeed(need), gib(WasmMemoryBytes), gib(WorkerBudget))
	switch {
	case fewest > 0 && fewest <= limit:
		fmt.Fprintf(&b, ". Split over %s it fits (%s): load it with workers: %d", workersWord(fewest), describeNeed(fewestNeed), fewest)
	case fewest > 0:
		fmt.Fprintf(&b, ". Split over %s it would fit (%s), but this page can start %s (several need a cross-origin isolated page: SharedArrayBuffer)", workersWord(fewest), describeNeed(fewestNeed), workersWord(limit))
	default:
		most := min(max(most, 1), MaxWorkers)
		last, _, err := needs(f, most)
		if err != nil {
			return Plan{}, fmt.Errorf("%s: %w", name, err)
		}
		fmt.Fprintf(&b, ". It does not fit in %s either, the most its attention divides over (%s)", workersWord(most), describeNeed(last))
	}
	b.WriteString(". Nothing was downloaded")
	return Plan{}, fmt.Errorf("%w: %s", ErrTooLarge, b.String())
}

// describeNeed says what n Workers need: "the Worker needs 4.9 GiB", or
// "the lead needs 2.7 GiB and each other Worker up to 2.4 GiB".
func describeNeed(need []int64) string {
	if len(need) == 1 {
		return "the Worker needs " + gib(need[0])
	}
	most := int64(0)
	for _, v := range need[1:] {
		most = max(most, v)
	}
	other := "each other Worker up to"
	if len(need) == 2 {
		other = "the other Worker"
	}
	return fmt.Sprintf("the lead needs %s and %s %s", gib(need[0]), other, gib(most))
}

func workersWord(n int) string {
	if n == 1 {
		return "1 Worker"
	}
	return fmt.Sprintf("%d Workers", n)
}

// gib renders n bytes in GiB, the unit of wasm memories.
func gib(n int64) string { return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30)) }

// PlanHeaders parses the headers of the files fs from their prefixes (at
// least up to each one's data section) and plans them (PlanSplit).
func PlanHeaders(name string, prefixes [][]byte, fs Files, workers int, auto bool, limit int) (Plan, *gguf.File, error) {
	if err := fs.check(); err != nil {
		return Plan{}, nil, err
	}
	f, err := gguf.ParseHeaderPrefixSet(prefixes, fs.Sizes, fs.Names)
	if err != nil {
		return Plan{}, nil, fmt.Errorf("%s: %w", name, err)
	}
	p, err := PlanSplit(name, f, fs.Size(), workers, auto, limit)
	return p, f, err
}

// LoadPartsFiles loads the lead's part of a model split over
// 1+len(peers) Workers that each read only their own rows: the header is
// parsed from prefixes (each file's first bytes, up to its data section),
// and the lead's tensor bytes (embeddings, norms, its rows of every
// matrix) are read through r, the files fs laid end to end (HTTP Range
// requests or Blob slices in the browser). Its part must fit WorkerBudget.
func (w *Worker) LoadPartsFiles(name string, prefixes [][]byte, r io.ReaderAt, fs Files, peers []engine.Peer, mesh engine.Mesh) (ModelInfo, error) {
	if w.running.Load() {
		return ModelInfo{}, ErrBusy
	}
	w.Unload()
	f, err := partHeader(name, prefixes, fs, 0, 1+len(peers))
	if err != nil {
		return ModelInfo{}, err
	}
	return w.open(f, name, fs.Size(), engine.LoadOptions{Data: r, Parts: 1 + len(peers)}, peers, mesh)
}

// LoadShardParts is LoadShardFiles for a Worker that reads only its own
// rows through r, the header parsed from prefixes (LoadPartsFiles).
func LoadShardParts(prefixes [][]byte, r io.ReaderAt, fs Files, part, parts int) (*engine.Shard, error) {
	f, err := partHeader("the model", prefixes, fs, part, parts)
	if err != nil {
		return nil, err
	}
	return loadShardPart(f, r, part, parts)
}

// partHeader parses the header from prefixes and checks part of parts
// fits a Worker.
func partHeader(name string, prefixes [][]byte, fs Files, part, parts int) (*gguf.File, error) {
	if err := fs.check(); err != nil {
		return nil, err
	}
	f, err := gguf.ParseHeaderPrefixSet(prefixes, fs.Sizes, fs.Names)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	need, err := PartNeed(f, part, parts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if need > WorkerBudget {
		return nil, fmt.Errorf("%w: %s: part %d of %d needs %s; a wasm memory holds %s, %s of it for a Worker's part",
			ErrTooLarge, name, part, parts, gib(need), gib(WasmMemoryBytes), gib(WorkerBudget))
	}
	return f, nil
}

// Command kernels measures quant's kernels on every format with a dot
// kernel: the weight bytes per second of a matrix-vector product
// (Traits.MatVec, one activation: decode) and of a matrix times a batch of
// quant.MaxDotN activations (Traits.MatMul: prefill), whatever kernels the
// traits table chose for this CPU and build. scripts/bench builds it natively
// and for GOOS=js (run under Node), both with GOEXPERIMENT=simd, and prints
// the two side by side:
//
//	go run ./scripts/bench/kernels -types Q4_K,Q5_K
//	GOOS=js GOARCH=wasm GOEXPERIMENT=simd go build -o k.wasm ./scripts/bench/kernels
//	"$(go env GOROOT)/lib/wasm/go_js_wasm_exec" k.wasm -types Q4_K
//
// Each format's matrix has 2048 columns (TinyLlama's n_embd) and as many rows
// as make -mib MiB of weights (more than a core's L2, less than the L3 of the
// machines we run on: the figures are the kernels' own speed, not DRAM's):
// a quantized block of random rows, N(0, 1) (random codes for the codebook
// formats without a quantiser), tiled. One JSON line per format on stdout:
//
//	{"type":"Q4_K","bpw":4.5,"matvecGBs":9.1,"matmulGBs":30.2}
//
// A rate is weight bytes per second over one call (for MatMul, one call
// covers all MaxDotN activations), the median of the timed calls; with
// -clock cpu the calls are timed by CPU time (natively the thread's, under
// Node the process's), which on a shared machine leaves out the time
// slices other jobs take.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/picolm/picolm-wasm/gguf/tools/synth"
	"github.com/picolm/picolm-wasm/quant"
)

const cols = 2048

type result struct {
	Type      string  `json:"type"`
	BPW       float64 `json:"bpw"`       // bits per weight
	MatVecGBs float64 `json:"matvecGBs"` // one activation
	MatMulGBs float64 `json:"matmulGBs"` // quant.MaxDotN activations
}

func main() {
	var (
		types  = flag.String("types", "", "comma-separated `TYPES` (ggml names, e.g. Q4_K; default: every type with a dot kernel)")
		mib    = flag.Int("mib", 4, "MiB of weights per format")
		minDur = flag.Duration("min", 300*time.Millisecond, "time each measurement takes at least (and 3 calls)")
		clock  = flag.String("clock", "wall", "`CLOCK` the calls are timed by: wall, or cpu (the thread's CPU time natively, the Node process's under js: on a shared machine other jobs' time slices do not count)")
	)
	flag.Parse()
	now := func() time.Duration { return time.Since(start) }
	switch *clock {
	case "wall":
	case "cpu":
		now = cpuTime
	default:
		fmt.Fprintf(os.Stderr, "kernels: -clock %q: wall or cpu\n", *clock)
		os.Exit(2)
	}
	list := dotTypes()
	if *types != "" {
		list = nil
		for _, name := range strings.Split(*types, ",") {
			t, ok := byName(name)
			if !ok {
				fmt.Fprintf(os.Stderr, "kernels: %q is not a type with a dot kernel\n", name)
				os.Exit(2)
			}
			list = append(list, t)
		}
	}
	enc := json.NewEncoder(os.Stdout)
	for _, t := range list {
		r := measureType(t, *mib<<20, *minDur, now)
		if err := enc.Encode(r); err != nil {
			fmt.Fprintln(os.Stderr, "kernels:", err)
			os.Exit(1)
		}
	}
}

// dotTypes lists every type with a dot kernel: ggml's in id order, then
// picoLM's own.
func dotTypes() []quant.Type {
	var ts []quant.Type
	for id := range quant.Type(64) {
		if quant.TraitsOf(id).HasDot() {
			ts = append(ts, id)
		}
	}
	if quant.TraitsOf(quant.E8_IQ3).HasDot() {
		ts = append(ts, quant.E8_IQ3)
	}
	return ts
}

func byName(name string) (quant.Type, bool) {
	i := slices.IndexFunc(dotTypes(), func(t quant.Type) bool { return strings.EqualFold(t.String(), name) })
	if i < 0 {
		return 0, false
	}
	return dotTypes()[i], true
}

// start is the origin of the wall clock.
var start = time.Now()

// measureType times MatVec and MatMul on bytes of weights of type t by the
// clock now.
func measureType(t quant.Type, bytes int, minDur time.Duration, now func() time.Duration) result {
	tr := quant.TraitsOf(t)
	rowBytes, err := quant.RowSize(t, cols)
	if err != nil {
		panic(err) // every type with a dot kernel has blocks that divide 2048
	}
	const base = 64 // rows quantized, then tiled
	rows := max(base, bytes/rowBytes/base*base)
	rng := rand.New(rand.NewPCG(uint64(t), 1))
	normal := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		return x
	}
	block := synth.Codes(t, cols, base, 1, uint64(t), 0)
	if block == nil {
		block = make([]byte, base*rowBytes)
		tr.FromFloat(block, normal(base*cols))
	}
	w := make([]byte, rows*rowBytes)
	for off := 0; off < len(w); off += len(block) {
		copy(w[off:], block)
	}
	vt := quant.TraitsOf(tr.VecDotType)
	actBytes, _ := quant.RowSize(tr.VecDotType, cols)
	acts := make([][]byte, quant.MaxDotN)
	outs := make([][]float32, quant.MaxDotN)
	for i := range acts {
		acts[i] = make([]byte, actBytes)
		vt.FromFloat(acts[i], normal(cols))
		outs[i] = make([]float32, rows)
	}
	gbs := func(f func()) float64 {
		s := median(f, minDur, now)
		return float64(len(w)) / s / 1e9
	}
	return result{
		Type:      t.String(),
		BPW:       float64(8*tr.TypeSize) / float64(tr.BlockSize),
		MatVecGBs: round(gbs(func() { tr.MatVec(cols, w, acts[0], outs[0]) })),
		MatMulGBs: round(gbs(func() { tr.MatMul(cols, w, acts, outs, 0) })),
	}
}

// median runs f once to warm up, then until minDur has passed by the clock
// now and at least 3 timed calls were made, and returns the median call's
// seconds.
func median(f func(), minDur time.Duration, now func() time.Duration) float64 {
	f()
	var ds []float64
	t := now()
	for len(ds) < 3 || now()-t < minDur {
		t0 := now()
		f()
		ds = append(ds, (now() - t0).Seconds())
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// round keeps 3 significant digits.
func round(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 3, 64), 64)
	return v
}

//go:build !wasm

// Command bench measures picolm against llama.cpp (node-llama-cpp) and wllama
// on TinyLlama-1.1B-shaped random-weight models, and quant's kernels on every
// format. It is a program, never a timed test:
//
//	go run ./scripts/bench                      # everything, writes bench/RESULTS.md
//	go run ./scripts/bench -types Q4_K_M -gen 32 -only native-1,wasip1-node,llamacpp-1
//	go run ./scripts/bench -only kernels -kernel-types Q4_K,Q5_K -out ''
//
// It generates the models with scripts/synth (cached in -cache between runs),
// builds the native CLI, the wasip1 CLI and the browser runtime with
// GOEXPERIMENT=simd, installs node-llama-cpp and @wllama/wllama (pinned) into
// the cache with npm, checks that llama.cpp loads the generated files, then
// runs every runner on every model, alternating, on the same 64-token prompt
// (greedy, -gen generated tokens):
//
//	native-1, native-2      our CLI, 1 and 2 threads
//	wasip1-node             our wasip1 build (SIMD128) under Node's WASI
//	wasip1-wasmtime         the same file under wasmtime (scripts/wasmtime's runner,
//	                        wasmtime-go's libwasmtime; -wasmtime-opts adds its options)
//	browser-picolm          our engine in headless Chromium through web/picolm.js
//	browser-picolm-2        the same, the model split over 2 Workers (SharedArrayBuffer)
//	                        (either with @relaxed or @simd128: that engine build, not picolm.js's choice)
//	llamacpp-1, llamacpp-2  node-llama-cpp, CPU only
//	wllama-1, wllama-2      @wllama/wllama in the same Chromium (2 threads: COOP/COEP)
//	kernels                 the kernel table: scripts/bench/kernels natively,
//	                        under Node (GOOS=js) and in Chromium (the relaxed-SIMD
//	                        build, scripts/bench/kernels.mjs), weight GB/s per format
//	                        for one activation (MatVec) and a batch of 16 (MatMul)
//
// It prints a table of prefill and decode tok/s, time to first token and
// peak memory (the median of -reps runs), the build and the thread or Worker
// count of each row, each of ours as a ratio to each peer, and the kernel
// table, and writes them with the date, CPU model and features, load averages
// and versions to -out. A runner that fails on a file (wllama crashes on some)
// is a row with the error, not the end of the run.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/picolm/picolm-wasm/engine/tokenizer"
	"github.com/picolm/picolm-wasm/gguf"
)

const (
	nodeLlamaCpp = "node-llama-cpp@3.21.1"
	wllama       = "@wllama/wllama@3.13.0"
	promptText   = "Once upon a time, in a small village at the edge of a great forest, there lived a curious girl named Lily. " +
		"Every morning she walked to the river with her old dog, Max, to watch the boats go by and to listen to the birds. " +
		"One day she found a strange wooden box half buried in the sand, with a golden key tied to its lid and a note that said"
)

type result struct {
	Runner, Type string
	TTFTMs       float64 `json:"ttftMs"`
	PrefillTokS  float64 `json:"prefillTokS"`
	DecodeTokS   float64 `json:"decodeTokS"`
	Build        string  `json:"build"`   // the code that ran: "SIMD128", "relaxed", "AVX2", ...
	Threads      int     `json:"threads"` // threads, or Workers in the browser
	PeakMB       float64
	Load         [2]float64 // load average before and after
	Note         string     `json:"note"` // a run that counts, with a caveat
	Err          string
	Runs         int         // successful runs the figures are the median of
	MemMB        float64     `json:"memMB"` // our browser engine's wasm memories, all Workers
	Split        *splitStats `json:"split"` // where a split model's time went (browser-picolm-N)
	// -browser-clock cpu (browser-picolm): Chromium's CPU time in the
	// prompt and in the generated tokens (browser.mjs's BENCH_CLOCK=cpu).
	CPUPrefillS      float64 `json:"cpuPrefillS"`
	CPUPrefillTokens int     `json:"cpuPrefillTokens"`
	CPUDecodeS       float64 `json:"cpuDecodeS"`
	CPUDecodeTokens  int     `json:"cpuDecodeTokens"`
}

// cpuRates are a browser-picolm run's tokens per CPU second (prefill,
// decode), or zeros without -browser-clock cpu.
func (r result) cpuRates() (prefill, decode float64) {
	if r.CPUPrefillS > 0 {
		prefill = float64(r.CPUPrefillTokens) / r.CPUPrefillS
	}
	if r.CPUDecodeS > 0 {
		decode = float64(r.CPUDecodeTokens) / r.CPUDecodeS
	}
	return prefill, decode
}

// splitStats is web/picolm.js's stats.split: per phase, the
// synchronisations and where the lead's and the other Workers' time went.
type splitStats struct {
	Prefill, Decode splitPart
}

type splitPart struct {
	Syncs            int       `json:"syncs"`
	AttentionSyncs   int       `json:"attentionSyncs"`
	LeadAttentionMs  float64   `json:"leadAttentionMs"`
	LeadProductsMs   float64   `json:"leadProductsMs"`
	LeadWaitMs       float64   `json:"leadWaitMs"`
	LeadSendMs       float64   `json:"leadSendMs"`
	LeadEmitMs       float64   `json:"leadEmitMs"`
	LeadOtherMs      float64   `json:"leadOtherMs"`
	LeadSleeps       int       `json:"leadSleeps"`
	ShardBusyMs      []float64 `json:"shardBusyMs"`
	ShardAttentionMs []float64 `json:"shardAttentionMs"`
	ShardSleeps      []int     `json:"shardSleeps"`
}

func (p splitPart) String() string {
	return fmt.Sprintf("%d syncs (%d attention); lead: attention %.0f ms, products %.0f, send %.0f, wait %.0f, emit %.0f, other %.0f, %d sleeps; other Workers busy %v ms (attention %v), %v sleeps",
		p.Syncs, p.AttentionSyncs, p.LeadAttentionMs, p.LeadProductsMs, p.LeadSendMs, p.LeadWaitMs, p.LeadEmitMs, p.LeadOtherMs, p.LeadSleeps, roundAll(p.ShardBusyMs), roundAll(p.ShardAttentionMs), p.ShardSleeps)
}

func roundAll(v []float64) []int {
	r := make([]int, len(v))
	for i, x := range v {
		r[i] = int(math.Round(x))
	}
	return r
}

func main() {
	home, _ := os.UserCacheDir()
	var (
		cache   = flag.String("cache", filepath.Join(home, "picolm-bench"), "`DIR` for the models, builds and npm packages")
		types   = flag.String("types", "Q4_K_M,Q5_K_M,Q6_K,Q8_0,Q4_0,IQ4_XS", "model file types")
		ktypes  = flag.String("kernel-types", "", "formats of the kernel table (ggml names such as Q4_K; default: every format with a dot kernel)")
		only    = flag.String("only", "", "comma-separated runners (default: all)")
		gen     = flag.Int("gen", 128, "tokens to generate")
		plen    = flag.Int("prompt", 64, "prompt tokens (BOS included)")
		out     = flag.String("out", "bench/RESULTS.md", "results `FILE` (empty: none)")
		reps    = flag.Int("reps", 1, "runs of each runner on each model (alternating); the median counts")
		bclock  = flag.String("browser-clock", "", "`cpu`: browser-picolm rows also give tokens per CPU second of all Chromium's processes (the generation runs twice), which other jobs on the machine inflate far less than wall-clock rates")
		wtOpts  = flag.String("wasmtime-opts", "", "options of wasip1-wasmtime's runner, space-separated (such as -W relaxed-simd-deterministic=y or -C cranelift-NAME=VALUE)")
		timeout = flag.Duration("timeout", 10*time.Minute, "limit of one run")
	)
	flag.Parse()
	root, err := repoRoot()
	check(err)
	vocab := vocabFile(root)
	check(os.MkdirAll(*cache, 0o755))
	start := time.Now()

	runners := []string{"native-1", "native-2", "wasip1-node", "wasip1-wasmtime", "browser-picolm", "browser-picolm-2", "llamacpp-1", "llamacpp-2", "wllama-1", "wllama-2", "kernels"}
	if *only != "" {
		runners = strings.Split(*only, ",")
	}
	kernels := slices.Contains(runners, "kernels")
	runners = slices.DeleteFunc(runners, func(r string) bool { return r == "kernels" })
	need := func(prefix string) bool {
		for _, r := range runners {
			if strings.HasPrefix(r, prefix) {
				return true
			}
		}
		return false
	}

	// Builds.
	// The go commands inherit GOTOOLCHAIN, with which the go command that
	// started this program found the toolchain go.mod names.
	env := append(os.Environ(), "GOEXPERIMENT=simd")
	native := filepath.Join(*cache, "picolm")
	wasip1 := filepath.Join(*cache, "picolm.wasm")
	if len(runners) > 0 {
		step("build the native and wasip1 CLIs (GOEXPERIMENT=simd)")
		check(run(root, env, "go", "build", "-o", native, "./wasm/cli"))
		check(run(root, append(env, "GOOS=wasip1", "GOARCH=wasm"), "go", "build", "-o", wasip1, "./wasm/cli"))
	}
	wt := wasmtimeRun{opts: strings.Fields(*wtOpts), compiled: filepath.Join(*cache, "wasmtime-compiled")}
	if need("wasip1-wasmtime") {
		step("build scripts/wasmtime's runner (cgo, wasmtime-go's libwasmtime)")
		wt.bin = filepath.Join(*cache, "wasmtime-run")
		check(run(filepath.Join(root, "scripts", "wasmtime"), append(os.Environ(), "CGO_ENABLED=1"), "go", "build", "-o", wt.bin, "."))
	}
	if need("browser") || need("wllama") {
		step("build the browser runtime")
		check(run(root, env, "bash", "scripts/serve.sh", "--build-only"))
	}
	if need("browser") || need("wllama") || kernels {
		// The browser runners (and the kernel table's Chromium column) drive Chromium with the repo's playwright-core
		// (package.json); a fresh clone has no node_modules yet.
		if _, err := os.Stat(filepath.Join(root, "node_modules", "playwright-core", "package.json")); err != nil {
			step("npm ci (playwright-core for the browser runners)")
			check(run(root, nil, "npm", "ci", "--no-audit", "--no-fund"))
		}
		if _, err := os.Stat(chromium()); err != nil {
			step("apt-get install chromium (Debian's, for the browser runners)")
			check(run(root, nil, "sh", "-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium"))
		}
	}
	npmDir := filepath.Join(*cache, "npm")
	if need("llamacpp") || need("wllama") {
		// The peers, pinned, in the cache (not the repo's package.json):
		// whichever of them is missing.
		var missing []string
		for _, p := range []string{nodeLlamaCpp, wllama} {
			name := p[:strings.LastIndexByte(p, '@')]
			if _, err := os.Stat(filepath.Join(npmDir, "node_modules", name, "package.json")); err != nil {
				missing = append(missing, p)
			}
		}
		if len(missing) > 0 {
			step("npm install " + strings.Join(missing, " "))
			check(os.MkdirAll(npmDir, 0o755))
			if _, err := os.Stat(filepath.Join(npmDir, "package.json")); err != nil {
				check(os.WriteFile(filepath.Join(npmDir, "package.json"), []byte(`{"private":true}`), 0o644))
			}
			check(run(npmDir, nil, "npm", append([]string{"install", "--no-audit", "--no-fund"}, missing...)...))
		}
	}

	var ktable string
	if kernels {
		ktable = kernelTable(root, *cache, env, *ktypes)
	}

	// Models.
	models := map[string]string{}
	if len(runners) == 0 {
		*types = ""
	}
	for _, t := range strings.Split(*types, ",") {
		if t == "" {
			continue
		}
		path := filepath.Join(*cache, "tinyllama-"+strings.ToLower(t)+".gguf")
		if _, err := os.Stat(path); err != nil {
			step("generate the TinyLlama-shaped " + t + " model (cached)")
			check(run(root, env[:len(env)-1], "go", "run", "./scripts/synth", "-q", "-type", t, "-vocab", vocab, "-o", path))
		}
		models[t] = path
	}

	// The prompt: the first plen-1 tokens of promptText after BOS.
	ids, text := prompt(vocab, *plen)
	idsJSON, _ := json.Marshal(ids)
	rs := &runSetup{root: root, native: native, wasip1: wasip1, wt: wt, npmDir: npmDir, idsJSON: string(idsJSON), text: text, timeout: *timeout, browserClock: *bclock}

	if need("llamacpp") {
		step("check that llama.cpp loads the generated files")
		for _, t := range sortedKeys(models) {
			r := rs.runOne("llamacpp-1", t, models[t], 2)
			if r.Err != "" {
				fmt.Fprintf(os.Stderr, "bench: llama.cpp cannot run %s: %s\n", models[t], r.Err)
				os.Exit(1)
			}
		}
	}

	var results []result
	for rep := 0; rep < *reps; rep++ {
		for _, t := range sortedKeys(models) {
			for _, rn := range runners {
				step(fmt.Sprintf("%s on %s (run %d)", rn, t, rep+1))
				r := rs.runOne(rn, t, models[t], *gen)
				fmt.Printf("   %s: prefill %.1f tok/s, decode %.2f tok/s, TTFT %.0f ms, peak %.0f MB, load %.2f→%.2f %s%s\n",
					buildOf(r), r.PrefillTokS, r.DecodeTokS, r.TTFTMs, r.PeakMB, r.Load[0], r.Load[1], r.Err, r.Note)
				if r.Split != nil {
					fmt.Printf("   split, prefill: %s\n   split, decode: %s\n", r.Split.Prefill, r.Split.Decode)
				}
				results = append(results, r)
			}
		}
	}
	report := header(time.Since(start))
	if len(runners) > 0 {
		report += table(medians(results), runners, sortedKeys(models), *gen, len(ids), *reps, wt)
	}
	report += ktable
	fmt.Println()
	fmt.Print(report)
	if *out != "" {
		// A relative FILE is the repository's (bench/RESULTS.md wherever
		// the bench runs from), an absolute one is itself.
		path := *out
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, path)
		}
		check(os.MkdirAll(filepath.Dir(path), 0o755))
		check(os.WriteFile(path, []byte(report), 0o644))
		fmt.Println("wrote", path)
	}
}

var statsRE = regexp.MustCompile(`prefill (\d+) tokens in ([\d.]+) ms \(([\d.]+) tok/s\); generated (\d+) tokens in ([\d.]+) ms \(([\d.]+) tok/s\)`)

// wasmtimeRun is how wasip1-wasmtime runs: scripts/wasmtime's runner, its
// options, and the directory of its compiled modules (WASMTIME_RUN_CACHE:
// Cranelift compiles the CLI once, not once per run).
type wasmtimeRun struct {
	bin, compiled string
	opts          []string
}

// runSetup is what every run of a bench shares: the repository, the
// builds, the peers' npm directory, the prompt (its ids as JSON, and its
// text), the limit of one run, and -browser-clock.
type runSetup struct {
	root, native, wasip1 string
	wt                   wasmtimeRun
	npmDir               string
	idsJSON, text        string
	timeout              time.Duration
	browserClock         string
}

// runOne runs one runner on one model, generating gen tokens.
func (s *runSetup) runOne(runner, typ, model string, gen int) result {
	r := result{Runner: runner, Type: typ}
	r.Load[0] = loadavg()
	r = s.runCmd(r, model, gen)
	r.Load[1] = loadavg()
	return r
}

func (s *runSetup) runCmd(r result, model string, gen int) result {
	root, native, wasip1, wt, npmDir, idsJSON, text, timeout := s.root, s.native, s.wasip1, s.wt, s.npmDir, s.idsJSON, s.text, s.timeout
	runner := r.Runner
	name, threads, _ := strings.Cut(runner, "-")
	r.Threads, _ = strconv.Atoi(threads)
	var cmd *exec.Cmd
	switch name {
	case "native":
		r.Build = "native " + runtime.GOARCH
	case "wasip1":
		r.Build, r.Threads = "SIMD128", 1
	case "wllama":
		r.Build = "wllama" // page.html says which of its builds
	}
	if name == "browser" || name == "wllama" || runner == "wasip1-wasmtime" {
		// build/serve refuses links out of a mounted directory: mount the
		// directory the model file really is in; wasmtime follows no
		// absolute symbolic link, even inside its --dir.
		if p, err := filepath.EvalSymlinks(model); err == nil {
			model = p
		}
	}
	switch name {
	case "native":
		cmd = exec.Command(native, model, "-p", text, "-n", strconv.Itoa(gen), "-t", "0", "-j", threads, "-c", "2048")
	case "wasip1":
		args := []string{model, "-p", text, "-n", strconv.Itoa(gen), "-t", "0", "-c", "2048"}
		switch threads { // the engine
		case "node":
			cmd = exec.Command("node", append([]string{"--no-warnings", "--single-threaded-gc", filepath.Join(root, "scripts/bench/wasi.mjs"), wasip1}, args...)...)
		case "wasmtime":
			// The host file system at /, as wasi.mjs gives it under Node.
			wargs := append(append([]string{"run", "--dir", "/::/"}, wt.opts...), wasip1)
			cmd = exec.Command(wt.bin, append(wargs, args...)...)
			cmd.Env = append(os.Environ(), "WASMTIME_RUN_CACHE="+wt.compiled)
			if len(wt.opts) > 0 {
				r.Note = strings.Join(wt.opts, " ")
			}
		default:
			r.Err = "unknown runner"
			return r
		}
	case "browser":
		// browser-picolm: one Worker; browser-picolm-N: the model split over
		// N; a suffix @relaxed or @simd128 forces that engine build.
		threads, build, _ := strings.Cut(threads, "@")
		workers := "1"
		if _, n, ok := strings.Cut(threads, "-"); ok {
			workers = n
		}
		r.Threads, _ = strconv.Atoi(workers) // page.html reports the build and the Workers it got
		cmd = exec.Command("node", filepath.Join(root, "scripts/bench/browser.mjs"), "picolm", filepath.Dir(model), filepath.Base(model), text, strconv.Itoa(gen), workers, build)
	case "llamacpp":
		r.Build = "llama.cpp CPU"
		cmd = exec.Command("node", filepath.Join(root, "scripts/bench/llamacpp.mjs"), model, threads, idsJSON, strconv.Itoa(gen))
	case "wllama":
		cmd = exec.Command("node", filepath.Join(root, "scripts/bench/browser.mjs"), "wllama", filepath.Dir(model), filepath.Base(model), text, strconv.Itoa(gen), threads)
	default:
		r.Err = "unknown runner"
		return r
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, "BENCH_NPM="+npmDir)
	if s.browserClock == "cpu" && strings.HasPrefix(r.Runner, "browser-picolm") {
		cmd.Env = append(cmd.Env, "BENCH_CLOCK=cpu")
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	check(cmd.Start())
	timer := time.AfterFunc(timeout, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	timer.Stop()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.PeakMB = float64(ru.Maxrss) / 1024 // of the largest descendant (Chromium's: the renderer)
	}
	if err != nil && runner != "wasip1-node" { // Node's WASI may crash at exit after a complete run
		r.Err = fmt.Sprintf("%v: %s", err, errLine(stderr.String()))
		return r
	}
	switch name {
	case "native", "wasip1":
		m := statsRE.FindStringSubmatch(stderr.String())
		if m == nil {
			r.Err = "no stats line: " + errLine(stderr.String())
			return r
		}
		r.TTFTMs, _ = strconv.ParseFloat(m[2], 64)
		r.PrefillTokS, _ = strconv.ParseFloat(m[3], 64)
		r.DecodeTokS, _ = strconv.ParseFloat(m[6], 64)
	default:
		if err := json.Unmarshal([]byte(lastLine(stdout.String())), &r); err != nil {
			r.Err = fmt.Sprintf("bad output %q: %s", lastLine(stdout.String()), errLine(stderr.String()))
		}
	}
	return r
}

// vocabFile is the LLaMA vocabulary of the shared test data, which the
// models (scripts/synth's default) and the prompt's tokens come from.
func vocabFile(root string) string {
	dir := filepath.Join(filepath.Dir(root), "shared", "testdata")
	if _, err := os.Stat(dir); err != nil {
		check(fmt.Errorf("the shared test data is missing: want it in %s (../shared/testdata beside the repository; see DEVELOPERS.md)", dir))
	}
	return filepath.Join(dir, "ggml-vocab-llama-spm.gguf")
}

// prompt returns BOS and the first n-1 tokens of promptText, and their text.
func prompt(vocab string, n int) ([]int, string) {
	f, err := gguf.Open(vocab)
	check(err)
	defer f.Close()
	tk, err := tokenizer.FromGGUF(f)
	check(err)
	ids := tk.Encode(promptText, true)
	if len(ids) < n {
		check(fmt.Errorf("the prompt text has only %d tokens", len(ids)))
	}
	ids = ids[:n]
	return ids, strings.TrimPrefix(tk.Decode(ids[1:]), " ")
}

// medians gives each runner and model the median of its successful runs'
// figures (each figure's own median), or its last failure if none succeeded.
func medians(rs []result) map[[2]string]result {
	groups := map[[2]string][]result{}
	for _, r := range rs {
		k := [2]string{r.Runner, r.Type}
		groups[k] = append(groups[k], r)
	}
	m := map[[2]string]result{}
	for k, g := range groups {
		ok := slices.DeleteFunc(slices.Clone(g), func(r result) bool { return r.Err != "" })
		if len(ok) == 0 {
			m[k] = g[len(g)-1]
			continue
		}
		med := func(f func(result) float64) float64 {
			v := make([]float64, len(ok))
			for i, r := range ok {
				v[i] = f(r)
			}
			slices.Sort(v)
			if n := len(v); n%2 == 0 {
				return (v[n/2-1] + v[n/2]) / 2
			}
			return v[len(v)/2]
		}
		r := ok[0]
		r.PrefillTokS = med(func(r result) float64 { return r.PrefillTokS })
		r.DecodeTokS = med(func(r result) float64 { return r.DecodeTokS })
		r.TTFTMs = med(func(r result) float64 { return r.TTFTMs })
		if p, d := r.cpuRates(); p > 0 || d > 0 {
			p = med(func(r result) float64 { p, _ := r.cpuRates(); return p })
			d = med(func(r result) float64 { _, d := r.cpuRates(); return d })
			r.Note = strings.TrimSpace(r.Note + fmt.Sprintf(" per CPU second (all Chromium processes): prefill %.1f, decode %.2f tok", p, d))
		}
		r.Runs = len(ok)
		for _, o := range ok {
			r.PeakMB = max(r.PeakMB, o.PeakMB)
			r.Load[0], r.Load[1] = min(r.Load[0], o.Load[0]), max(r.Load[1], o.Load[1])
			if r.Note == "" {
				r.Note = o.Note
			}
		}
		if len(ok) < len(g) {
			r.Note = strings.TrimSpace(r.Note + fmt.Sprintf(" %d of %d runs failed: %s", len(g)-len(ok), len(g), g[len(g)-1].Err))
		}
		m[k] = r
	}
	return m
}

// buildOf says what ran a row: the build and its threads (Workers in the
// browser).
func buildOf(r result) string {
	unit := "threads"
	if strings.HasPrefix(r.Runner, "browser") {
		unit = "Workers"
	}
	if r.Threads == 1 {
		unit = strings.TrimSuffix(unit, "s")
	}
	b := r.Build
	if b == "" {
		b = "?"
	}
	return fmt.Sprintf("%s, %d %s", b, r.Threads, unit)
}

// ours maps each of our runners to the peers it is compared with.
var ours = map[string][]string{
	"native-1":         {"llamacpp-1"},
	"native-2":         {"llamacpp-2"},
	"wasip1-node":      {"wllama-1", "wllama-2"},
	"wasip1-wasmtime":  {"wasip1-node", "wllama-1", "wllama-2"},
	"browser-picolm":   {"wllama-1", "wllama-2"},
	"browser-picolm-2": {"wllama-1", "wllama-2"},
}

// header is RESULTS.md's title and the machine: date, CPU model and the
// features the kernels choose by, core count, kernel, Go and Node versions.
func header(took time.Duration) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("# Benchmark results\n\n%s on %s (%s, %d CPUs), %s; %s, Node %s. The bench took %s.\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), cpuModel(), host, runtime.NumCPU(), kernel(), goVersion(), nodeVersion(), took.Round(time.Second))
}

func table(res map[[2]string]result, runners, types []string, gen, plen, reps int, wt wasmtimeRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nTinyLlama-1.1B-shaped random-weight models (scripts/synth), a %d-token prompt, %d greedy tokens; peers: %s, %s (in headless Chromium %s).\n",
		plen, gen, nodeLlamaCpp, wllama, chromiumVersion())
	if wt.bin != "" {
		opts := "its default options"
		if len(wt.opts) > 0 {
			opts = "options " + strings.Join(wt.opts, " ")
		}
		fmt.Fprintf(&b, "wasip1-wasmtime: wasmtime %s (scripts/wasmtime, wasmtime-go), %s; wasip1-node: Node %s's WASI, the same picolm.wasm.\n", wasmtimeVersion(), opts, nodeVersion())
	}
	if reps > 1 {
		fmt.Fprintf(&b, "Each figure is the median of %d runs (alternating runners).\n", reps)
	}
	fmt.Fprintf(&b, "The machine is shared: the load average before→after each run is listed.\n\n")
	fmt.Fprintf(&b, "| runner | model | build, threads | prefill tok/s | decode tok/s | TTFT ms | peak MB | load | note |\n|---|---|---|--:|--:|--:|--:|---|---|\n")
	for _, t := range types {
		for _, rn := range runners {
			r, ok := res[[2]string{rn, t}]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %.1f | %.2f | %.0f | %.0f | %.1f→%.1f | %s |\n", rn, t, buildOf(r), r.PrefillTokS, r.DecodeTokS, r.TTFTMs, r.PeakMB, r.Load[0], r.Load[1], strings.TrimSpace(r.Err+" "+r.Note))
		}
	}
	fmt.Fprintf(&b, "\nRatios (ours / peer; decode, prefill):\n\n| ours | peer | model | decode | prefill |\n|---|---|---|--:|--:|\n")
	for _, t := range types {
		for _, o := range sortedKeys(ours) {
			r, ok := res[[2]string{o, t}]
			if !ok || r.Err != "" {
				continue
			}
			for _, p := range ours[o] {
				q, ok := res[[2]string{p, t}]
				if !ok || q.Err != "" || q.DecodeTokS == 0 || q.PrefillTokS == 0 {
					continue
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %.2f× | %.2f× |\n", o, p, t, r.DecodeTokS/q.DecodeTokS, r.PrefillTokS/q.PrefillTokS)
			}
		}
	}
	// The browser engine over several Workers against one, and where the
	// split runs' time went (the counters of their first run).
	first := true
	for _, t := range types {
		one, ok := res[[2]string{"browser-picolm", t}]
		for _, rn := range runners {
			r, ok2 := res[[2]string{rn, t}]
			if !strings.HasPrefix(rn, "browser-picolm-") || !ok2 || r.Err != "" || r.Split == nil {
				continue
			}
			if first {
				fmt.Fprintf(&b, "\nThe model split over Workers (same run as one Worker's; wasm memory of all Workers; the split counters):\n\n| runner | model | decode / 1 Worker | prefill / 1 Worker | wasm MB | prefill | decode |\n|---|---|--:|--:|--:|---|---|\n")
				first = false
			}
			dr, pr := "–", "–"
			if ok && one.Err == "" && one.DecodeTokS > 0 && one.PrefillTokS > 0 {
				dr, pr = fmt.Sprintf("%.2f×", r.DecodeTokS/one.DecodeTokS), fmt.Sprintf("%.2f×", r.PrefillTokS/one.PrefillTokS)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %.0f | %s | %s |\n", rn, t, dr, pr, r.MemMB, r.Split.Prefill, r.Split.Decode)
		}
	}
	fmt.Fprintf(&b, "\nPeak MB is the peak resident memory of the runner's process (for Chromium, of its largest process).\n")
	return b.String()
}

func step(s string) { fmt.Printf("== %s\n", s) }

func run(dir string, env []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stderr, os.Stderr
	if env != nil {
		cmd.Env = env
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	for err == nil {
		if _, e := os.Stat(filepath.Join(dir, "go.mod")); e == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", errors.New("run inside the repository")
		}
		dir = filepath.Dir(dir)
	}
	return "", err
}

func loadavg() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	f, _ := strconv.ParseFloat(strings.Fields(string(b) + " 0")[0], 64)
	return f
}

// cpuModel is the CPU's model name and the features the kernels choose by
// (the CPU kind changes between machines, and so do the speeds).
func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	model, flags := runtime.GOARCH, ""
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name":
			model = strings.TrimSpace(v)
		case "flags":
			flags = " " + v + " "
		}
	}
	var have []string
	for _, f := range []string{"avx2", "avx512f", "avx512_vnni", "amx_int8"} {
		if strings.Contains(flags, " "+f+" ") {
			have = append(have, f)
		}
	}
	if len(have) == 0 {
		return model
	}
	return model + " (" + strings.Join(have, ", ") + ")"
}

func output(name string, args ...string) string {
	b, _ := exec.Command(name, args...).Output()
	return strings.TrimSpace(string(b))
}

func kernel() string { return "Linux " + output("uname", "-r") }

// wasmtimeVersion is the wasmtime-go version scripts/wasmtime's go.mod
// requires (its libwasmtime is that wasmtime release).
func wasmtimeVersion() string {
	root, err := repoRoot()
	if err != nil {
		return "?"
	}
	b, _ := os.ReadFile(filepath.Join(root, "scripts", "wasmtime", "go.mod"))
	if m := regexp.MustCompile(`wasmtime-go/v\d+ v(\S+)`).FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return "?"
}
func goVersion() string   { return output("go", "version") }
func nodeVersion() string { return output("node", "--version") }
func chromiumVersion() string {
	return strings.TrimPrefix(output("/usr/bin/chromium", "--version"), "Chromium ")
}

// errLine picks the line of a failed runner's stderr that says what went
// wrong: the last one naming an error, else the last that is neither a stack
// frame nor Node's closing version line ("Node.js v20.20.2").
func errLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	keep := lines[:0:0]
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "at ") || strings.HasPrefix(t, "Node.js v") || t == "^" {
			continue
		}
		keep = append(keep, t)
	}
	for i := len(keep) - 1; i >= 0; i-- {
		if strings.Contains(keep[i], "Error") || strings.Contains(keep[i], "error") {
			return keep[i]
		}
	}
	if len(keep) == 0 {
		return lastLine(s)
	}
	return keep[len(keep)-1]
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// chromium is the browser the browser runners launch (browser.mjs reads the
// same variable).
func chromium() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// kernelsPage runs scripts/bench/kernels (GOOS=js) in a page:
// runKernels(args) resolves with its stdout, stderr and exit code.
const kernelsPage = `<!doctype html>
<meta charset="utf-8">
<script src="wasm_exec.js"></script>
<script>
window.runKernels = async (args) => {
  const dec = new TextDecoder();
  const text = ["", "", ""];
  globalThis.fs.writeSync = (fd, buf) => { text[fd] += dec.decode(buf); return buf.length; };
  const go = new Go();
  let code = 0;
  go.exit = (c) => { code = c; };
  go.argv = ["kernels", ...args];
  const { instance } = await WebAssembly.instantiateStreaming(fetch("kernels.wasm"), go.importObject);
  await go.run(instance);
  return { out: text[1], err: text[2], code };
};
</script>
`

// kernelRow is one line of scripts/bench/kernels' output.
type kernelRow struct {
	Type      string  `json:"type"`
	BPW       float64 `json:"bpw"`
	MatVecGBs float64 `json:"matvecGBs"`
	MatMulGBs float64 `json:"matmulGBs"`
}

// kernelTable builds scripts/bench/kernels natively and for GOOS=js (both
// GOEXPERIMENT=simd), runs each (the wasm one under Node through Go's
// go_js_wasm_exec) on the formats types (all when empty), and returns the
// table of both in markdown. A build that fails is a line saying so.
func kernelTable(root, cache string, env []string, types string) string {
	step("kernel table: build scripts/bench/kernels natively and for GOOS=js (GOEXPERIMENT=simd)")
	native := filepath.Join(cache, "kernels")
	wasm := filepath.Join(cache, "kernels.wasm")
	check(run(root, env, "go", "build", "-o", native, "./scripts/bench/kernels"))
	check(run(root, append(env, "GOOS=js", "GOARCH=wasm"), "go", "build", "-o", wasm, "./scripts/bench/kernels"))
	args := []string{}
	if types != "" {
		args = append(args, "-types", types)
	}
	measure := func(what string, name string, args ...string) (map[string]kernelRow, []string, [2]float64, string) {
		step("kernel table: " + what)
		load := [2]float64{loadavg(), 0}
		cmd := exec.Command(name, args...)
		cmd.Dir = root
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		load[1] = loadavg()
		rows := map[string]kernelRow{}
		var order []string
		for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
			var k kernelRow
			if json.Unmarshal([]byte(l), &k) == nil && k.Type != "" {
				rows[k.Type] = k
				order = append(order, k.Type)
				fmt.Printf("   %-8s %6.4g bpw  MatVec %6.3g GB/s  MatMul×16 %6.3g GB/s\n", k.Type, k.BPW, k.MatVecGBs, k.MatMulGBs)
			}
		}
		msg := ""
		if err != nil {
			msg = fmt.Sprintf("%s failed: %v: %s", what, err, errLine(stderr.String()))
			fmt.Println("  ", msg)
		}
		return rows, order, load, msg
	}
	nat, order, nload, nerr := measure("native", native, args...)
	goroot := output("go", "env", "GOROOT")
	jsExec := filepath.Join(goroot, "lib", "wasm", "go_js_wasm_exec")
	js, jorder, jload, jerr := measure("wasm under Node (GOOS=js)", jsExec, append([]string{wasm}, args...)...)
	for _, t := range jorder {
		if _, ok := nat[t]; !ok {
			order = append(order, t)
		}
	}

	// The relaxed-SIMD build (what Chromium's picolm.js runs) in a page of
	// headless Chromium (scripts/bench/kernels.mjs): wall-clock timings, a
	// page has no CPU clock.
	var br map[string]kernelRow
	var bload [2]float64
	berr := ""
	if err := func() error {
		dir := filepath.Join(cache, "kernels-browser")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		raw := filepath.Join(cache, "kernels-relaxed.raw.wasm")
		if err := run(root, append(env, "GOOS=js", "GOARCH=wasm"), "go", "build", "-tags", "relaxedsimd", "-o", raw, "./scripts/bench/kernels"); err != nil {
			return err
		}
		if err := run(root, env, "go", "run", "./scripts/relaxpatch", raw, filepath.Join(dir, "kernels.wasm")); err != nil {
			return err
		}
		serve := filepath.Join(cache, "serve")
		if err := run(root, env, "go", "build", "-o", serve, "./scripts/serve"); err != nil {
			return err
		}
		execJS, err := os.ReadFile(filepath.Join(goroot, "lib", "wasm", "wasm_exec.js"))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "wasm_exec.js"), execJS, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "kernels.html"), []byte(kernelsPage), 0o644); err != nil {
			return err
		}
		var msg string
		br, _, bload, msg = measure("wasm in Chromium (relaxed SIMD)", "node", append([]string{filepath.Join(root, "scripts", "bench", "kernels.mjs"), serve, dir}, args...)...)
		if msg != "" {
			return errors.New(msg)
		}
		return nil
	}(); err != nil {
		berr = fmt.Sprintf("Chromium: %v", err)
		fmt.Println("  ", berr)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Kernels\n\nWeight GB/s of quant's kernels per format (scripts/bench/kernels, GOEXPERIMENT=simd): one activation "+
		"(MatVec: decode) and a batch of 16 (MatMul: prefill; one call covers the 16, so 16× the figure is its rate per activation), on a 2048-column matrix of 4 MiB, "+
		"the median of the timed calls; in parentheses, the ratio to Q4_K in the same column. Native is %s; wasm is the GOOS=js build "+
		"(SIMD128) under Node %s; Chromium is the relaxed-SIMD build (the one picolm.js runs there) in a page of headless Chromium %s, timed by the wall clock. "+
		"Load %.1f→%.1f natively, %.1f→%.1f under Node, %.1f→%.1f in Chromium.\n\n", runtime.GOARCH, nodeVersion(), chromiumVersion(), nload[0], nload[1], jload[0], jload[1], bload[0], bload[1])
	for _, e := range []string{nerr, jerr, berr} {
		if e != "" {
			fmt.Fprintf(&b, "%s\n\n", e)
		}
	}
	fmt.Fprintf(&b, "| format | bits/weight | native ×1 | native ×16 | wasm ×1 | wasm ×16 | Chromium ×1 | Chromium ×16 |\n|---|--:|--:|--:|--:|--:|--:|--:|\n")
	cell := func(rows map[string]kernelRow, t string, f func(kernelRow) float64) string {
		k, ok := rows[t]
		if !ok {
			return "–"
		}
		if ref, ok := rows["Q4_K"]; ok && f(ref) > 0 {
			return fmt.Sprintf("%.3g (%.2f×)", f(k), f(k)/f(ref))
		}
		return fmt.Sprintf("%.3g", f(k))
	}
	vec := func(k kernelRow) float64 { return k.MatVecGBs }
	mm := func(k kernelRow) float64 { return k.MatMulGBs }
	for _, t := range order {
		bpw := nat[t].BPW
		if bpw == 0 {
			bpw = js[t].BPW
		}
		fmt.Fprintf(&b, "| %s | %.4g | %s | %s | %s | %s | %s | %s |\n", t, bpw, cell(nat, t, vec), cell(nat, t, mm), cell(js, t, vec), cell(js, t, mm), cell(br, t, vec), cell(br, t, mm))
	}
	return b.String()
}

package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/engine/chat"
	"github.com/picolm/picolm-wasm/engine/grammar"
	"github.com/picolm/picolm-wasm/engine/sample"
	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/wasm/internal/defaultmodel"
)

// options are the command line, in picoLM's flags.
type options struct {
	model     string
	prompt    string
	hasPrompt bool
	n         int
	temp      float64
	topP      float64
	topK      int
	minP      float64
	seed      uint64
	ctx       int
	threads   int
	json      bool
	grammar   string
	schema    string
	cache     string
	ids       bool
	chat      bool
	noCheck   bool
}

const usage = `usage: picolm [MODEL.gguf] [options]

Runs a Llama-architecture GGUF model. With no MODEL, the embedded stories260K runs.
A split model (NAME-00001-of-00003.gguf, ...) is given by its first shard.

  -p, --prompt TEXT   prompt (read from stdin when absent)
  -n N                tokens to generate (default 256)
  -t TEMP             temperature; 0 is greedy (default 0.8)
  -k TOP_P            nucleus sampling threshold (default 0.9)
  --top-k K           keep the K most likely tokens (default 0: off)
  --min-p P           drop tokens below P x the top probability (default 0: off)
  -s SEED             random seed (default 42)
  -c CTX              context length (default: the model's, capped to fit memory)
  -j THREADS          threads for matrix products (default: all cores; 1 under wasm)
  --json              constrain output to one complete JSON value
  --grammar FILE      constrain output to the GBNF grammar in FILE (llama.cpp's syntax)
  --json-schema FILE  constrain output to JSON valid under the JSON Schema in FILE
  --cache FILE        reuse / save the prompt's KV cache in FILE
  --ids               print generated token ids instead of text
  --chat              the prompt is a user turn, formatted with the model's chat template
                      (a plain User:/Assistant: transcript for a model without one)
  --model FILE        the model (same as the positional MODEL)
  --no-check          skip the load-time check for NaN and infinite weights
`

func parseArgs(args []string, stderr io.Writer) (options, error) {
	o := options{n: 256, temp: 0.8, topP: 0.9, seed: 42, threads: defaultThreads()}
	fs := flag.NewFlagSet("picolm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	fs.StringVar(&o.model, "model", "", "")
	fs.Func("p", "", func(s string) error { o.prompt, o.hasPrompt = s, true; return nil })
	fs.Func("prompt", "", func(s string) error { o.prompt, o.hasPrompt = s, true; return nil })
	fs.IntVar(&o.n, "n", o.n, "")
	fs.Float64Var(&o.temp, "t", o.temp, "")
	fs.Float64Var(&o.topP, "k", o.topP, "")
	fs.IntVar(&o.topK, "top-k", 0, "")
	fs.Float64Var(&o.minP, "min-p", 0, "")
	fs.Uint64Var(&o.seed, "s", o.seed, "")
	fs.IntVar(&o.ctx, "c", 0, "")
	fs.IntVar(&o.threads, "j", o.threads, "")
	fs.BoolVar(&o.json, "json", false, "")
	fs.StringVar(&o.grammar, "grammar", "", "")
	fs.StringVar(&o.schema, "json-schema", "", "")
	fs.StringVar(&o.cache, "cache", "", "")
	fs.BoolVar(&o.ids, "ids", false, "")
	fs.BoolVar(&o.chat, "chat", false, "")
	fs.BoolVar(&o.noCheck, "no-check", false, "")

	// A positional MODEL may come before or after the flags.
	var positional []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return o, err
		}
		args = fs.Args()
		if len(args) > 0 {
			positional = append(positional, args[0])
			args = args[1:]
		}
	}
	switch {
	case len(positional) > 1:
		return o, fmt.Errorf("more than one model given: %s", strings.Join(positional, ", "))
	case len(positional) == 1 && o.model != "":
		return o, fmt.Errorf("model given twice: %s and --model %s", positional[0], o.model)
	case len(positional) == 1:
		o.model = positional[0]
	}
	if n := btoi(o.json) + btoi(o.grammar != "") + btoi(o.schema != ""); n > 1 {
		return o, errors.New("--json, --grammar and --json-schema each constrain the output: give at most one")
	}
	o.threads = capThreads(clampThreads(o.threads), stderr)
	if o.n < 0 || o.ctx < 0 || o.threads < 0 || o.temp < 0 || o.topP < 0 || o.topP > 1 || o.minP < 0 || o.minP > 1 || o.topK < 0 {
		return o, errors.New("a numeric flag is out of range (see -h)")
	}
	return o, nil
}

// maxThreadsPerCPU bounds -j: past a few goroutines per core a matrix
// product only gains scheduling, and each goroutine costs memory (-j 10000000
// once took 13 GB before printing anything).
const maxThreadsPerCPU = 4

// capThreads limits a -j value to maxThreadsPerCPU × the CPU count, saying so
// on stderr when it lowers it.
func capThreads(n int, stderr io.Writer) int {
	limit := maxThreadsPerCPU * runtime.NumCPU()
	if n > limit {
		fmt.Fprintf(stderr, "picolm: -j %d is over %d threads per CPU (%d CPUs); using %d\n", n, maxThreadsPerCPU, runtime.NumCPU(), limit)
		return limit
	}
	return n
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "quantize" {
		return runQuantize(args[1:], stderr)
	}
	if len(args) > 0 && args[0] == "refit" {
		return runRefit(args[1:], stdout, stderr)
	}
	if len(args) > 0 && (args[0] == "split" || args[0] == "merge") {
		return runSplit(args[0] == "merge", args[1:], stderr)
	}
	o, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "picolm:", err)
		return 2
	}
	if err := generate(o, stdin, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "picolm:", err)
		return 1
	}
	return 0
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// loadGrammar compiles the --grammar or --json-schema file (nil without either).
func loadGrammar(o options) (*grammar.GBNF, error) {
	switch {
	case o.grammar != "":
		b, err := readSmallFile("--grammar", o.grammar)
		if err != nil {
			return nil, err
		}
		g, err := grammar.ParseGBNF(string(b))
		if err != nil {
			return nil, fmt.Errorf("--grammar %s: %w", o.grammar, err)
		}
		return g, nil
	case o.schema != "":
		b, err := readSmallFile("--json-schema", o.schema)
		if err != nil {
			return nil, err
		}
		g, err := grammar.FromJSONSchema(b)
		if err != nil {
			return nil, fmt.Errorf("--json-schema %s: %w", o.schema, err)
		}
		return g, nil
	}
	return nil, nil
}

func generate(o options, stdin io.Reader, stdout, stderr io.Writer) error {
	t0 := time.Now()
	// The grammar first: a bad one is refused before the model loads.
	gram, err := loadGrammar(o)
	if err != nil {
		return err
	}
	var f *gguf.File
	name := o.model
	if name == "" {
		name = defaultmodel.Name + " (embedded)"
		f, err = gguf.Parse(defaultmodel.Bytes())
	} else {
		f, err = gguf.OpenSet(o.model) // a split model's first shard opens them all
		err = wasiPathError(err)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	m, err := engine.LoadWith(f, engine.LoadOptions{SkipWeightCheck: o.noCheck})
	if errors.Is(err, engine.ErrWeights) {
		err = fmt.Errorf("%w (--no-check loads it anyway)", err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	c := &m.Config
	sess, err := m.NewSession(engine.SessionOptions{Context: o.ctx, Threads: o.threads})
	if err != nil {
		return err
	}
	defer sess.Close()
	fmt.Fprintf(stderr, "picolm: %s: %s, %d layers, dim %d, %d heads (%d kv), vocab %d, context %d [%s], loaded in %d ms\n",
		name, c.Arch, c.Layers, c.Dim, c.Heads, c.KVHeads, c.VocabSize, sess.Context(), c.FileTypeStr, time.Since(t0).Milliseconds())

	if !o.hasPrompt {
		p, err := readPrompt(stdin)
		if err != nil {
			return err
		}
		o.prompt = strings.TrimRight(p, "\n")
	}
	var prompt []int
	if o.chat {
		if m.Chat().Family() == "" {
			fmt.Fprintf(stderr, "picolm: %s has no chat template: --chat formats the prompt as a plain User:/Assistant: transcript\n", name)
		}
		if prompt, err = m.EncodeChat([]chat.Message{{Role: "user", Content: o.prompt}}); err != nil {
			return fmt.Errorf("--chat: %s: %w", name, err)
		}
	} else {
		prompt = m.Tokenizer.Encode(o.prompt, true)
	}
	if len(prompt) > sess.Context() {
		return fmt.Errorf("%w: the prompt is %d tokens, the context holds %d", engine.ErrContext, len(prompt), sess.Context())
	}

	if o.cache != "" {
		loadCache(sess, o.cache, stderr)
	}

	w := bufio.NewWriter(stdout)
	defer w.Flush()
	first := true
	emit := func(id int, text []byte) bool {
		if o.ids {
			if id >= 0 {
				if !first {
					w.WriteByte(' ')
				}
				w.WriteString(strconv.Itoa(id))
				first = false
			}
		} else {
			w.Write(text)
		}
		w.Flush()
		return true
	}
	params := sample.Params{Temperature: float32(o.temp), TopP: float32(o.topP), TopK: o.topK, MinP: float32(o.minP), Seed: o.seed}
	st, err := sess.Generate(prompt, engine.GenerateOptions{MaxTokens: o.n, Sampling: params, JSON: o.json, Grammar: gram}, emit)
	w.WriteByte('\n') // end the output with a newline, as llama.cpp does
	w.Flush()
	if err != nil {
		return err
	}
	if st.CachedTokens > 0 {
		fmt.Fprintf(stderr, "picolm: KV cache: skipped %d of %d prompt tokens\n", st.CachedTokens, st.PromptTokens)
	}
	if o.cache != "" && st.CachedTokens < len(prompt)-1 {
		saveCache(sess, o.cache, len(prompt), stderr)
	}
	fmt.Fprintf(stderr, "picolm: prefill %d tokens in %.1f ms (%.1f tok/s); generated %d tokens in %.1f ms (%.1f tok/s); stop: %s\n",
		st.PromptTokens-st.CachedTokens, ms(st.Prefill), rate(st.PromptTokens-st.CachedTokens, st.Prefill),
		st.Generated, ms(st.Decode), rate(st.Generated, st.Decode), st.Stop)
	if st.Stop == engine.StopContext {
		fmt.Fprintf(stderr, "picolm: the context of %d tokens is full; generation ended early (raise -c)\n", sess.Context())
	}
	return nil
}

// loadCache restores a KV cache file when it fits this model (Generate then
// reuses the positions the prompt shares with it); any problem is reported
// and the run continues without it.
func loadCache(sess *engine.Session, path string, stderr io.Writer) {
	b, err := readCacheFile(path, sess.CacheFileSize(sess.Context()))
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err == nil {
		if _, err = sess.ReadCache(b); err != nil {
			err = fmt.Errorf("%s: %w", path, err)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "picolm: %v; continuing without it\n", wasiPathError(err))
		sess.Rewind(0)
	}
}

func saveCache(sess *engine.Session, path string, n int, stderr io.Writer) {
	var buf bytes.Buffer
	err := sess.WriteCache(&buf, n)
	if err == nil {
		err = wasiPathError(writeCacheFile(path, buf.Bytes()))
	}
	if err != nil {
		fmt.Fprintf(stderr, "picolm: saving the KV cache: %v\n", err)
		return
	}
	fmt.Fprintf(stderr, "picolm: KV cache: saved %d prompt tokens to %s\n", n, path)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

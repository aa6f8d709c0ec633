//go:build !wasm

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// The wasip1 CLI under wasmtime: scripts/wasmtime's runner (wasmtime-go and
// its prebuilt libwasmtime, through cgo; a module of its own, so nothing
// else here needs cgo) is built once per test process into the user's cache
// directory, with its compiled modules beside it (WASMTIME_RUN_CACHE).

// wasmtimeDir is where the runner and its compiled modules are kept.
func wasmtimeDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "picolm-wasmtime"), nil
}

// wasmtimeRunner builds the runner (the go command relinks it only when it
// changed).
var wasmtimeRunner = sync.OnceValues(func() (string, error) {
	src, err := filepath.Abs(filepath.Join("..", "..", "scripts", "wasmtime"))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(src, "go.mod")); err != nil {
		return "", fmt.Errorf("the wasmtime runner's module: %w", err)
	}
	dir, err := wasmtimeDir()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "wasmtime-run")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = src
	// Native, with cgo (gcc links libwasmtime.a from the wasmtime-go module).
	cmd.Env = append(os.Environ(), "GOOS=", "GOARCH=", "GOEXPERIMENT=", "CGO_ENABLED=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building scripts/wasmtime (cgo: needs gcc): %v\n%s", err, b)
	}
	return out, nil
})

// buildWasmtime builds the CLI for wasip1 (with GOEXPERIMENT=simd when simd
// is set) and the runner, and returns the CLI under wasmtime with
// wasiCLI's mounts.
func buildWasmtime(t *testing.T, simd bool) *wasiCLI {
	t.Helper()
	wasm := buildWASM(t, t.TempDir(), simd)
	name := "wasmtime, portable kernels"
	if simd {
		name = "wasmtime, SIMD128"
	}
	return underWasmtime(t, wasm, name)
}

func underWasmtime(t *testing.T, wasm, name string) *wasiCLI {
	t.Helper()
	bin, err := wasmtimeRunner()
	if err != nil {
		t.Fatal(err)
	}
	return &wasiCLI{wasmtime: bin, wasm: wasm, scratch: t.TempDir(), name: name}
}

// buildWasmtimeRelaxed builds the CLI with quant's relaxed-SIMD kernels
// (GOEXPERIMENT=simd, -tags relaxedsimd, patched by scripts/relaxpatch as
// the browser's worker-relaxed.wasm is) and returns it under wasmtime, whose
// relaxed SIMD is on by default.
func buildWasmtimeRelaxed(t *testing.T) *wasiCLI {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the CLI for wasip1")
	}
	dir := t.TempDir()
	raw, wasm := filepath.Join(dir, "raw.wasm"), filepath.Join(dir, "picolm.wasm")
	cmd := exec.Command("go", "build", "-tags", "relaxedsimd", "-o", raw, ".")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOEXPERIMENT=simd")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=wasip1 GOEXPERIMENT=simd go build -tags relaxedsimd: %v\n%s", err, b)
	}
	patch := exec.Command("go", "run", "./scripts/relaxpatch", raw, wasm)
	patch.Dir = filepath.Join("..", "..")
	patch.Env = append(os.Environ(), "GOOS=", "GOARCH=", "GOEXPERIMENT=")
	if b, err := patch.CombinedOutput(); err != nil {
		t.Fatalf("scripts/relaxpatch: %v\n%s", err, b)
	}
	return underWasmtime(t, wasm, "wasmtime, relaxed SIMD")
}

// runWasmtime runs argv under the runner: the test data dir at /testdata,
// the scratch directory at /work.
func (w *wasiCLI) runWasmtime(t *testing.T, dir string, argv []string, stdin string) (stdout, stderr string, code int) {
	t.Helper()
	args := append([]string{"run", "--dir", dir + "::/testdata", "--dir", w.scratch + "::/work", "--argv0", argv[0], w.wasm}, argv[1:]...)
	return runWasmtimeRunner(t, w.wasmtime, "", args, stdin)
}

// runWasmtimeRunner runs the runner with args in cwd and returns what the
// program wrote and its exit status; a run the runner itself fails (the
// module traps or does not load) fails t.
func runWasmtimeRunner(t *testing.T, bin, cwd string, args []string, stdin string) (stdout, stderr string, code int) {
	t.Helper()
	dir, err := wasmtimeDir()
	if err != nil {
		t.Fatal(err)
	}
	// A run that hangs is killed: no test waits on it forever.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), "WASMTIME_RUN_CACHE="+filepath.Join(dir, "compiled"))
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("wasmtime-run %q: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("wasmtime-run %q: killed after 5 minutes", args)
	}
	if strings.Contains(errb.String(), "wasmtime-run:") {
		t.Fatalf("wasmtime-run %q: exit %d: %s", args, code, errb.String())
	}
	return out.String(), errb.String(), code
}

// TestWasmtimeMatchesNative runs the reference cases (ids and text) under
// wasmtime, built without and with GOEXPERIMENT=simd and with the
// relaxed-SIMD kernels, and checks each prints exactly what the native build
// prints. The cases are dealt out over the three builds in turn (case i to
// build i mod 3: each build meets llama-2-tiny-random or stories260K, the F32
// model and three or four quant formats), so CI stays in time; every case
// runs once under wazero (TestWASIMatchesNative), and the SIMD builds'
// engines are held to llama.cpp on each format's first case under Node
// (engine's TestFormatsMatchLlamaCpp) and on stories260K's reference cases
// in Chromium (web/test/browser.test.mjs).
func TestWasmtimeMatchesNative(t *testing.T) {
	cases := loadRefCases(t)
	native := map[string]string{}
	for b, build := range []func(*testing.T) *wasiCLI{
		func(t *testing.T) *wasiCLI { return buildWasmtime(t, false) },
		func(t *testing.T) *wasiCLI { return buildWasmtime(t, true) },
		buildWasmtimeRelaxed,
	} {
		w := build(t)
		n := 0
		for i, c := range cases {
			if ok, _ := supported(t, c.File); !ok || i%3 != b {
				continue
			}
			for _, args := range [][]string{c.args(), c.args()[:len(c.args())-1]} {
				key := strings.Join(args, "\x00")
				want, ok := native[key]
				if !ok {
					want, _ = runCLI(t, args)
					native[key] = want
				}
				got, stderr, code := w.run(t, args, "")
				if code != 0 {
					t.Fatalf("%s: %s: exit %d: %s", w.name, c.name(), code, stderr)
				}
				if got != want {
					t.Errorf("%s: %s %v: printed\n %q\nnative printed\n %q", w.name, c.name(), args[1:], got, want)
				}
			}
			n++
		}
		t.Logf("%s: %d cases, output identical to native", w.name, n)
	}
}

// TestWasmtimeStdinCacheExit: under wasmtime (SIMD128 build) the prompt on
// stdin, a --cache file in a preopened directory (saved, reused, refused
// when damaged), and the exit status and message of bad input, as natively.
func TestWasmtimeStdinCacheExit(t *testing.T) {
	w := buildWasmtime(t, true)
	got, stderr, code := w.run(t, []string{"-n", "20", "-t", "0"}, "Once upon a time\n")
	native, _ := runCLIStdin(t, []string{"-n", "20", "-t", "0"}, "Once upon a time\n")
	if code != 0 || got != native || !strings.Contains(stderr, "stories260K.gguf (embedded)") {
		t.Errorf("stdin prompt: exit %d, %q (native %q), stderr %s", code, got, native, stderr)
	}

	model := shareddata.Path(t, "stories260K.gguf")
	short, longer := "Once upon a time there was a dog", "Once upon a time there was a dog named Max"
	base := []string{model, "-n", "24", "-t", "0", "--cache", "/work/prompt.kv"}
	if _, stderr, code := w.run(t, append(base, "-p", short), ""); code != 0 || !strings.Contains(stderr, "saved") {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	if fi, err := os.Stat(filepath.Join(w.scratch, "prompt.kv")); err != nil || fi.Size() == 0 {
		t.Fatalf("no cache file in the preopened directory: %v", err)
	}
	want, _ := runCLI(t, []string{model, "-n", "24", "-t", "0", "-p", longer})
	got, stderr, code = w.run(t, append(base, "-p", longer), "")
	if code != 0 || got != want || !strings.Contains(stderr, "skipped") {
		t.Errorf("second run: exit %d, %q (want %q): %s", code, got, want, stderr)
	}
	b, err := os.ReadFile(filepath.Join(w.scratch, "prompt.kv"))
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	os.WriteFile(filepath.Join(w.scratch, "prompt.kv"), b, 0o644)
	got, stderr, code = w.run(t, append(base, "-p", longer), "")
	if code != 0 || got != want || !strings.Contains(stderr, "checksum mismatch") || !strings.Contains(stderr, "continuing without it") {
		t.Errorf("damaged cache: exit %d, %q: %s", code, got, stderr)
	}

	for _, c := range []exitCase{
		{[]string{"picolm", "--nope"}, 2, "not defined"},
		{[]string{"picolm", "-n", "-3"}, 2, "out of range"},
		{[]string{"picolm", shareddata.Path(t, "no-such-file.gguf"), "-p", "x"}, 1, "no such file"},
		{[]string{"picolm", shareddata.Path(t, "tinyllamas-stories-260k-f32.gguf"), "-p", "x"}, 1, "GGUF v1"},
		{[]string{"picolm", "-c", "3", "-p", "Once upon a time"}, 1, "context"},
	} {
		var nout, nerr bytes.Buffer
		ncode := run(c.args[1:], strings.NewReader(""), &nout, &nerr)
		_, stderr, code := w.run(t, c.args[1:], "")
		if code != c.code || ncode != c.code || !strings.Contains(strings.ToLower(stderr), strings.ToLower(c.msg)) { // WASI's errno texts are capitalised
			t.Errorf("%q: exit %d (native %d, want %d), stderr %q (want %q)", c.args[1:], code, ncode, c.code, stderr, c.msg)
		}
	}
	// A model under no preopened directory.
	_, stderr, code = w.run(t, []string{"/elsewhere/model.gguf", "-p", "x"}, "")
	if code != 1 || !strings.Contains(stderr, "/elsewhere/model.gguf") || !strings.Contains(stderr, "preopened") {
		t.Errorf("model outside the preopens: exit %d: %s", code, stderr)
	}
}

// readmeWasmtime returns the commands of README.md's "Under wasmtime"
// block: the build line and each `wasmtime run` line (its words after
// "wasmtime", and the stdin an `echo "…" |` before it gives).
func readmeWasmtime(t *testing.T) (build string, runs []readmeRun) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "### Under wasmtime (WASI)")
	_, block, ok2 := strings.Cut(sec, "```sh\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md has no sh block under \"### Under wasmtime (WASI)\"")
	}
	for _, line := range strings.Split(block, "\n") {
		words := shellWords(t, line)
		switch {
		case len(words) == 0 || words[0] == "export":
		case slices.Contains(words, "build"):
			build = strings.Join(words, " ")
		default:
			var r readmeRun
			if len(words) > 2 && words[0] == "echo" && words[2] == "|" {
				r.stdin, words = words[1]+"\n", words[3:]
			}
			if len(words) < 3 || words[0] != "wasmtime" || words[1] != "run" {
				t.Fatalf("README.md: a line the test does not know: %q", line)
			}
			r.line, r.args = strings.TrimSpace(line), words[1:]
			runs = append(runs, r)
		}
	}
	return build, runs
}

type readmeRun struct {
	line  string
	args  []string // after "wasmtime"
	stdin string
}

// program returns the program's arguments: those after picolm.wasm.
func (r readmeRun) program(t *testing.T) []string {
	i := slices.Index(r.args, "picolm.wasm")
	if i < 0 {
		t.Fatalf("%s: no picolm.wasm", r.line)
	}
	return r.args[i+1:]
}

// shellWords splits a line as sh would for the README's commands: words,
// "double" and 'single' quotes, a # comment, | as a word.
func shellWords(t *testing.T, line string) []string {
	var words []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(c)
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words, in = append(words, w.String()), false
				w.Reset()
			}
		case c == '#' && !in:
			return words
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		t.Fatalf("README.md: unterminated quote in %q", line)
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// TestWasmtimeREADME runs README.md's `wasmtime run` lines through the
// runner with the same arguments, in a directory holding picolm.wasm (built
// as the README's build line builds it) and model.gguf (stories260K): each
// prints what the native CLI prints for the same program arguments. Then
// the --dir semantics: the model outside the preopened directory, and the
// `--dir .` Go's wasip1 port cannot use, each fail with a message saying so.
func TestWasmtimeREADME(t *testing.T) {
	build, runs := readmeWasmtime(t)
	if build != "GOOS=wasip1 GOARCH=wasm go build -o picolm.wasm ./wasm/cli" {
		t.Fatalf("README.md's build line is %q; the test builds GOOS=wasip1 GOARCH=wasm go build -o picolm.wasm ./wasm/cli", build)
	}
	if len(runs) < 2 {
		t.Fatalf("README.md has %d wasmtime run lines, want one with a model and one without", len(runs))
	}
	bin, err := wasmtimeRunner()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	work, models := filepath.Join(root, "work"), filepath.Join(root, "models")
	os.Mkdir(work, 0o755)
	os.Mkdir(models, 0o755)
	buildWASM(t, work, false)
	model, err := os.ReadFile(shareddata.Path(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{work, models} {
		if err := os.WriteFile(filepath.Join(d, "model.gguf"), model, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	withDir := 0
	for _, r := range runs {
		prog := r.program(t)
		nargs := slices.Clone(prog)
		for i, a := range nargs {
			if a == "model.gguf" {
				nargs[i] = filepath.Join(work, a)
			}
		}
		want, _ := runCLIStdin(t, nargs, r.stdin)
		got, stderr, code := runWasmtimeRunner(t, bin, work, r.args, r.stdin)
		if code != 0 || got != want {
			t.Errorf("%s: exit %d, printed\n %q\nnative printed\n %q\n%s", r.line, code, got, want, stderr)
		}
		d := slices.Index(r.args, "--dir")
		if d < 0 || !slices.Contains(prog, "model.gguf") {
			continue
		}
		withDir++
		// The model one directory up, outside the preopened one.
		out := slices.Clone(r.args)
		out[slices.Index(out, "model.gguf")] = "../models/model.gguf"
		_, stderr, code = runWasmtimeRunner(t, bin, work, out, r.stdin)
		if code != 1 || !strings.Contains(stderr, "../models/model.gguf") || !strings.Contains(stderr, "preopened") {
			t.Errorf("%q: exit %d (want 1 and a message naming the path and the preopens): %s", out, code, stderr)
		}
		// --dir . : the guest name wasmtime gives is ".", under which Go's
		// wasip1 port resolves no path.
		dot := slices.Clone(r.args)
		dot[d+1] = "."
		_, stderr, code = runWasmtimeRunner(t, bin, work, dot, r.stdin)
		if code != 1 || !strings.Contains(stderr, "model.gguf") || !strings.Contains(stderr, "--dir .::/") {
			t.Errorf("%q: exit %d (want 1 and a message saying --dir .::/): %s", dot, code, stderr)
		}
	}
	if withDir == 0 {
		t.Error("README.md has no wasmtime run line with --dir and model.gguf")
	}
}

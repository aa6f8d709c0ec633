//go:build !wasm

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// wasiCLI is the CLI built with GOOS=wasip1, run under wazero (in this
// process) or, when wasmtime is set, under wasmtime (scripts/wasmtime's
// runner, wasmtime_test.go) the way `wasmtime run --dir` runs it: the test
// data mounted read-only at /testdata (read-write under wasmtime) and a
// scratch directory at /work.
type wasiCLI struct {
	rt      wazero.Runtime
	mod     wazero.CompiledModule
	scratch string

	wasmtime string // the runner's path; "" runs under wazero
	wasm     string // the module's path, for wasmtime
	name     string // the engine and build, for messages
}

// buildWASM builds the CLI for GOOS=wasip1 into dir, with GOEXPERIMENT=simd
// (the SIMD128 kernels) when simd is set, without it otherwise (whatever
// the environment's GOEXPERIMENT), and returns the module's path.
func buildWASM(t *testing.T, dir string, simd bool) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the CLI for wasip1")
	}
	out := filepath.Join(dir, "picolm.wasm")
	exp := "GOEXPERIMENT="
	if simd {
		exp = "GOEXPERIMENT=simd"
	}
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", exp)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=wasip1 %s go build: %v\n%s", exp, err, b)
	}
	return out
}

func buildWASI(t *testing.T) *wasiCLI {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the CLI for wasip1")
	}
	out := filepath.Join(t.TempDir(), "picolm.wasm")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=wasip1 go build: %v\n%s", err, b)
	}
	bin, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	mod, err := rt.CompileModule(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	return &wasiCLI{rt: rt, mod: mod, scratch: t.TempDir(), name: "wazero"}
}

// run runs the wasm CLI with args; paths under the test data are rewritten
// to the mount point.
func (w *wasiCLI) run(t *testing.T, args []string, stdin string) (stdout, stderr string, code int) {
	t.Helper()
	dir := shareddata.Dir(t)
	argv := []string{"picolm"}
	for _, a := range args {
		if rel, err := filepath.Rel(dir, a); err == nil && !strings.HasPrefix(rel, "..") {
			a = "/testdata/" + filepath.ToSlash(rel)
		}
		argv = append(argv, a)
	}
	if w.wasmtime != "" {
		return w.runWasmtime(t, dir, argv, stdin)
	}
	var out, errb bytes.Buffer
	cfg := wazero.NewModuleConfig().
		WithArgs(argv...).
		WithStdin(strings.NewReader(stdin)).
		WithStdout(&out).
		WithStderr(&errb).
		WithFSConfig(wazero.NewFSConfig().
			WithReadOnlyDirMount(dir, "/testdata").
			WithDirMount(w.scratch, "/work"))
	_, err := w.rt.InstantiateModule(context.Background(), w.mod, cfg)
	var exit *sys.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = int(exit.ExitCode())
	default:
		t.Fatalf("wasm run %q: %v", argv, err)
	}
	return out.String(), errb.String(), code
}

// TestWASIMatchesNative runs every reference case under wazero (the build
// of this test's GOEXPERIMENT: in CI the portable kernels) and checks the
// wasip1 build prints exactly what the native build prints: the ids
// (--ids) of every other case and the text of the rest, whose tokens
// decode to it (one run per case keeps CI in time; TestWasmtimeMatchesNative
// runs both outputs of a third of the cases in each of three builds).
func TestWASIMatchesNative(t *testing.T) {
	w := buildWASI(t)
	n := 0
	for _, c := range loadRefCases(t) {
		if ok, _ := supported(t, c.File); !ok {
			continue
		}
		args := c.args()
		if n%2 == 1 {
			args = args[:len(args)-1] // the text, without --ids
		}
		native, _ := runCLI(t, args)
		got, stderr, code := w.run(t, args, "")
		if code != 0 {
			t.Fatalf("%s: wasm exit %d: %s", c.name(), code, stderr)
		}
		if got != native {
			t.Errorf("%s %v: wasip1 printed\n %q\nnative printed\n %q", c.name(), args[1:], got, native)
		}
		n++
	}
	t.Logf("%d cases: wasip1 output identical to native", n)
}

// TestWASIEmbeddedModelAndStdin runs the embedded model with the prompt on
// stdin, as `echo … | wasmtime run picolm.wasm` does.
func TestWASIEmbeddedModelAndStdin(t *testing.T) {
	w := buildWASI(t)
	got, stderr, code := w.run(t, []string{"-n", "20", "-t", "0"}, "Once upon a time\n")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	native, _ := runCLIStdin(t, []string{"-n", "20", "-t", "0"}, "Once upon a time\n")
	if got != native || !strings.HasPrefix(got, ", there was a little girl") {
		t.Errorf("wasip1 %q, native %q", got, native)
	}
	if !strings.Contains(stderr, "stories260K.gguf (embedded)") {
		t.Errorf("stderr does not name the embedded model: %s", stderr)
	}
}

// Command wasmtime-run runs a WASI preview 1 program (the GOOS=wasip1 CLI)
// under wasmtime, embedded with github.com/bytecodealliance/wasmtime-go (its
// prebuilt libwasmtime, through cgo), the way `wasmtime run` runs it. The
// tests (wasm/cli) and the bench (scripts/bench, runner wasip1-wasmtime) use
// it, so no wasmtime binary need be installed:
//
//	go build -o wasmtime-run .      # in scripts/wasmtime
//	wasmtime-run run --dir .::/ picolm.wasm model.gguf -p "Once upon a time" -n 64
//
// Usage: wasmtime-run [run] [OPTIONS] WASM [ARGS...]. As with `wasmtime run`
// (since wasmtime 14), the options come before WASM and every argument after
// it is the program's, "--" included. The options, spelled as wasmtime's:
//
//	--dir HOST[::GUEST]   preopen the host directory HOST as GUEST (HOST as
//	                      written when GUEST is absent), read-write
//	--env NAME[=VALUE]    set NAME in the program's environment (without a
//	                      value: to this process's value, when it has one)
//	--argv0 NAME          the program's argv[0] (default: WASM as written)
//	-W simd=y|n, -W relaxed-simd=y|n, -W relaxed-simd-deterministic=y|n
//	-O opt-level=0|2|s    Cranelift's optimisation level (default 2: speed)
//	-C cranelift-NAME=VALUE   set a Cranelift setting, such as
//	                      -C cranelift-enable_heap_access_spectre_mitigation=false
//	--profile perfmap|jitdump  tell perf about the compiled code
//
// Values of -W, -O and -C may be comma-separated (-W simd=y,relaxed-simd=n);
// y, yes, true, n, no and false are booleans, and a bare name means y.
// Everything else is wasmtime's default (wasmtime-go's engine defaults).
// The program's standard input, output and error are this process's.
//
// Exit status: the program's (its proc_exit code; 0 when _start returns); 134
// when it traps (128 + SIGABRT, as wasmtime on Unix), with the trap on
// stderr; 1 when the runner fails (WASM does not compile, a --dir is not a
// directory); 2 for a bad command line.
//
// With WASMTIME_RUN_CACHE=DIR the compiled module is kept in DIR, keyed by
// the SHA-256 of the wasm bytes, the wasmtime-go version and the options that
// change code generation, and checked by its own SHA-256 before it is loaded:
// a later run of the same file skips Cranelift (seconds for the CLI).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/bytecodealliance/wasmtime-go/v39"
)

// wasmtimeVersion is the wasmtime release the go.mod's wasmtime-go binds
// (its prebuilt libwasmtime): part of the compiled-module cache key.
const wasmtimeVersion = "wasmtime-go/v39 v39.0.1"

// Exit statuses of the runner itself.
const (
	exitFail  = 1
	exitUsage = 2
	exitTrap  = 128 + 6 // SIGABRT, as wasmtime
)

const usage = `usage: wasmtime-run [run] [OPTIONS] WASM [ARGS...]
  --dir HOST[::GUEST]       preopen HOST as GUEST (default: HOST as written)
  --env NAME[=VALUE]        set NAME in the program's environment
  --argv0 NAME              the program's argv[0]
  -W simd=y|n,relaxed-simd=y|n,relaxed-simd-deterministic=y|n
  -O opt-level=0|2|s
  -C cranelift-NAME=VALUE   a Cranelift setting
  --profile perfmap|jitdump
Every argument after WASM is the program's ("--" included).
WASMTIME_RUN_CACHE=DIR keeps compiled modules in DIR.
`

// options is a parsed command line.
type options struct {
	wasm  string
	args  []string // argv[1:]
	argv0 string
	dirs  []preopen
	env   []string // NAME=VALUE

	simd, relaxed, deterministic *bool
	optLevel                     string      // "", "0", "2", "s"
	cranelift                    [][2]string // name, value
	profile                      string
}

type preopen struct{ host, guest string }

func main() {
	os.Exit(runMain(os.Args[1:], os.Stderr))
}

// runMain runs the command line args and returns the exit status.
func runMain(args []string, stderr io.Writer) int {
	o, err := parse(args)
	if errors.Is(err, errHelp) {
		fmt.Fprint(os.Stdout, usage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "wasmtime-run: %v\n%s", err, usage)
		return exitUsage
	}
	code, err := run(o)
	if err != nil {
		fmt.Fprintf(stderr, "wasmtime-run: %v\n", err)
	}
	return code
}

var errHelp = errors.New("help")

// parse reads wasmtime run's command line: options, WASM, the program's
// arguments.
func parse(args []string) (options, error) {
	var o options
	if len(args) > 0 && args[0] == "run" {
		args = args[1:]
	}
	for len(args) > 0 {
		a := args[0]
		if a == "-h" || a == "--help" {
			return o, errHelp
		}
		if a == "--" { // before WASM, "--" only ends the options
			args = args[1:]
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		name, val, inline := strings.Cut(a, "=")
		if len(name) > 2 && name[1] != '-' { // -Wsimd=y
			name, val, inline = a[:2], a[2:], true
		}
		switch name {
		case "--dir", "--env", "--argv0", "--profile", "-W", "-O", "-C":
		default:
			return o, fmt.Errorf("unknown option %s", a)
		}
		if !inline {
			if len(args) < 2 {
				return o, fmt.Errorf("%s needs a value", name)
			}
			val, args = args[1], args[1:]
		}
		args = args[1:]
		if err := o.set(name, val); err != nil {
			return o, err
		}
	}
	if len(args) == 0 {
		return o, errors.New("no WASM file given")
	}
	o.wasm, o.args = args[0], args[1:]
	if o.argv0 == "" {
		o.argv0 = o.wasm
	}
	return o, nil
}

// set applies one option.
func (o *options) set(name, val string) error {
	switch name {
	case "--dir":
		host, guest, ok := strings.Cut(val, "::")
		if !ok {
			guest = host
		}
		if host == "" || guest == "" {
			return fmt.Errorf("--dir %q: want HOST or HOST::GUEST", val)
		}
		o.dirs = append(o.dirs, preopen{host, guest})
	case "--env":
		k, v, ok := strings.Cut(val, "=")
		if k == "" {
			return fmt.Errorf("--env %q: want NAME=VALUE or NAME", val)
		}
		if !ok {
			var has bool
			if v, has = os.LookupEnv(k); !has {
				return nil
			}
		}
		o.env = append(o.env, k+"="+v)
	case "--argv0":
		o.argv0 = val
	case "--profile":
		if val != "perfmap" && val != "jitdump" {
			return fmt.Errorf("--profile %q: want perfmap or jitdump", val)
		}
		o.profile = val
	default: // -W, -O, -C: KEY[=VALUE],...
		for _, kv := range strings.Split(val, ",") {
			k, v, _ := strings.Cut(kv, "=")
			if err := o.setGroup(name, k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

func (o *options) setGroup(group, k, v string) error {
	bad := func() error { return fmt.Errorf("%s %s=%s: not an option this runner knows (see -h)", group, k, v) }
	switch group {
	case "-W":
		b, err := parseBool(v)
		if err != nil {
			return fmt.Errorf("-W %s: %w", k, err)
		}
		switch k {
		case "simd":
			o.simd = &b
		case "relaxed-simd":
			o.relaxed = &b
		case "relaxed-simd-deterministic":
			o.deterministic = &b
		default:
			return bad()
		}
	case "-O":
		if k != "opt-level" || !slices.Contains([]string{"0", "2", "s"}, v) {
			return bad()
		}
		o.optLevel = v
	case "-C":
		flag, ok := strings.CutPrefix(k, "cranelift-")
		if !ok || flag == "" || v == "" {
			return bad()
		}
		o.cranelift = append(o.cranelift, [2]string{flag, v})
	}
	return nil
}

func parseBool(v string) (bool, error) {
	switch v {
	case "", "y", "yes", "true":
		return true, nil
	case "n", "no", "false":
		return false, nil
	}
	return false, fmt.Errorf("%q is not y or n", v)
}

// config is the engine configuration of o, and the part of it that changes
// the compiled code (the cache key).
func (o options) config() (*wasmtime.Config, string) {
	cfg := wasmtime.NewConfig()
	var key []string
	setBool := func(name string, p *bool, set func(bool)) {
		if p != nil {
			set(*p)
			key = append(key, fmt.Sprintf("%s=%t", name, *p))
		}
	}
	setBool("simd", o.simd, cfg.SetWasmSIMD)
	setBool("relaxed-simd", o.relaxed, cfg.SetWasmRelaxedSIMD)
	setBool("relaxed-simd-deterministic", o.deterministic, cfg.SetWasmRelaxedSIMDDeterministic)
	switch o.optLevel {
	case "0":
		cfg.SetCraneliftOptLevel(wasmtime.OptLevelNone)
	case "2":
		cfg.SetCraneliftOptLevel(wasmtime.OptLevelSpeed)
	case "s":
		cfg.SetCraneliftOptLevel(wasmtime.OptLevelSpeedAndSize)
	}
	if o.optLevel != "" {
		key = append(key, "opt-level="+o.optLevel)
	}
	for _, f := range o.cranelift {
		cfg.SetCraneliftFlag(f[0], f[1])
		key = append(key, "cranelift-"+f[0]+"="+f[1])
	}
	switch o.profile {
	case "perfmap":
		cfg.SetProfiler(wasmtime.ProfilingStrategy(3)) // WASMTIME_PROFILING_STRATEGY_PERFMAP, which wasmtime-go does not name
	case "jitdump":
		cfg.SetProfiler(wasmtime.ProfilingStrategyJitdump)
	}
	return cfg, strings.Join(key, ",")
}

// run runs o's program and returns its exit status; the error says why the
// runner failed or the program trapped.
func run(o options) (int, error) {
	for _, d := range o.dirs {
		if fi, err := os.Stat(d.host); err != nil {
			return exitFail, fmt.Errorf("--dir %s: %w", d.host, err)
		} else if !fi.IsDir() {
			return exitFail, fmt.Errorf("--dir %s: not a directory", d.host)
		}
	}
	cfg, key := o.config()
	engine := wasmtime.NewEngineWithConfig(cfg)
	defer engine.Close()
	module, err := loadModule(engine, o.wasm, key, os.Getenv("WASMTIME_RUN_CACHE"))
	if err != nil {
		return exitFail, err
	}
	defer module.Close()

	wasi := wasmtime.NewWasiConfig()
	wasi.SetArgv(append([]string{o.argv0}, o.args...))
	var keys, vals []string
	for _, kv := range o.env {
		k, v, _ := strings.Cut(kv, "=")
		keys, vals = append(keys, k), append(vals, v)
	}
	wasi.SetEnv(keys, vals)
	wasi.InheritStdin()
	wasi.InheritStdout()
	wasi.InheritStderr()
	for _, d := range o.dirs {
		if err := wasi.PreopenDir(d.host, d.guest, wasmtime.DIR_READ|wasmtime.DIR_WRITE, wasmtime.FILE_READ|wasmtime.FILE_WRITE); err != nil {
			return exitFail, fmt.Errorf("--dir %s::%s: %w", d.host, d.guest, err)
		}
	}
	store := wasmtime.NewStore(engine)
	defer store.Close()
	store.SetWasi(wasi)
	linker := wasmtime.NewLinker(engine)
	defer linker.Close()
	if err := linker.DefineWasi(); err != nil {
		return exitFail, err
	}
	inst, err := linker.Instantiate(store, module)
	if err != nil {
		return exitStatus(o.wasm, err)
	}
	start := inst.GetFunc(store, "_start")
	if start == nil {
		return exitFail, fmt.Errorf("%s exports no _start function: not a WASI command", o.wasm)
	}
	_, err = start.Call(store)
	return exitStatus(o.wasm, err)
}

// exitStatus maps the end of a run to an exit status: the program's
// proc_exit code, 0 for a return, exitTrap for a trap.
func exitStatus(wasm string, err error) (int, error) {
	var werr *wasmtime.Error
	if errors.As(err, &werr) {
		if code, ok := werr.ExitStatus(); ok {
			return int(code), nil
		}
	}
	var trap *wasmtime.Trap
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &trap):
		return exitTrap, fmt.Errorf("%s trapped: %v", wasm, trap)
	}
	return exitFail, fmt.Errorf("%s: %w", wasm, err)
}

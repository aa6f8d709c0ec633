package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/bytecodealliance/wasmtime-go/v39"
)

// The test binary is also the runner: run with asMain set, it is main.
const asMain = "WASMTIME_RUN_TEST_AS_MAIN"

var tmpDir string

func TestMain(m *testing.M) {
	if os.Getenv(asMain) == "1" {
		os.Exit(runMain(os.Args[1:], os.Stderr))
	}
	var err error
	if tmpDir, err = os.MkdirTemp("", "wasmtime-run-test-"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(tmpDir)
	os.Exit(code)
}

// probe builds testdata/probe for GOOS=wasip1 once.
var probe = sync.OnceValues(func() (string, error) {
	out := filepath.Join(tmpDir, "probe.wasm")
	cmd := exec.Command("go", "build", "-o", out, "./testdata/probe")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", errors.New("GOOS=wasip1 go build ./testdata/probe: " + err.Error() + "\n" + string(b))
	}
	return out, nil
})

func probeWasm(t *testing.T) string {
	t.Helper()
	p, err := probe()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runner runs wasmtime-run with args and stdin in dir, with env added. The
// compiled modules are kept in one cache for the whole test process
// (TestCache tests the cache with a directory of its own).
func runner(t *testing.T, dir, stdin string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), asMain+"=1", "WASMTIME_RUN_CACHE="+filepath.Join(tmpDir, "compiled")), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("wasmtime-run %q: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// wat writes the module in the text format to a file and returns its path.
func wat(t *testing.T, src string) string {
	t.Helper()
	b, err := wasmtime.Wat2Wasm(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "m.wasm")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestArgsEnvStdio: the program gets every argument after WASM ("--"
// included, as wasmtime 14+), argv[0], the --env variables (and only
// those), stdin, stdout and stderr.
func TestArgsEnvStdio(t *testing.T) {
	p := probeWasm(t)
	dir := filepath.Dir(p)
	stdout, stderr, code := runner(t, dir, "", nil, "run", "probe.wasm", "args", "--", "-n", "64", "a b")
	if want := "probe.wasm\nargs\n--\n-n\n64\na b\n"; code != 0 || stdout != want {
		t.Errorf("args: exit %d, stdout %q (want %q), stderr %s", code, stdout, want, stderr)
	}
	// Options end at WASM: a later --dir is the program's.
	stdout, _, _ = runner(t, dir, "", nil, "--argv0", "picolm", "probe.wasm", "args", "--dir", "x")
	if want := "picolm\nargs\n--dir\nx\n"; stdout != want {
		t.Errorf("--argv0: stdout %q, want %q", stdout, want)
	}
	for _, c := range []struct {
		opts []string
		env  []string
		name string
		want string
	}{
		{[]string{"--env", "A=1=2"}, nil, "A", `"1=2" true`},
		{[]string{"--env=A="}, nil, "A", `"" true`},
		{[]string{"--env", "INHERIT"}, []string{"INHERIT=yes"}, "INHERIT", `"yes" true`},
		{[]string{"--env", "UNSET_ANYWHERE"}, nil, "UNSET_ANYWHERE", `"" false`},
		{nil, []string{"NOT_PASSED=1"}, "NOT_PASSED", `"" false`}, // no variable is inherited unasked
	} {
		args := append(append([]string{"run"}, c.opts...), "probe.wasm", "env", c.name)
		stdout, stderr, code := runner(t, dir, "", c.env, args...)
		if code != 0 || stdout != c.want+"\n" {
			t.Errorf("%q: exit %d, stdout %q (want %q), stderr %s", args, code, stdout, c.want, stderr)
		}
	}
	stdout, stderr, code = runner(t, dir, "hello\nworld", nil, "probe.wasm", "echo")
	if code != 0 || stdout != "hello\nworld" || stderr != "err" {
		t.Errorf("stdio: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestExitStatus: the program's exit status, 134 for a trap, 1 when the
// runner fails, 2 for a bad command line; each with a message.
func TestExitStatus(t *testing.T) {
	p := probeWasm(t)
	notWasm := filepath.Join(t.TempDir(), "not.wasm")
	os.WriteFile(notWasm, []byte("\x00asm but not really"), 0o644)
	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"exit 0", []string{p, "exit", "0"}, 0, ""},
		{"exit 7", []string{p, "exit", "7"}, 7, ""},
		{"Go's exit 2", []string{p, "nope"}, 2, "unknown subcommand"},
		{"proc_exit", []string{wat(t, `(module (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
			(memory (export "memory") 1) (func (export "_start") (call $exit (i32.const 3))))`)}, 3, ""},
		{"return", []string{wat(t, `(module (memory (export "memory") 1) (func (export "_start")))`)}, 0, ""},
		{"trap", []string{wat(t, `(module (memory (export "memory") 1) (func (export "_start") unreachable))`)}, 134, "unreachable"},
		{"out of bounds", []string{wat(t, `(module (memory (export "memory") 1)
			(func (export "_start") (drop (i32.load (i32.const 70000)))))`)}, 134, "out of bounds"},
		{"no _start", []string{wat(t, `(module (memory (export "memory") 1))`)}, 1, "no _start"},
		{"not wasm", []string{notWasm}, 1, "not.wasm"},
		{"missing wasm", []string{filepath.Join(t.TempDir(), "none.wasm")}, 1, "no such file"},
		{"missing --dir", []string{"--dir", filepath.Join(t.TempDir(), "none"), p, "exit", "0"}, 1, "--dir"},
		{"--dir a file", []string{"--dir", p, p, "exit", "0"}, 1, "not a directory"},
		{"unknown option", []string{"--nope", p}, 2, "unknown option --nope"},
		{"unknown -W", []string{"-W", "threads=y", p}, 2, "-W threads=y"},
		{"bad boolean", []string{"-W", "simd=maybe", p}, 2, "not y or n"},
		{"no value", []string{"--dir"}, 2, "needs a value"},
		{"no wasm", []string{"--dir", "."}, 2, "no WASM"},
	} {
		_, stderr, code := runner(t, t.TempDir(), "", nil, c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("%s: exit %d (want %d), stderr %q (want %q)", c.name, code, c.code, stderr, c.msg)
		}
	}
}

// TestDirs: --dir HOST::GUEST and --dir HOST preopen HOST read-write under
// its guest name; nothing else of the host is reachable, through a path or
// a symbolic link out of the directory.
func TestDirs(t *testing.T) {
	p := probeWasm(t)
	host, other := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(host, "a.txt"), []byte("inside"), 0o644)
	os.WriteFile(filepath.Join(other, "b.txt"), []byte("outside"), 0o644)
	if err := os.Symlink(filepath.Join(other, "b.txt"), filepath.Join(host, "link.txt")); err != nil {
		t.Fatal(err)
	}
	ok := func(want string, args ...string) {
		t.Helper()
		stdout, stderr, code := runner(t, host, "", nil, args...)
		if code != 0 || stdout != want {
			t.Errorf("%q: exit %d, stdout %q (want %q), stderr %s", args, code, stdout, want, stderr)
		}
	}
	fails := func(args ...string) {
		t.Helper()
		stdout, stderr, code := runner(t, host, "", nil, args...)
		if code != 1 || stdout != "" || stderr == "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 1 with an error", args, code, stdout, stderr)
		}
	}
	ok("inside", "--dir", host+"::/data", p, "cat", "/data/a.txt")
	ok("inside", "--dir", host, p, "cat", filepath.Join(host, "a.txt"))
	ok("inside", "--dir", ".::/", p, "cat", "a.txt") // relative to Go's working directory, the first preopen
	ok("", "--dir", host+"::/data", p, "write", "/data/new.txt", "written")
	if b, err := os.ReadFile(filepath.Join(host, "new.txt")); err != nil || string(b) != "written" {
		t.Errorf("write through --dir: %q %v", b, err)
	}
	fails(p, "cat", filepath.Join(host, "a.txt"))                              // no --dir
	fails("--dir", host+"::/data", p, "cat", filepath.Join(other, "b.txt"))    // not under a preopen
	fails("--dir", host+"::/data", p, "cat", "/data/link.txt")                 // a link out of the preopen
	fails("--dir", host+"::/data", p, "cat", "/data/../"+filepath.Base(other)) // ".." stays inside
}

// TestCache: with WASMTIME_RUN_CACHE the second run loads the compiled
// module; a damaged entry is compiled again and replaced; other code
// generation options are another entry.
func TestCache(t *testing.T) {
	p := probeWasm(t)
	cache := t.TempDir()
	env := []string{"WASMTIME_RUN_CACHE=" + cache}
	want := p + "\nargs\n"
	check := func(n int, args ...string) []string {
		t.Helper()
		stdout, stderr, code := runner(t, cache, "", env, args...)
		if code != 0 || stdout != want || stderr != "" {
			t.Fatalf("%q: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
		entries, _ := filepath.Glob(filepath.Join(cache, "*.cwasm"))
		if len(entries) != n {
			t.Fatalf("%q: %d cache entries, want %d", args, len(entries), n)
		}
		return entries
	}
	entries := check(1, p, "args")
	before, _ := os.Stat(entries[0])
	check(1, p, "args")
	b, _ := os.ReadFile(entries[0])
	if len(b) != int(before.Size()) {
		t.Fatal("the entry changed on a cache hit")
	}
	b[len(b)/2] ^= 1
	os.WriteFile(entries[0], b, 0o644)
	check(1, p, "args")
	b, _ = os.ReadFile(entries[0])
	if sum := sha256.Sum256(b[:len(b)-sha256.Size]); !bytes.Equal(sum[:], b[len(b)-sha256.Size:]) {
		t.Error("the damaged entry was not replaced")
	}
	check(2, "-O", "opt-level=0", p, "args")
}

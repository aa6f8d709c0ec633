//go:build linux || darwin

package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// TestThreadsCapped: -j 10000000 once started ten million goroutines (13 GB
// before any output); it is capped at maxThreadsPerCPU per CPU with a message.
func TestThreadsCapped(t *testing.T) {
	limit := maxThreadsPerCPU * runtime.NumCPU()
	for _, tc := range []struct {
		j    string
		want int
		msg  bool
	}{{"10000000", limit, true}, {"100000", limit, true}, {fmt.Sprint(limit + 1), limit, true}, {fmt.Sprint(limit), limit, false}, {"1", 1, false}} {
		var stderr bytes.Buffer
		o, err := parseArgs([]string{"-j", tc.j, "-p", "x"}, &stderr)
		if err != nil {
			t.Fatal(err)
		}
		if o.threads != tc.want || strings.Contains(stderr.String(), "using") != tc.msg {
			t.Errorf("-j %s: %d threads (want %d), stderr %q", tc.j, o.threads, tc.want, stderr.String())
		}
	}
	// A whole run with a huge -j: it completes, and says it capped.
	out, stderr := runCLI(t, []string{"-j", "10000000", "-n", "4", "-t", "0", "-p", "Once"})
	if out == "" || !strings.Contains(stderr, fmt.Sprintf("using %d", limit)) {
		t.Errorf("-j 10000000: output %q, stderr %s", out, stderr)
	}
	// quantize's -j too.
	var stderrQ bytes.Buffer
	run([]string{"quantize", "-j", "10000000", "/nonexistent.gguf", t.TempDir() + "/o.gguf", "Q8_0"}, nil, &bytes.Buffer{}, &stderrQ)
	if !strings.Contains(stderrQ.String(), fmt.Sprintf("using %d", limit)) {
		t.Errorf("quantize -j 10000000: %s", stderrQ.String())
	}
}

// hostileFiles makes, in dir, the files of issue 13's attacks on the CLI's
// reads: a symbolic link to /dev/zero, a 3 GB sparse file, a named pipe and a
// directory, each as a model and as a KV cache.
func hostileFiles(t *testing.T, dir string) {
	t.Helper()
	for _, ext := range []string{".gguf", ".kv"} {
		if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero"+ext)); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(dir, "sparse"+ext))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(3 << 30); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := syscall.Mkfifo(filepath.Join(dir, "fifo"+ext), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(dir, "dir"+ext), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Models with a NaN weight: a Q8_0 block scale, an F32 norm.
	for _, p := range []struct {
		out, model, tensor string
		at                 int
		nan                []byte
	}{
		{"nan-q8.gguf", "tinyllamas-stories-260k-q8_0.gguf", "blk.0.attn_q.weight", 5 * 34, []byte{0x00, 0x7e}},
		{"nan-norm.gguf", "stories260K.gguf", "blk.1.attn_norm.weight", 4 * 9, []byte{0x00, 0x00, 0xc0, 0x7f}},
	} {
		b, err := os.ReadFile(shareddata.Path(t, p.model))
		if err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		ti, _ := f.Tensor(p.tensor)
		copy(b[f.DataOffset+ti.Offset+uint64(p.at):], p.nan)
		if err := os.WriteFile(filepath.Join(dir, p.out), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// hostileCase is one attack: the CLI's arguments for the files made by
// hostileFiles in dir, what stdin holds, and the exit code and message
// expected. A cache the CLI refuses leaves the run going: it still prints
// the story.
type hostileCase struct {
	name  string
	args  func(dir string) []string
	stdin string
	code  int
	want  string
}

var hostileCases = func() []hostileCase {
	var cs []hostileCase
	for _, f := range []struct{ file, want string }{
		{"zero", "not a regular file"}, {"fifo", "not a regular file"}, {"dir", "not a regular file"},
		{"sparse", "more than a cache of this model and context can hold"},
	} {
		cs = append(cs, hostileCase{"--cache " + f.file + ".kv", func(dir string) []string {
			return []string{"-n", "4", "-t", "0", "-p", "Once", "--cache", dir + "/" + f.file + ".kv"}
		}, "", 0, f.want})
	}
	for _, f := range []struct{ file, want string }{
		{"zero", "not a regular file"}, {"fifo", "not a regular file"}, {"dir", "not a regular file"}, {"sparse", "bad magic"},
	} {
		cs = append(cs, hostileCase{"model " + f.file + ".gguf", func(dir string) []string {
			return []string{dir + "/" + f.file + ".gguf", "-n", "4", "-p", "Once"}
		}, "", 1, f.want})
	}
	for _, f := range []struct {
		file, flag, want string
		code             int
	}{
		{"nan-q8.gguf", "", "NaN or infinite weight: blk.0.attn_q.weight (Q8_0) block 5 of 128 (row 2): scale d is NaN (--no-check loads it anyway)", 1},
		{"nan-norm.gguf", "", "NaN or infinite weight: blk.1.attn_norm.weight (F32) block 9 of 64: element 9 is NaN", 1},
		{"nan-q8.gguf", "--no-check", "loaded in", 0}, // and prints token 0 four times, as all such models did
	} {
		cs = append(cs, hostileCase{"model " + f.file + " " + f.flag, func(dir string) []string {
			args := []string{dir + "/" + f.file, "-n", "4", "-p", "Once", "--ids"}
			if f.flag != "" {
				args = append(args, f.flag)
			}
			return args
		}, "", f.code, f.want})
	}
	cs = append(cs, hostileCase{"17 MiB prompt on stdin", func(string) []string { return []string{"-n", "4"} },
		strings.Repeat("Once upon a time ", 17<<20/17+1), 1, "longer than 16 MiB"})
	return cs
}()

// checkHostile checks one attack's result, and that the named pipe and the
// link given as a cache are still what they were (the cache is never saved
// over what is not a regular file).
func checkHostile(t *testing.T, c hostileCase, dir, stdout, stderr string, code int) {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, c.want) {
			t.Logf("%s: exit %d: %s", c.name, code, line)
		}
	}
	if code != c.code || !strings.Contains(stderr, c.want) || (c.code == 0) != (strings.TrimSpace(stdout) != "") {
		t.Errorf("%s: exit %d (want %d), stdout %q, stderr %s", c.name, code, c.code, stdout, stderr)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "fifo.kv")); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("%s: the named pipe fifo.kv was replaced: %v %v", c.name, fi.Mode(), err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "zero.kv")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("%s: the link zero.kv was replaced: %v %v", c.name, fi.Mode(), err)
	}
}

// withDeadline runs f, failing the test if it has not returned within a
// minute: a read that blocks (a named pipe) or never ends (/dev/zero).
func withDeadline(t *testing.T, name string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s: still running after a minute", name)
	}
}

// TestHostileFiles: issue 13's attacks on the CLI's reads, natively. A link
// to /dev/zero as --cache reached 12 GB in 60 s, a 3 GB sparse cache took
// 3.1 GB to be refused, a named pipe blocked forever (as a model too). Each
// is now refused before a byte is read: the allocations of the whole run
// stay far below the file sizes.
func TestHostileFiles(t *testing.T) {
	dir := t.TempDir()
	hostileFiles(t, dir)
	for _, c := range hostileCases {
		var out, errb bytes.Buffer
		var code int
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		withDeadline(t, c.name, func() { code = run(c.args(dir), strings.NewReader(c.stdin), &out, &errb) })
		runtime.ReadMemStats(&after)
		checkHostile(t, c, dir, out.String(), errb.String(), code)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20+uint64(len(c.stdin)) {
			t.Errorf("%s: %d MB allocated", c.name, alloc>>20)
		}
	}
}

// TestCacheThroughLink: a --cache path that is a link to a regular file is
// read through it, and saved to the file it leads to (the link stays).
func TestCacheThroughLink(t *testing.T) {
	dir := t.TempDir()
	real, link := filepath.Join(dir, "real.kv"), filepath.Join(dir, "link.kv")
	if err := os.Symlink("real.kv", link); err != nil {
		t.Fatal(err)
	}
	args := []string{"-n", "4", "-t", "0", "-p", "Once upon a time", "--cache", link}
	if _, stderr := runCLI(t, args); !strings.Contains(stderr, "saved") {
		t.Fatalf("first run: %s", stderr)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	if fi, err := os.Stat(real); err != nil || fi.Size() == 0 {
		t.Fatalf("nothing saved to the link's target: %v", err)
	}
	if _, stderr := runCLI(t, args); !strings.Contains(stderr, "skipped") {
		t.Errorf("second run did not use the cache: %s", stderr)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(m) > 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

//go:build linux || darwin

package gguf

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// TestOpenRefusesNonRegular: Open (and so every command that opens a model)
// refuses a named pipe without blocking, a device and a directory, and
// follows a link to a regular file.
func TestOpenRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.gguf")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.gguf")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, zero, dir} {
		done := make(chan error, 1)
		go func() { _, err := Open(p); done <- err }()
		if err := <-done; !errors.Is(err, ErrNotRegular) {
			t.Errorf("Open(%s) = %v, want ErrNotRegular", p, err)
		}
	}
	good := filepath.Join(dir, "link.gguf")
	abs, err := filepath.Abs(shareddata.Path(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, good); err != nil {
		t.Fatal(err)
	}
	f, err := Open(good)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

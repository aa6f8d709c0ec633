//go:build linux || darwin

package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestServeStaysInRoot: a symbolic link that leads out of the served
// directory (a link to /etc once served /etc/shadow) is refused, in the root
// and in a mount; a link that stays inside is followed; a FIFO or a device
// is refused at once instead of blocking or never ending.
func TestServeStaysInRoot(t *testing.T) {
	root, models, outside := t.TempDir(), t.TempDir(), t.TempDir()
	write := func(p, s string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "web", "inside.txt"), "inside")
	write(filepath.Join(outside, "secret.txt"), "TOPSECRET")
	write(filepath.Join(root, "go.mod"), "module example.com/x\n\ngo 1.27\n")
	write(filepath.Join(root, "LICENSE"), "Permission is hereby granted, free of charge\n")
	link := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	link("/etc", filepath.Join(root, "etc"))
	link(filepath.Join(outside, "secret.txt"), filepath.Join(root, "secret.txt"))
	link("../"+filepath.Base(outside)+"/secret.txt", filepath.Join(root, "relsecret.txt")) // relative, still out
	link(outside, filepath.Join(root, "out"))
	link("web/inside.txt", filepath.Join(root, "alias.txt"))
	link("/dev/zero", filepath.Join(root, "zero.gguf"))
	link("/etc", filepath.Join(models, "etc"))
	if err := syscall.Mkfifo(filepath.Join(root, "fifo.gguf"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := handler(root, []string{"/test-models/=" + models})
	if err != nil {
		t.Fatal(err)
	}
	for path, status := range map[string]int{
		"/etc/passwd": 403, "/etc/hostname": 403, "/etc/": 403, "/secret.txt": 403, "/relsecret.txt": 403,
		"/out/secret.txt": 403, "/test-models/etc/passwd": 403, "/zero.gguf": 403, "/fifo.gguf": 403,
		"/alias.txt": 200, "/web/inside.txt": 200,
	} {
		done := make(chan *http.Response, 1)
		go func() { done <- get(t, h, path, "") }()
		select {
		case res := <-done:
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != status || bytes.Contains(body, []byte("TOPSECRET")) || bytes.Contains(body, []byte("root:")) {
				t.Errorf("%s: status %d, want %d; body %.40q", path, res.StatusCode, status, body)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no answer in 10 s", path)
		}
	}
	// Text files the system's MIME table does not know (or calls something else) are text.
	for _, p := range []string{"/go.mod", "/LICENSE", "/alias.txt"} {
		if ct := get(t, h, p, "").Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", p, ct)
		}
	}
}

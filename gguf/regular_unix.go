//go:build unix

package gguf

import (
	"io/fs"
	"os"
	"syscall"
)

// openFlags opens without blocking: a path swapped for a named pipe after
// the first stat opens at once (and is then refused) instead of waiting for a
// writer.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK

func isRegular(fi fs.FileInfo) bool { return fi.Mode().IsRegular() }

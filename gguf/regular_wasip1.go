//go:build wasip1

package gguf

import (
	"io/fs"
	"os"
	"syscall"
)

// WASI preview 1 has no non-blocking open; the stat before it does the work.
const openFlags = os.O_RDONLY

// isRegular asks for WASI's own file type: WASI has no type for a named pipe
// (it is "unknown"), and Go reports an unknown type as a regular file.
func isRegular(fi fs.FileInfo) bool {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Filetype == syscall.FILETYPE_REGULAR_FILE
	}
	return fi.Mode().IsRegular()
}

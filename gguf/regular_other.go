//go:build !unix && !wasip1

package gguf

import (
	"io/fs"
	"os"
)

const openFlags = os.O_RDONLY

func isRegular(fi fs.FileInfo) bool { return fi.Mode().IsRegular() }

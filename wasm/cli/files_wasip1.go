package main

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
)

// wasiPathError says, for an error opening a file, what a WASI program can
// reach: only the directories the host preopened. Go's wasip1 port resolves
// a path under the preopen whose name is its longest prefix, relative paths
// from its working directory (PWD, else the first preopen's name); a path
// under none of them (every path when the only preopen is named ".", as
// `wasmtime run --dir .` names it) fails with EBADF.
func wasiPathError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EBADF), errors.Is(err, syscall.ENOTCAPABLE):
		return fmt.Errorf("%w: the path is under no directory the WASI host preopened "+
			"(under wasmtime give one as --dir HOST::GUEST with an absolute GUEST, such as --dir .::/ for the current directory; "+
			"Go's wasip1 port finds nothing under a directory preopened as \".\", which --dir . gives)", err)
	case errors.Is(err, syscall.EPERM):
		return fmt.Errorf("%w (under WASI a symbolic link that leads out of the preopened directories is not followed)", err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w (a WASI program sees only the directories the host preopened, such as wasmtime's --dir HOST::GUEST)", err)
	}
	return err
}

package gguf

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrNotRegular is returned (wrapped) by OpenRegular, and so by Open, for a
// path that is not a regular file: a directory, a named pipe (opening one
// would block until a writer comes), a device (/dev/zero never ends), a
// socket. A symbolic link is followed; what it leads to must be regular.
var ErrNotRegular = errors.New("not a regular file")

// OpenRegular opens path for reading only when it is a regular file, and
// returns it with its FileInfo (whose Size bounds every read of it). It never
// blocks on a named pipe: the path is stat'ed before it is opened, opened
// without blocking where the platform allows (O_NONBLOCK on Unix), and the
// open file is stat'ed again, so a path swapped between the two is refused
// too.
func OpenRegular(path string) (*os.File, fs.FileInfo, error) {
	before, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !isRegular(before) {
		return nil, nil, notRegular(path, before)
	}
	f, err := os.OpenFile(path, openFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	now, err := f.Stat()
	if err == nil && (!isRegular(now) || !os.SameFile(before, now)) {
		err = notRegular(path, now)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, now, nil
}

// notRegular names what path is instead of a regular file.
func notRegular(path string, fi fs.FileInfo) error {
	kind := "changed while it was opened"
	if !isRegular(fi) {
		m := fi.Mode()
		switch {
		case m.IsDir():
			kind = "a directory"
		case m&fs.ModeNamedPipe != 0:
			kind = "a named pipe"
		case m&fs.ModeCharDevice != 0:
			kind = "a character device"
		case m&fs.ModeDevice != 0:
			kind = "a block device"
		case m&fs.ModeSocket != 0:
			kind = "a socket"
		default:
			kind = "a special file"
		}
	}
	link := ""
	if l, err := os.Lstat(path); err == nil && l.Mode()&fs.ModeSymlink != 0 {
		if target, err := os.Readlink(path); err == nil {
			link = fmt.Sprintf(" (a symbolic link to %s)", target)
		}
	}
	return fmt.Errorf("%s%s: %w: it is %s", path, link, ErrNotRegular, kind)
}

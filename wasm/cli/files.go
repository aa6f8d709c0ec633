package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/gguf"
)

// Every file the CLI reads is opened only when it is a regular file (a named
// pipe would block the open, /dev/zero would never end) and read no further
// than a size known before the first byte: the model through gguf.Open, the
// KV cache here, the prompt on stdin up to maxPrompt.

// maxPrompt bounds a prompt read from stdin.
const maxPrompt = 16 << 20

// readPrompt reads the prompt from stdin: at most maxPrompt bytes, or an
// error saying the prompt is longer.
func readPrompt(stdin io.Reader) (string, error) {
	b, err := io.ReadAll(io.LimitReader(stdin, maxPrompt+1))
	if err != nil {
		return "", fmt.Errorf("reading the prompt from stdin: %w", err)
	}
	if len(b) > maxPrompt {
		return "", fmt.Errorf("the prompt on stdin is longer than %d MiB", maxPrompt>>20)
	}
	return string(b), nil
}

// readCacheFile reads the KV cache file at path when it is a regular file no
// larger than limit, the largest cache this model and context can have. A
// missing file is fs.ErrNotExist; every other error names the path.
func readCacheFile(path string, limit int64) ([]byte, error) {
	f, st, err := gguf.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: %w: %d bytes, more than a cache of this model and context can hold (%d bytes)",
			path, engine.ErrCacheFile, st.Size(), limit)
	}
	b := make([]byte, st.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("%s: reading: %w", path, err)
	}
	return b, nil
}

// writeCacheFile replaces the file at path (or, through a symbolic link, the
// file it leads to) with data: written to a new file beside it, then renamed,
// so a reader never sees half a file. What is not a regular file (a named
// pipe, a device, a directory) is left alone with an error.
func writeCacheFile(path string, data []byte) error {
	f, _, err := gguf.OpenRegular(path)
	switch {
	case err == nil:
		f.Close()
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	path = followLinks(path)
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// followLinks returns where the symbolic links at path lead, the last one
// possibly to a file that does not exist yet (at most 40 links, as Linux).
func followLinks(path string) string {
	for range 40 {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			break
		}
		target, err := os.Readlink(path)
		if err != nil {
			break
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return path
}

// maxGrammarFile bounds a --grammar or --json-schema file.
const maxGrammarFile = 4 << 20

// readSmallFile reads the regular file at path (a grammar or a schema) of at
// most maxGrammarFile bytes; every error names the path and the flag.
func readSmallFile(flag, path string) ([]byte, error) {
	f, st, err := gguf.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, wasiPathError(err))
	}
	defer f.Close()
	if st.Size() > maxGrammarFile {
		return nil, fmt.Errorf("%s %s: %d bytes, over the limit of %d MiB", flag, path, st.Size(), maxGrammarFile>>20)
	}
	b := make([]byte, st.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("%s %s: reading: %w", flag, path, err)
	}
	return b, nil
}

package host

import (
	"bytes"
	"errors"
	"fmt"
)

// ErrState is wrapped by every reason a session state is not saved or not
// restored: a state file from another model, of another shape, truncated or
// corrupted (engine.ErrCacheFile), or a model split over several Workers,
// whose KV cache is spread over them.
var ErrState = errors.New("session state refused")

// SaveState returns the session's KV state, every cached position, as the
// CLI's --cache file (engine.Session.WriteCache: bound to the model's
// identity, SHA-256 checksummed). A model split over Workers is refused: each
// Worker holds its own heads' part of the KV cache.
func (w *Worker) SaveState() ([]byte, error) {
	if w.model == nil {
		return nil, ErrNoModel
	}
	if w.running.Load() {
		return nil, ErrBusy
	}
	if w.info.Workers > 1 {
		return nil, w.splitState("saved")
	}
	n := w.sess.Pos()
	var buf bytes.Buffer
	buf.Grow(int(w.sess.CacheFileSize(n)))
	if err := w.sess.WriteCache(&buf, n); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrState, err)
	}
	return buf.Bytes(), nil
}

// MaxStateBytes is the size of the largest state RestoreState accepts (the
// whole context cached), 0 with no model: the bridge refuses a larger file
// before copying it into Go memory.
func (w *Worker) MaxStateBytes() int64 {
	if w.sess == nil {
		return 0
	}
	return w.sess.CacheFileSize(w.sess.Context())
}

// RestoreState replaces the session's KV cache by a state SaveState made,
// and returns the positions restored. A state of another model, or one
// truncated or corrupted, is refused (wrapping ErrState and
// engine.ErrCacheFile) and leaves the session empty.
func (w *Worker) RestoreState(b []byte) (int, error) {
	if w.model == nil {
		return 0, ErrNoModel
	}
	if w.running.Load() {
		return 0, ErrBusy
	}
	if w.info.Workers > 1 {
		return 0, w.splitState("restored")
	}
	n, err := w.sess.ReadCache(b)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrState, err)
	}
	return n, nil
}

func (w *Worker) splitState(verb string) error {
	return fmt.Errorf("%w: the state of a model split over %d Workers cannot be %s (each Worker holds its own heads' part of the KV cache): load the model with workers: 1 to save and restore its state",
		ErrState, w.info.Workers, verb)
}

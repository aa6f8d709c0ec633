package engine

import (
	"errors"
	"fmt"
	"slices"
	"sync"
)

// LocalMesh joins the parts of a split model that run in one process (a
// goroutine each): the Mesh of each part is End(part). Each part publishes
// into its own pair of buffers, by the exchange's parity: a part publishes
// the next exchange only once every part has collected this one, so the
// buffer it overwrites is two exchanges old and read by all. (The browser's
// mesh is a SharedArrayBuffer between Web Workers laid out the same way:
// wasm/browser/worker.)
type LocalMesh struct {
	mu   sync.Mutex
	cond *sync.Cond
	gen  []int       // [part] exchanges published
	vals [][2][]byte // [part][parity] the values published
	err  error       // set by Fail: every wait ends with it
	ends []*localEnd
	// onPublish, when set, sees every publish (under mu; for tests).
	onPublish func(part int, mine []byte)
}

type localEnd struct {
	m    *LocalMesh
	part int
	gen  int
}

// errMeshFailed is what Fail(nil) fails a LocalMesh with.
var errMeshFailed = errors.New("the mesh failed")

// NewLocalMesh joins n parts.
func NewLocalMesh(n int) *LocalMesh {
	m := &LocalMesh{gen: make([]int, n), vals: make([][2][]byte, n)}
	m.cond = sync.NewCond(&m.mu)
	for k := range n {
		m.ends = append(m.ends, &localEnd{m: m, part: k})
	}
	return m
}

// End is part k's Mesh.
func (m *LocalMesh) End(k int) Mesh { return m.ends[k] }

// Fail ends every exchange, now and later, with err: a part that failed
// (a Shard whose Step returned an error) or the mesh closed.
func (m *LocalMesh) Fail(err error) {
	if err == nil {
		err = errMeshFailed
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err == nil {
		m.err = err
	}
	m.cond.Broadcast()
}

func (e *localEnd) Publish(mine []byte) error {
	m := e.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	e.gen++
	v := &m.vals[e.part][e.gen%2]
	*v = append((*v)[:0], mine...)
	m.gen[e.part] = e.gen
	if m.onPublish != nil {
		m.onPublish(e.part, mine)
	}
	m.cond.Broadcast()
	return nil
}

func (e *localEnd) Collect(theirs [][]byte) error {
	m := e.m
	m.mu.Lock()
	defer m.mu.Unlock()
	for m.err == nil && slices.Min(m.gen) < e.gen {
		m.cond.Wait()
	}
	if m.err != nil {
		return m.err
	}
	for k, dst := range theirs {
		if dst == nil || k == e.part {
			continue
		}
		v := m.vals[k][e.gen%2]
		if len(v) > cap(dst) {
			return fmt.Errorf("part %d published %d bytes, room for %d", k, len(v), cap(dst))
		}
		theirs[k] = dst[:len(v)]
		copy(theirs[k], v)
	}
	return nil
}

package engine

import "bytes"

// Stopper cuts generated text at the first of its stop sequences (the
// OpenAI API's `stop`), across token boundaries: text that may still turn
// out to be the start of one is held back until later tokens decide. The
// browser host and the Cloudflare Worker both use it.
type Stopper struct {
	stops   [][]byte
	pending []byte
	out     []byte // Push's result, reused
}

// NewStopper returns a Stopper for the given stop sequences (none: every
// text passes through at once).
func NewStopper(stops []string) *Stopper {
	s := &Stopper{stops: make([][]byte, len(stops))}
	for i, st := range stops {
		s.stops[i] = []byte(st)
	}
	return s
}

// Push adds a token's text and returns what is final now; hit reports that
// a stop sequence matched (out then ends just before it, and nothing more
// may be pushed). out is valid until the next Push (or text itself, with no
// stop sequences): the per-token path allocates nothing once the buffers
// have grown.
func (s *Stopper) Push(text []byte) (out []byte, hit bool) {
	if len(s.stops) == 0 {
		return text, false
	}
	s.pending = append(s.pending, text...)
	cut := -1
	for _, st := range s.stops {
		if i := bytes.Index(s.pending, st); i >= 0 && (cut < 0 || i < cut) {
			cut = i
		}
	}
	if cut >= 0 {
		out = s.pending[:cut]
		s.pending = nil
		return out, true
	}
	// Hold back the longest tail that is a proper prefix of a stop sequence.
	hold := 0
	for _, st := range s.stops {
		for k := min(len(st)-1, len(s.pending)); k > hold; k-- {
			if bytes.HasSuffix(s.pending, st[:k]) {
				hold = k
				break
			}
		}
	}
	n := len(s.pending) - hold
	s.out = append(s.out[:0], s.pending[:n]...)
	s.pending = append(s.pending[:0], s.pending[n:]...)
	return s.out, false
}

// Flush returns the text still held back when the generation ends.
func (s *Stopper) Flush() []byte {
	out := s.pending
	s.pending = nil
	return out
}

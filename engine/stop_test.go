package engine

import "testing"

// The Stopper holds back what may start a stop sequence and cuts at the
// earliest one, across token boundaries.
func TestStopper(t *testing.T) {
	for _, c := range []struct {
		stops  []string
		pieces []string
		want   string
		hit    bool
	}{
		{nil, []string{"ab", "cd"}, "abcd", false},
		{[]string{"bc"}, []string{"a", "b", "c", "d"}, "a", true},
		{[]string{"bc"}, []string{"ab", "x"}, "abx", false},
		{[]string{"END"}, []string{"abEN", "x", "EN"}, "abENxEN", false}, // held "EN" released at the end
		{[]string{"xyz", "b"}, []string{"axy", "zb"}, "a", true},         // the earliest wins
		{[]string{"lo w"}, []string{"hel", "lo", " w"}, "hel", true},     // a match over three tokens
		{[]string{"end"}, []string{"the e", "n"}, "the en", false},       // held back, then flushed
		{[]string{"aab"}, []string{"a", "a", "a", "b"}, "a", true},
		{[]string{"é!"}, []string{"caf", "é", "!"}, "caf", true},
	} {
		s := NewStopper(c.stops)
		var got []byte
		hit := false
		for _, p := range c.pieces {
			out, h := s.Push([]byte(p))
			got = append(got, out...)
			if h {
				hit = true
				break
			}
		}
		if !hit {
			got = append(got, s.Flush()...)
		}
		if string(got) != c.want || hit != c.hit {
			t.Errorf("%q over %q: got %q hit %v, want %q hit %v", c.stops, c.pieces, got, hit, c.want, c.hit)
		}
	}
}

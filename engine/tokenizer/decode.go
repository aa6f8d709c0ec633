package tokenizer

import "unicode/utf8"

// Decoder turns a stream of token ids into text, emitting only complete
// UTF-8: a character whose bytes arrive in several tokens (byte-fallback
// tokens <0xE2><0x96><0x81>) is held back until it is complete. Bytes that
// cannot be part of valid UTF-8 become U+FFFD, one per maximal subpart of an
// ill-formed sequence (the Unicode standard's recommended practice, also
// WHATWG's and Python's), so no byte is dropped silently.
//
// A Decoder is not safe for concurrent use; make one per stream.
type Decoder struct {
	t       *Tokenizer
	pending [utf8.UTFMax]byte // the incomplete character so far
	np      int               // bytes in pending
	need    int               // its expected length
}

// NewDecoder returns a streaming decoder.
func (t *Tokenizer) NewDecoder() *Decoder { return &Decoder{t: t} }

// Reset forgets any held bytes.
func (d *Decoder) Reset() { d.np, d.need = 0, 0 }

// Append appends the text completed by token id to dst. It allocates nothing
// when dst has room.
func (d *Decoder) Append(dst []byte, id int) []byte {
	p := d.t.Piece(id)
	if d.np == 0 && utf8.Valid(p) {
		return append(dst, p...) // the common case
	}
	for _, b := range p {
		dst = d.byte(dst, b)
	}
	return dst
}

// AppendBytes feeds raw bytes through the decoder, as if they were a token's
// piece.
func (d *Decoder) AppendBytes(dst, p []byte) []byte {
	for _, b := range p {
		dst = d.byte(dst, b)
	}
	return dst
}

// Flush appends what is held: an incomplete character becomes U+FFFD.
func (d *Decoder) Flush(dst []byte) []byte {
	if d.np > 0 {
		dst = utf8.AppendRune(dst, utf8.RuneError)
		d.np, d.need = 0, 0
	}
	return dst
}

// Pending reports whether bytes of an incomplete character are held.
func (d *Decoder) Pending() bool { return d.np > 0 }

func (d *Decoder) byte(dst []byte, b byte) []byte {
	if d.np > 0 {
		if continues(d.pending[0], d.np, b) {
			d.pending[d.np] = b
			d.np++
			if d.np == d.need {
				dst = append(dst, d.pending[:d.np]...)
				d.np, d.need = 0, 0
			}
			return dst
		}
		// The held bytes are a maximal invalid subpart; b starts afresh.
		dst = utf8.AppendRune(dst, utf8.RuneError)
		d.np, d.need = 0, 0
	}
	switch {
	case b < 0x80:
		return append(dst, b)
	case b >= 0xC2 && b <= 0xDF:
		d.need = 2
	case b >= 0xE0 && b <= 0xEF:
		d.need = 3
	case b >= 0xF0 && b <= 0xF4:
		d.need = 4
	default: // continuation byte without a lead, C0, C1, F5..FF
		return utf8.AppendRune(dst, utf8.RuneError)
	}
	d.pending[0] = b
	d.np = 1
	return dst
}

// continues reports whether b is a valid byte at position i of a sequence
// that starts with lead (Unicode Table 3-7: no overlongs, no surrogates,
// nothing above U+10FFFF).
func continues(lead byte, i int, b byte) bool {
	lo, hi := byte(0x80), byte(0xBF)
	if i == 1 {
		switch lead {
		case 0xE0:
			lo = 0xA0
		case 0xED:
			hi = 0x9F
		case 0xF0:
			lo = 0x90
		case 0xF4:
			hi = 0x8F
		}
	}
	return b >= lo && b <= hi
}

// Decode returns the text of ids (a convenience over Decoder).
func (t *Tokenizer) Decode(ids []int) string {
	d := t.NewDecoder()
	var buf []byte
	for _, id := range ids {
		buf = d.Append(buf, id)
	}
	return string(d.Flush(buf))
}

package grammar

// The pushdown automaton over bytes. State is the whole configuration: the open containers as a bit stack
// (bit d set: the container at depth d is an object), the lexical mode inside the current value, and a few
// counters. It is 16 bytes and copied freely; nothing in it points anywhere.

const (
	// MaxDepth is the deepest nesting of objects and arrays the grammar accepts. An opening bracket beyond
	// it is rejected, so the stack can never overflow.
	MaxDepth = 64
	// MaxWhitespace is the longest run of consecutive whitespace bytes accepted between tokens (enough for a
	// newline and indentation three levels deep). It keeps a model from emitting whitespace forever.
	MaxWhitespace = 8
)

// Lexical modes.
const (
	mStart     uint8 = iota // before the top-level value: any value
	mStartObj               // before the top-level value, an object or array only (Mask's preference)
	mObjFirst               // after '{': a key or '}'
	mObjKey                 // after ',' in an object: a key
	mColon                  // after a key: ':'
	mValue                  // after ':' or after ',' in an array: a value
	mArrFirst               // after '[': a value or ']'
	mAfter                  // after a value inside a container: ',' or the container's closer
	mDone                   // the top-level value has closed: nothing more
	mStr                    // inside a string (key: an object key); u8need > 0 inside a UTF-8 sequence
	mEsc                    // after '\' in a string
	mHex                    // inside \uXXXX; aux = hex digits still needed
	mMinus                  // after a number's '-'
	mZero                   // after a leading '0' (a complete integer part)
	mInt                    // in the digits of an integer part that started with 1-9
	mDot                    // after '.'
	mFrac                   // in fraction digits
	mExp                    // after 'e' or 'E'
	mExpSign                // after the exponent's sign
	mExpDigits              // in exponent digits
	mLit                    // inside true / false / null; aux = index in lits of the next byte
)

var modeNames = [...]string{"start", "start-object", "object-first", "object-key", "colon", "value", "array-first", "after-value",
	"done", "string", "escape", "unicode-escape", "minus", "zero", "integer", "dot", "fraction", "exponent",
	"exponent-sign", "exponent-digits", "literal"}

// lits holds the three literals back to back; litEnd gives the end of the literal containing index i.
const lits = "truefalsenull"

func litEnd(i uint8) uint8 {
	switch {
	case i < 4:
		return 4
	case i < 9:
		return 9
	}
	return 13
}

// State is the grammar's position in the output. The zero value is not valid; use Grammar.Start.
type State struct {
	stack  uint64 // bit d: the container at depth d is an object (else an array)
	depth  uint8  // open containers
	mode   uint8
	aux    uint8 // mHex: digits left; mLit: next index in lits
	ws     uint8 // consecutive whitespace bytes so far
	u8need uint8 // UTF-8 continuation bytes still needed in a string
	u8lo   uint8 // the allowed range of the next continuation byte
	u8hi   uint8
	key    bool // the current string is an object key
}

// Done reports whether the top-level value has closed: nothing more may follow.
func (st *State) Done() bool { return st.mode == mDone }

// Complete reports whether the output so far is a whole JSON document. It is Done, or a top-level number,
// which is complete at every digit but may still take more.
func (st *State) Complete() bool {
	switch st.mode {
	case mDone:
		return true
	case mZero, mInt, mFrac, mExpDigits:
		return st.depth == 0
	}
	return false
}

// Depth returns the number of open objects and arrays.
func (st *State) Depth() int { return int(st.depth) }

func (st *State) String() string {
	return modeNames[st.mode]
}

func start() State { return State{mode: mStart} }

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// topIsObject reports whether the innermost open container is an object (depth > 0).
func (st *State) topIsObject() bool { return st.stack>>(st.depth-1)&1 == 1 }

func (st *State) push(object bool) bool {
	if st.depth >= MaxDepth {
		return false
	}
	if object {
		st.stack |= 1 << st.depth
		st.mode = mObjFirst
	} else {
		st.stack &^= 1 << st.depth
		st.mode = mArrFirst
	}
	st.depth++
	return true
}

func (st *State) pop() {
	st.depth--
	st.stack &^= 1 << st.depth
	st.valueEnded()
}

// valueEnded moves past a complete value: to what may follow it in its container, or to the end.
func (st *State) valueEnded() {
	if st.depth == 0 {
		st.mode = mDone
	} else {
		st.mode = mAfter
	}
}

// step advances the automaton by one byte, reporting whether the byte is allowed. On false the state is
// unspecified (callers step a copy).
func (st *State) step(c byte) bool {
	switch st.mode {
	case mStr:
		if st.u8need > 0 {
			if c < st.u8lo || c > st.u8hi {
				return false
			}
			st.u8need--
			st.u8lo, st.u8hi = 0x80, 0xBF
			return true
		}
		switch {
		case c == '"':
			if st.key {
				st.mode = mColon
			} else {
				st.valueEnded()
			}
		case c == '\\':
			st.mode = mEsc
		case c < 0x20:
			return false // control characters must be escaped
		case c < 0x80:
		case c < 0xC2:
			return false // a continuation byte or an overlong lead
		case c < 0xE0:
			st.u8need, st.u8lo, st.u8hi = 1, 0x80, 0xBF
		case c == 0xE0:
			st.u8need, st.u8lo, st.u8hi = 2, 0xA0, 0xBF // no overlong 3-byte forms
		case c == 0xED:
			st.u8need, st.u8lo, st.u8hi = 2, 0x80, 0x9F // no UTF-16 surrogates
		case c < 0xF0:
			st.u8need, st.u8lo, st.u8hi = 2, 0x80, 0xBF
		case c == 0xF0:
			st.u8need, st.u8lo, st.u8hi = 3, 0x90, 0xBF // no overlong 4-byte forms
		case c < 0xF4:
			st.u8need, st.u8lo, st.u8hi = 3, 0x80, 0xBF
		case c == 0xF4:
			st.u8need, st.u8lo, st.u8hi = 3, 0x80, 0x8F // nothing above U+10FFFF
		default:
			return false
		}
		return true
	case mEsc:
		switch c {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			st.mode = mStr
		case 'u':
			st.mode, st.aux = mHex, 4
		default:
			return false
		}
		return true
	case mHex:
		if !isHex(c) {
			return false
		}
		if st.aux--; st.aux == 0 {
			st.mode = mStr
		}
		return true
	case mLit:
		if c != lits[st.aux] {
			return false
		}
		if st.aux++; st.aux == litEnd(st.aux-1) {
			st.valueEnded()
		}
		return true
	case mMinus:
		switch {
		case c == '0':
			st.mode = mZero
		case '1' <= c && c <= '9':
			st.mode = mInt
		default:
			return false
		}
		return true
	case mZero, mInt:
		switch {
		case '0' <= c && c <= '9' && st.mode == mInt:
		case c == '.':
			st.mode = mDot
		case c == 'e' || c == 'E':
			st.mode = mExp
		default:
			st.valueEnded() // the number ended; c belongs to what follows
			return st.step(c)
		}
		return true
	case mDot:
		if c < '0' || c > '9' {
			return false
		}
		st.mode = mFrac
		return true
	case mFrac:
		switch {
		case '0' <= c && c <= '9':
		case c == 'e' || c == 'E':
			st.mode = mExp
		default:
			st.valueEnded()
			return st.step(c)
		}
		return true
	case mExp:
		switch {
		case c == '+' || c == '-':
			st.mode = mExpSign
		case '0' <= c && c <= '9':
			st.mode = mExpDigits
		default:
			return false
		}
		return true
	case mExpSign:
		if c < '0' || c > '9' {
			return false
		}
		st.mode = mExpDigits
		return true
	case mExpDigits:
		if '0' <= c && c <= '9' {
			return true
		}
		st.valueEnded()
		return st.step(c)
	case mDone:
		return false
	}

	// Structural modes: whitespace, then punctuation and the first byte of a value.
	if isWS(c) {
		if st.ws >= MaxWhitespace {
			return false
		}
		st.ws++
		return true
	}
	st.ws = 0
	switch st.mode {
	case mStartObj:
		switch c {
		case '{':
			return st.push(true)
		case '[':
			return st.push(false)
		}
		return false
	case mObjFirst, mObjKey:
		switch {
		case c == '"':
			st.mode, st.key = mStr, true
			return true
		case c == '}' && st.mode == mObjFirst:
			st.pop()
			return true
		}
		return false
	case mColon:
		if c != ':' {
			return false
		}
		st.mode = mValue
		return true
	case mAfter:
		switch c {
		case ',':
			if st.topIsObject() {
				st.mode = mObjKey
			} else {
				st.mode = mValue
			}
			return true
		case '}':
			if !st.topIsObject() {
				return false
			}
			st.pop()
			return true
		case ']':
			if st.topIsObject() {
				return false
			}
			st.pop()
			return true
		}
		return false
	}
	// mValue, mArrFirst, mStart: a value.
	switch {
	case c == '{':
		return st.push(true)
	case c == '[':
		return st.push(false)
	case c == '"':
		st.mode, st.key = mStr, false
	case c == '-':
		st.mode = mMinus
	case c == '0':
		st.mode = mZero
	case '1' <= c && c <= '9':
		st.mode = mInt
	case c == 't':
		st.mode, st.aux = mLit, 1
	case c == 'f':
		st.mode, st.aux = mLit, 5
	case c == 'n':
		st.mode, st.aux = mLit, 10
	case c == ']' && st.mode == mArrFirst:
		st.pop()
	default:
		return false
	}
	return true
}

// closing appends to dst the shortest byte string that completes the document from st: it finishes the
// current token with the fewest bytes, then closes every open container. The grammar's budget logic rests
// on it: closing(st) = c0 c1 ... means stepping c0 gives a state whose closing is c1 ...
func (st *State) closing(dst []byte) []byte {
	keyTail := func() {
		if st.key {
			dst = append(dst, ':', '0')
		}
	}
	switch st.mode {
	case mDone:
		return dst
	case mStart:
		return append(dst, '0')
	case mStartObj:
		return append(dst, '{', '}')
	case mColon:
		dst = append(dst, ':', '0')
	case mObjKey:
		dst = append(dst, '"', '"', ':', '0')
	case mValue, mMinus, mDot, mExp, mExpSign:
		dst = append(dst, '0')
	case mStr:
		if st.u8need > 0 {
			dst = append(dst, st.u8lo)
			for range st.u8need - 1 {
				dst = append(dst, 0x80)
			}
		}
		dst = append(dst, '"')
		keyTail()
	case mEsc:
		dst = append(dst, '"', '"')
		keyTail()
	case mHex:
		for range st.aux {
			dst = append(dst, '0')
		}
		dst = append(dst, '"')
		keyTail()
	case mLit:
		dst = append(dst, lits[st.aux:litEnd(st.aux)]...)
	}
	for d := int(st.depth) - 1; d >= 0; d-- {
		if st.stack>>d&1 == 1 {
			dst = append(dst, '}')
		} else {
			dst = append(dst, ']')
		}
	}
	return dst
}

package gguf

// Split models, as llama.cpp's gguf-split writes them: one model in several
// GGUF files, its shards, named PREFIX-00001-of-00003.gguf,
// PREFIX-00002-of-00003.gguf, ... Each shard is a valid GGUF file with its
// own header, tensor infos and data section (a tensor's offset is relative
// to its own shard's data section) and holds the keys
//
//	split.no             u16  the shard's index, from 0 (its name counts from 1)
//	split.count          u16  the number of shards
//	split.tensors.count  i32  the number of tensors in all the shards together
//
// The first shard holds the model's metadata; llama.cpp reads no other key of
// the others. picoLM's split writer (gguf/tools/split) adds picolm.split.id to
// every shard, one value per set, so that shards of two models with the same
// layout are told apart; llama.cpp ignores it.
//
// Join checks a set before it is used as one model: every shard present and
// in order (split.no equal to its position and to the number in its name),
// the same split.count everywhere and equal to the number of files, names
// with one prefix, split.tensors.count equal to the tensors found, no tensor
// in two shards, and the same model throughout (picolm.split.id, and any
// general.* key a later shard holds equal to the first shard's).

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// The split keys (llama.cpp's LLM_KV_SPLIT_*) and picoLM's set id.
const (
	KeySplitNo      = "split.no"
	KeySplitCount   = "split.count"
	KeySplitTensors = "split.tensors.count"
	KeySplitID      = "picolm.split.id"
)

// MaxShards is the largest split.count: the key is a u16.
const MaxShards = 1<<16 - 1

// Errors of split models, wrapped with the shards' names.
var (
	ErrSplit        = errors.New("bad split model")
	ErrShardMissing = errors.New("missing shard")
)

// ShardName returns the name of shard no (from 0) of count with the given
// prefix: PREFIX-00001-of-00003.gguf for no 0 of 3 (llama_split_path).
func ShardName(prefix string, no, count int) string {
	return fmt.Sprintf("%s-%05d-of-%05d.gguf", prefix, no+1, count)
}

// ParseShardName splits a shard's name (or path, or URL path) into its
// prefix, its index from 0 and the shard count. ok is false unless the name
// ends in -NNNNN-of-MMMMM.gguf (five digits each, 1 <= NNNNN <= MMMMM <=
// MaxShards) after a non-empty prefix.
func ParseShardName(name string) (prefix string, no, count int, ok bool) {
	const tail = len("-00001-of-00003.gguf")
	if len(name) <= tail || !strings.HasSuffix(name, ".gguf") {
		return "", 0, 0, false
	}
	s := name[len(name)-tail:]
	if s[0] != '-' || s[6:10] != "-of-" {
		return "", 0, 0, false
	}
	digits := func(d string) (int, bool) {
		n := 0
		for _, c := range []byte(d) {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = 10*n + int(c-'0')
		}
		return n, true
	}
	a, ok1 := digits(s[1:6])
	b, ok2 := digits(s[10:15])
	if !ok1 || !ok2 || a < 1 || a > b || b > MaxShards {
		return "", 0, 0, false
	}
	return name[:len(name)-tail], a - 1, b, true
}

// SplitKeys returns f's split.no and split.count. ok is false when f is not
// a shard: no split.count, or 0 (what llama-gguf-split --merge leaves). A
// split.count that is not an integer up to MaxShards, or a missing or
// out-of-range split.no, is an error (ErrSplit).
func (f *File) SplitKeys() (no, count int, ok bool, err error) {
	v, has := f.Lookup(KeySplitCount)
	if !has {
		return 0, 0, false, nil
	}
	c, isInt := v.Uint()
	if !isInt || c > MaxShards {
		return 0, 0, false, fmt.Errorf("%w: %s is %#v, want an integer from 0 to %d", ErrSplit, KeySplitCount, v, MaxShards)
	}
	if c == 0 {
		return 0, 0, false, nil
	}
	v, has = f.Lookup(KeySplitNo)
	if !has {
		return 0, 0, false, fmt.Errorf("%w: %s = %d but no %s", ErrSplit, KeySplitCount, c, KeySplitNo)
	}
	n, isInt := v.Uint()
	if !isInt || n >= c {
		return 0, 0, false, fmt.Errorf("%w: %s is %#v, want an integer below %s = %d", ErrSplit, KeySplitNo, v, KeySplitCount, c)
	}
	return int(n), int(c), true, nil
}

// Join checks that shards, named names (paths, URLs or file names; nil or ""
// for unnamed), are a complete split model in order and returns it as one
// File: the first shard's header and metadata, every shard's tensors (their
// Shard set), Shards the shards. Close closes them all. A file that is not
// a shard, alone, is returned as it is, and so is a set of one.
func Join(shards []*File, names []string) (*File, error) {
	if len(shards) == 0 {
		return nil, fmt.Errorf("gguf: %w: no files", ErrSplit)
	}
	if names != nil && len(names) != len(shards) {
		return nil, fmt.Errorf("gguf: %w: %d files but %d names", ErrSplit, len(shards), len(names))
	}
	name := func(i int) string {
		if names != nil && names[i] != "" {
			return names[i]
		}
		return "file " + strconv.Itoa(i+1)
	}
	named := func(i int) bool { return names != nil && names[i] != "" }
	fail := func(format string, args ...any) error {
		return fmt.Errorf("gguf: %w: "+format, append([]any{ErrSplit}, args...)...)
	}

	first := shards[0]
	no0, count, isSplit, err := first.SplitKeys()
	if err != nil {
		return nil, fmt.Errorf("gguf: %s: %w", name(0), err)
	}
	if !isSplit {
		if len(shards) == 1 {
			return first, nil
		}
		return nil, fail("%s is not a shard of a split model (it has no %s), but %d files were given", name(0), KeySplitCount, len(shards))
	}
	// The names: one prefix, each one's numbers equal to its keys.
	prefix, hasPrefix := "", false
	if named(0) {
		p, no, c, ok := ParseShardName(names[0])
		switch {
		case ok && (no != no0 || c != count):
			return nil, fail("%s is named as shard %d of %d but holds shard %d of %d (%s, %s)", name(0), no+1, c, no0+1, count, KeySplitNo, KeySplitCount)
		case ok:
			prefix, hasPrefix = p, true
		case count > 1:
			return nil, fail("%s is shard %d of %d of a split model, but its name does not end in -%05d-of-%05d.gguf, so its other shards cannot be named", name(0), no0+1, count, no0+1, count)
		}
	}
	shardName := func(i int) string {
		if hasPrefix {
			return ShardName(prefix, i, count)
		}
		return "shard " + strconv.Itoa(i+1) + " of " + strconv.Itoa(count)
	}
	if no0 != 0 {
		return nil, fail("%s is shard %d of %d, not the first: a split model is opened from its first shard, %s", name(0), no0+1, count, shardName(0))
	}
	if count == 1 && len(shards) == 1 {
		return first, nil
	}
	if len(shards) > count {
		return nil, fail("%d files given but %s says the model has %d shards (%s)", len(shards), name(0), count, KeySplitCount)
	}

	idKey, hasID := first.Lookup(KeySplitID)
	total := 0
	for _, s := range shards {
		total += len(s.Tensors)
	}
	want, err := tensorsCount(first)
	if err != nil {
		return nil, fmt.Errorf("gguf: %s: %w", name(0), err)
	}
	if want < 0 {
		return nil, fail("%s has no %s", name(0), KeySplitTensors)
	}

	j := &File{
		Version: first.Version, Alignment: first.Alignment, DataOffset: first.DataOffset,
		KV: first.KV, data: first.data, keys: first.keys,
		Shards:  make([]*File, 0, count),
		Tensors: make([]TensorInfo, 0, total),
		names:   make(map[string]int, total),
	}
	for i, s := range shards {
		no, c, ok, err := s.SplitKeys()
		if err != nil {
			return nil, fmt.Errorf("gguf: %s: %w", name(i), err)
		}
		if !ok {
			return nil, fail("%s is not a shard of a split model (it has no %s); %s is shard 1 of %d", name(i), KeySplitCount, name(0), count)
		}
		if c != count {
			return nil, fail("%s says the model has %d shards, %s says %d (%s): shards of different split models", name(i), c, name(0), count, KeySplitCount)
		}
		if named(i) && i > 0 {
			p, pno, pc, ok := ParseShardName(names[i])
			switch {
			case !ok:
				return nil, fail("%s holds shard %d of %d, but its name does not end in -%05d-of-%05d.gguf", name(i), no+1, count, no+1, count)
			case hasPrefix && p != prefix:
				return nil, fail("%s and %s are named as shards of different models (%q, %q)", name(0), name(i), prefix, p)
			case pno != no || pc != c:
				return nil, fail("%s is named as shard %d of %d but holds shard %d of %d (%s, %s)", name(i), pno+1, pc, no+1, c, KeySplitNo, KeySplitCount)
			}
		}
		switch {
		case no > i:
			return nil, fmt.Errorf("gguf: %w: %s (shard %d of %d) is missing: %s holds shard %d", ErrShardMissing, shardName(i), i+1, count, name(i), no+1)
		case no < i:
			return nil, fail("%s holds shard %d of %d, which %s holds too", name(i), no+1, count, name(no))
		}
		if i > 0 {
			n, err := tensorsCount(s)
			if err != nil {
				return nil, fmt.Errorf("gguf: %s: %w", name(i), err)
			}
			if n >= 0 && n != want {
				return nil, fail("%s says the model has %d tensors, %s says %d (%s): shards of different split models", name(i), n, name(0), want, KeySplitTensors)
			}
			// The same model: the set id, and the identity keys a later
			// shard repeats.
			id, has := s.Lookup(KeySplitID)
			if has != hasID || (has && !id.Equal(idKey)) {
				return nil, fail("%s and %s are shards of different split models (%s %s and %s)", name(0), name(i), KeySplitID, describeID(idKey, hasID), describeID(id, has))
			}
			for _, kv := range s.KV {
				if !strings.HasPrefix(kv.Key, "general.") {
					continue
				}
				if v, ok := first.Lookup(kv.Key); !ok || !v.Equal(kv.Value) {
					return nil, fail("%s and %s are shards of different models: %s is %#v in %s and %s in %s", name(0), name(i), kv.Key, kv.Value, name(i), describeKey(first, kv.Key), name(0))
				}
			}
		}
		for _, t := range s.Tensors {
			if k, dup := j.names[t.Name]; dup {
				return nil, fail("tensor %q is in both %s and %s", t.Name, name(j.Tensors[k].Shard), name(i))
			}
			t.Shard = i
			j.names[t.Name] = len(j.Tensors)
			j.Tensors = append(j.Tensors, t)
		}
		j.Shards = append(j.Shards, s)
		j.size += s.size
	}
	if len(shards) < count {
		missing := make([]string, 0, 4)
		for i := len(shards); i < count && len(missing) < 4; i++ {
			missing = append(missing, shardName(i))
		}
		more := ""
		if n := count - len(shards) - len(missing); n > 0 {
			more = fmt.Sprintf(" and %d more", n)
		}
		return nil, fmt.Errorf("gguf: %w: %s%s of the %d shards of %s", ErrShardMissing, strings.Join(missing, ", "), more, count, name(0))
	}
	if total != want {
		return nil, fail("%s says the model has %d tensors (%s), the %d shards hold %d", name(0), want, KeySplitTensors, count, total)
	}
	j.release = func() error {
		var errs []error
		for _, s := range j.Shards {
			errs = append(errs, s.Close())
		}
		return errors.Join(errs...)
	}
	return j, nil
}

// tensorsCount reads split.tensors.count: -1 when absent.
func tensorsCount(f *File) (int, error) {
	v, ok := f.Lookup(KeySplitTensors)
	if !ok {
		return -1, nil
	}
	n, isInt := v.Uint()
	if !isInt || n > 1<<31-1 {
		return 0, fmt.Errorf("%w: %s is %#v, want a non-negative int32", ErrSplit, KeySplitTensors, v)
	}
	return int(n), nil
}

func describeID(v Value, ok bool) string {
	if !ok {
		return "absent"
	}
	return v.GoString()
}

func describeKey(f *File, key string) string {
	if v, ok := f.Lookup(key); ok {
		return v.GoString()
	}
	return "absent"
}

// Equal reports whether v and w are the same type and value.
func (v Value) Equal(w Value) bool {
	return v.typ == w.typ && v.elem == w.elem && v.num == w.num && v.str == w.str && v.n == w.n && string(v.raw) == string(w.raw)
}

// checkSizes checks a set's sizes: 1 to MaxShards of them, each positive.
func checkSizes(sizes []int64, names []string) error {
	if len(sizes) == 0 || len(sizes) > MaxShards {
		return fmt.Errorf("gguf: %w: %d files (1 to %d)", ErrSplit, len(sizes), MaxShards)
	}
	if names != nil && len(names) != len(sizes) {
		return fmt.Errorf("gguf: %w: %d files but %d names", ErrSplit, len(sizes), len(names))
	}
	for i, n := range sizes {
		if n <= 0 {
			return fmt.Errorf("gguf: %w: file %d has size %d", ErrSplit, i+1, n)
		}
	}
	return nil
}

func nameOf(names []string, i int) string {
	if names != nil && names[i] != "" {
		return names[i]
	}
	return "file " + strconv.Itoa(i+1)
}

// ParseSet parses a split model whose shards are laid end to end in b, in
// order, shard i of sizes[i] bytes (names for the messages and the naming
// checks, or nil), and joins them (Join). The tensors' Data are views into b.
// One size is one file, which need not be a shard.
func ParseSet(b []byte, sizes []int64, names []string) (*File, error) {
	if err := checkSizes(sizes, names); err != nil {
		return nil, err
	}
	total := int64(0)
	for _, n := range sizes {
		if n > int64(len(b))-total {
			return nil, fmt.Errorf("gguf: %w: the files' sizes add up to more than the %d bytes given", ErrSplit, len(b))
		}
		total += n
	}
	if total != int64(len(b)) {
		return nil, fmt.Errorf("gguf: %w: the files' sizes add up to %d bytes, %d given", ErrSplit, total, len(b))
	}
	files := make([]*File, len(sizes))
	off := int64(0)
	for i, n := range sizes {
		f, err := Parse(b[off : off+n : off+n])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", nameOf(names, i), err)
		}
		files[i] = f
		off += n
	}
	return Join(files, names)
}

// ParseHeaderSet is ParseSet through ParseHeader: the shards are laid end to
// end in r, and a tensor's data is at File.Pos in r.
func ParseHeaderSet(r io.ReaderAt, sizes []int64, names []string) (*File, error) {
	if err := checkSizes(sizes, names); err != nil {
		return nil, err
	}
	files := make([]*File, len(sizes))
	off := int64(0)
	for i, n := range sizes {
		f, err := ParseHeader(io.NewSectionReader(r, off, n), n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", nameOf(names, i), err)
		}
		files[i] = f
		off += n
	}
	return Join(files, names)
}

// ParseHeaderPrefixSet is ParseHeaderSet from each shard's prefix
// (ParseHeaderPrefix): nothing else is read.
func ParseHeaderPrefixSet(prefixes [][]byte, sizes []int64, names []string) (*File, error) {
	if err := checkSizes(sizes, names); err != nil {
		return nil, err
	}
	if len(prefixes) != len(sizes) {
		return nil, fmt.Errorf("gguf: %w: %d prefixes for %d files", ErrSplit, len(prefixes), len(sizes))
	}
	files := make([]*File, len(sizes))
	for i, n := range sizes {
		f, err := ParseHeaderPrefix(prefixes[i], n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", nameOf(names, i), err)
		}
		files[i] = f
	}
	return Join(files, names)
}

// OpenSet opens the GGUF file at path (Open) and, when it is a shard of a
// split model, all the other shards, found by name beside it, as one File
// (Join). Every shard is checked to exist before any other is opened, so a
// missing one is reported (by name) before anything is read or mapped.
func OpenSet(path string) (*File, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	no, count, ok, err := f.SplitKeys()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("gguf: %s: %w", path, err)
	}
	if !ok || count == 1 {
		j, err := Join([]*File{f}, []string{path})
		if err != nil {
			f.Close()
		}
		return j, err
	}
	prefix, pno, pc, named := ParseShardName(path)
	if !named || pno != no || pc != count {
		f.Close()
		return nil, fmt.Errorf("gguf: %w: %s is shard %d of %d of a split model, but its name does not end in -%05d-of-%05d.gguf, so its other shards cannot be found",
			ErrSplit, path, no+1, count, no+1, count)
	}
	paths := make([]string, count)
	var missing []string
	total := f.Size()
	for i := range paths {
		paths[i] = ShardName(prefix, i, count)
		if i == no {
			continue
		}
		st, err := os.Stat(paths[i])
		switch {
		case errors.Is(err, fs.ErrNotExist):
			missing = append(missing, paths[i])
		case err != nil:
			f.Close()
			return nil, err
		default:
			total += st.Size()
		}
	}
	if len(missing) > 0 {
		f.Close()
		more := ""
		if len(missing) > 4 {
			more = fmt.Sprintf(" and %d more", len(missing)-4)
			missing = missing[:4]
		}
		return nil, fmt.Errorf("gguf: %w: %s%s of the %d shards of %s do not exist", ErrShardMissing, strings.Join(missing, ", "), more, count, path)
	}
	if runtime.GOARCH == "wasm" && total > MaxReadBytes {
		f.Close()
		return nil, fmt.Errorf("gguf: %s: its %d shards are %d bytes, more than a wasm32 memory can hold (at most %d)", path, count, total, int64(MaxReadBytes))
	}
	files := make([]*File, count)
	files[no] = f
	closeAll := func() {
		for _, g := range files {
			if g != nil {
				g.Close()
			}
		}
	}
	for i := range files {
		if i == no {
			continue
		}
		if files[i], err = Open(paths[i]); err != nil {
			closeAll()
			return nil, err
		}
	}
	j, err := Join(files, paths)
	if err != nil {
		closeAll()
		return nil, err
	}
	return j, nil
}

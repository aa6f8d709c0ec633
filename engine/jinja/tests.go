package jinja

import (
	"fmt"
	"strings"
)

// runTest runs the test of "v is name(args)".
func runTest(name string, v value, args []value) (bool, error) {
	t, ok := lookup(tests, name)
	if !ok {
		return false, fmt.Errorf("%w: unknown test %q", ErrRender, name)
	}
	return t(v, call{name, args})
}

// A test tells whether v passes; c is the test's name and arguments.
type test func(v value, c call) (bool, error)

// tests are Jinja's tests by name, with their aliases.
var tests = []entry[test]{
	{"defined", func(v value, _ call) (bool, error) { return !isUndefined(v), nil }},
	{"undefined", func(v value, _ call) (bool, error) { return isUndefined(v), nil }},
	{"none", func(v value, _ call) (bool, error) { return v == nil, nil }},
	{"string", isA[string]},
	{"integer", isA[int64]},
	{"float", isA[float64]},
	{"boolean", isA[bool]},
	{"callable", isA[*macro]},
	{"number", number},
	{"true", func(v value, _ call) (bool, error) { b, ok := v.(bool); return ok && b, nil }},
	{"false", func(v value, _ call) (bool, error) { b, ok := v.(bool); return ok && !b, nil }},
	{"mapping", func(v value, _ call) (bool, error) { d, ok := v.(*dict); return ok && !d.ns, nil }},
	{"iterable", sequence},
	{"sequence", sequence},
	{"lower", func(v value, _ call) (bool, error) { s, ok := v.(string); return ok && s == strings.ToLower(s), nil }},
	{"upper", func(v value, _ call) (bool, error) { s, ok := v.(string); return ok && s == strings.ToUpper(s), nil }},

	{"even", parity},
	{"odd", parity},
	{"divisibleby", divisibleBy},
	{"in", in},

	{"equalto", equalTo}, {"eq", equalTo}, {"==", equalTo}, {"sameas", equalTo},
	{"ne", notEqualTo}, {"!=", notEqualTo},
	{"lt", lessThan}, {"<", lessThan}, {"lessthan", lessThan},
	{"gt", greaterThan}, {">", greaterThan}, {"greaterthan", greaterThan},
	{"le", atMost}, {"<=", atMost},
	{"ge", atLeast}, {">=", atLeast},
}

// isA tests the value's type.
func isA[T any](v value, _ call) (bool, error) {
	_, ok := v.(T)
	return ok, nil
}

func number(v value, _ call) (bool, error) {
	switch v.(type) {
	case int64, float64:
		return true, nil
	}
	return false, nil
}

func sequence(v value, _ call) (bool, error) {
	switch v.(type) {
	case string, []value, *dict:
		return true, nil
	}
	return false, nil
}

// parity is the even and odd tests.
func parity(v value, c call) (bool, error) {
	n, ok := v.(int64)
	if !ok {
		return false, fmt.Errorf("%w: %q test on %s", ErrRender, c.name, typeName(v))
	}
	return (n%2 == 0) == (c.name == "even"), nil
}

func divisibleBy(v value, c call) (bool, error) {
	a, err := c.one()
	if err != nil {
		return false, err
	}
	n, ok1 := v.(int64)
	d, ok2 := a.(int64)
	if !ok1 || !ok2 || d == 0 {
		return false, fmt.Errorf("%w: bad divisibleby", ErrRender)
	}
	return n%d == 0, nil
}

// in: v is in the argument (a string, list or dict).
func in(v value, c call) (bool, error) {
	a, err := c.one()
	if err != nil {
		return false, err
	}
	return contains(a, v)
}

func equalTo(v value, c call) (bool, error) {
	a, err := c.one()
	if err != nil {
		return false, err
	}
	return equal(v, a), nil
}

func notEqualTo(v value, c call) (bool, error) {
	eq, err := equalTo(v, c)
	return !eq && err == nil, err
}

// The ordering tests pass when compare(v, argument) is in [lo, hi].
func lessThan(v value, c call) (bool, error)    { return ordered(v, c, -1, -1) }
func greaterThan(v value, c call) (bool, error) { return ordered(v, c, 1, 1) }
func atMost(v value, c call) (bool, error)      { return ordered(v, c, -1, 0) }
func atLeast(v value, c call) (bool, error)     { return ordered(v, c, 0, 1) }

func ordered(v value, c call, lo, hi int) (bool, error) {
	a, err := c.one()
	if err != nil {
		return false, err
	}
	r, err := compare(v, a)
	if err != nil {
		return false, err
	}
	return lo <= r && r <= hi, nil
}

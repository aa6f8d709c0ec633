package jinja

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Limits that keep a hostile template from hanging or exhausting memory.
const (
	maxOutput = 8 << 20 // bytes of rendered text (and of any string value)
	maxSteps  = 1 << 18 // loop iterations and macro calls, in total
	maxCalls  = 64      // nested macro calls
)

type macro struct {
	*macroNode
}

type scope struct {
	vars   map[string]value
	parent *scope
}

func (s *scope) lookup(name string) (value, bool) {
	for ; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			return v, true
		}
	}
	return nil, false
}

type state struct {
	sc    *scope
	steps int
	calls int
}

// control flow signals
var (
	errBreak    = errors.New("break")
	errContinue = errors.New("continue")
)

func (st *state) step() error {
	st.steps++
	if st.steps > maxSteps {
		return fmt.Errorf("%w: template runs too long", ErrRender)
	}
	return nil
}

func (st *state) render(nodes []node, out *strings.Builder) error {
	for _, n := range nodes {
		if out.Len() > maxOutput {
			return fmt.Errorf("%w: output exceeds %d bytes", ErrRender, maxOutput)
		}
		switch n := n.(type) {
		case *textNode:
			out.WriteString(n.s)
		case *outputNode:
			v, err := st.eval(n.e)
			if err != nil {
				return err
			}
			out.WriteString(str(v))
		case *ifNode:
			done := false
			for i, c := range n.conds {
				v, err := st.eval(c)
				if err != nil {
					return err
				}
				if truth(v) {
					if err := st.render(n.bodies[i], out); err != nil {
						return err
					}
					done = true
					break
				}
			}
			if !done && n.els != nil {
				if err := st.render(n.els, out); err != nil {
					return err
				}
			}
		case *forNode:
			if err := st.renderFor(n, out); err != nil {
				return err
			}
		case *setNode:
			var v value
			if n.body != nil {
				var b strings.Builder
				if err := st.render(n.body, &b); err != nil {
					return err
				}
				v = b.String()
			} else {
				var err error
				if v, err = st.eval(n.e); err != nil {
					return err
				}
			}
			if n.attr != "" {
				obj, _ := st.sc.lookup(n.names[0])
				d, ok := obj.(*dict)
				if !ok || !d.ns {
					return fmt.Errorf("%w: cannot set attribute %q of %s %q (only namespace() objects)", ErrRender, n.attr, typeName(obj), n.names[0])
				}
				d.set(n.attr, v)
				continue
			}
			if len(n.names) == 1 {
				st.sc.vars[n.names[0]] = v
				continue
			}
			l, ok := v.([]value)
			if !ok || len(l) != len(n.names) {
				return fmt.Errorf("%w: cannot unpack %s into %d names", ErrRender, typeName(v), len(n.names))
			}
			for i, name := range n.names {
				st.sc.vars[name] = l[i]
			}
		case *macroNode:
			st.sc.vars[n.name] = &macro{n}
		case breakNode:
			return errBreak
		case continueNode:
			return errContinue
		}
	}
	return nil
}

func (st *state) renderFor(n *forNode, out *strings.Builder) error {
	it, err := st.eval(n.iter)
	if err != nil {
		return err
	}
	var items []value
	switch x := it.(type) {
	case []value:
		items = x
	case *dict:
		for _, k := range x.keys {
			items = append(items, k)
		}
	case string:
		for _, r := range x {
			items = append(items, string(r))
		}
	case undefinedT, nil:
	default:
		return fmt.Errorf("%w: cannot loop over %s", ErrRender, typeName(it))
	}
	outer := st.sc
	defer func() { st.sc = outer }()
	bind := func(sc *scope, item value) error {
		if len(n.vars) == 1 {
			sc.vars[n.vars[0]] = item
			return nil
		}
		l, ok := item.([]value)
		if !ok || len(l) != len(n.vars) {
			return fmt.Errorf("%w: cannot unpack %s into %d loop variables", ErrRender, typeName(item), len(n.vars))
		}
		for i, v := range n.vars {
			sc.vars[v] = l[i]
		}
		return nil
	}
	if n.cond != nil { // the loop filter runs before loop.* is known
		var kept []value
		for _, item := range items {
			if err := st.step(); err != nil {
				return err
			}
			st.sc = &scope{vars: map[string]value{}, parent: outer}
			if err := bind(st.sc, item); err != nil {
				return err
			}
			c, err := st.eval(n.cond)
			if err != nil {
				return err
			}
			if truth(c) {
				kept = append(kept, item)
			}
		}
		items = kept
	}
	if len(items) == 0 {
		st.sc = outer
		return st.render(n.els, out)
	}
	for i, item := range items {
		if err := st.step(); err != nil {
			return err
		}
		st.sc = &scope{vars: map[string]value{}, parent: outer}
		if err := bind(st.sc, item); err != nil {
			return err
		}
		loop := newDict()
		loop.set("index", int64(i+1))
		loop.set("index0", int64(i))
		loop.set("revindex", int64(len(items)-i))
		loop.set("revindex0", int64(len(items)-i-1))
		loop.set("first", i == 0)
		loop.set("last", i == len(items)-1)
		loop.set("length", int64(len(items)))
		if i > 0 {
			loop.set("previtem", items[i-1])
		}
		if i+1 < len(items) {
			loop.set("nextitem", items[i+1])
		}
		st.sc.vars["loop"] = loop
		err := st.render(n.body, out)
		if err == errBreak {
			break
		}
		if err != nil && err != errContinue {
			return err
		}
	}
	return nil
}

func (st *state) eval(e expr) (value, error) {
	switch e := e.(type) {
	case *literal:
		return e.v, nil
	case *nameRef:
		if v, ok := st.sc.lookup(e.name); ok {
			return v, nil
		}
		return undefined, nil
	case *getAttr:
		obj, err := st.eval(e.obj)
		if err != nil {
			return nil, err
		}
		if d, ok := obj.(*dict); ok {
			if v, ok := d.get(e.name); ok {
				return v, nil
			}
		}
		return undefined, nil
	case *getItem:
		obj, err := st.eval(e.obj)
		if err != nil {
			return nil, err
		}
		idx, err := st.eval(e.idx)
		if err != nil {
			return nil, err
		}
		return index(obj, idx), nil
	case *sliceOp:
		return st.evalSlice(e)
	case *listLit:
		l := make([]value, 0, len(e.items))
		for _, x := range e.items {
			v, err := st.eval(x)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		return l, nil
	case *dictLit:
		d := newDict()
		for i := range e.keys {
			k, err := st.eval(e.keys[i])
			if err != nil {
				return nil, err
			}
			ks, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("%w: dict keys must be strings, not %s", ErrRender, typeName(k))
			}
			v, err := st.eval(e.vals[i])
			if err != nil {
				return nil, err
			}
			d.set(ks, v)
		}
		return d, nil
	case *condOp:
		c, err := st.eval(e.cond)
		if err != nil {
			return nil, err
		}
		if truth(c) {
			return st.eval(e.then)
		}
		if e.els == nil {
			return undefined, nil
		}
		return st.eval(e.els)
	case *unaryOp:
		v, err := st.eval(e.e)
		if err != nil {
			return nil, err
		}
		switch e.op {
		case "not":
			return !truth(v), nil
		case "-":
			switch x := v.(type) {
			case int64:
				return -x, nil
			case float64:
				return -x, nil
			}
			return nil, fmt.Errorf("%w: bad operand for unary -: %s", ErrRender, typeName(v))
		default: // +
			if _, ok := toFloat(v); !ok {
				return nil, fmt.Errorf("%w: bad operand for unary +: %s", ErrRender, typeName(v))
			}
			return v, nil
		}
	case *binaryOp:
		return st.evalBinary(e)
	case *testOp:
		v, err := st.eval(e.e)
		if err != nil {
			return nil, err
		}
		args, err := st.evalList(e.args)
		if err != nil {
			return nil, err
		}
		r, err := runTest(e.name, v, args)
		if err != nil {
			return nil, err
		}
		return r != e.neg, nil
	case *filterOp:
		v, err := st.eval(e.e)
		if err != nil {
			return nil, err
		}
		a, err := st.evalArgs(e.args, e.kw)
		if err != nil {
			return nil, err
		}
		return applyFilter(e.name, v, a)
	case *callOp:
		return st.evalCall(e)
	}
	return nil, fmt.Errorf("%w: unknown expression %T", ErrRender, e)
}

func (st *state) evalList(es []expr) ([]value, error) {
	if len(es) == 0 {
		return nil, nil
	}
	out := make([]value, len(es))
	for i, x := range es {
		v, err := st.eval(x)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// evalArgs evaluates a call's arguments.
func (st *state) evalArgs(pos []expr, kw []kwArg) (args, error) {
	var a args
	var err error
	if a.pos, err = st.evalList(pos); err != nil {
		return args{}, err
	}
	for _, k := range kw {
		v, err := st.eval(k.e)
		if err != nil {
			return args{}, err
		}
		a.kw = append(a.kw, kwValue{k.name, v})
	}
	return a, nil
}

func index(obj, idx value) value {
	switch x := obj.(type) {
	case *dict:
		if k, ok := idx.(string); ok {
			if v, ok := x.get(k); ok {
				return v
			}
		}
	case []value:
		if i, ok := idx.(int64); ok {
			if i < 0 {
				i += int64(len(x))
			}
			if i >= 0 && i < int64(len(x)) {
				return x[i]
			}
		}
	case string:
		if i, ok := idx.(int64); ok {
			r := []rune(x)
			if i < 0 {
				i += int64(len(r))
			}
			if i >= 0 && i < int64(len(r)) {
				return string(r[i])
			}
		}
	}
	return undefined
}

func (st *state) evalSlice(e *sliceOp) (value, error) {
	obj, err := st.eval(e.obj)
	if err != nil {
		return nil, err
	}
	var n int
	var runes []rune
	switch x := obj.(type) {
	case []value:
		n = len(x)
	case string:
		runes = []rune(x)
		n = len(runes)
	default:
		return nil, fmt.Errorf("%w: cannot slice %s", ErrRender, typeName(obj))
	}
	bound := func(ex expr, def int64) (int64, error) {
		if ex == nil {
			return def, nil
		}
		v, err := st.eval(ex)
		if err != nil {
			return 0, err
		}
		if v == nil || isUndefined(v) {
			return def, nil
		}
		i, ok := v.(int64)
		if !ok {
			return 0, fmt.Errorf("%w: slice indices must be integers, not %s", ErrRender, typeName(v))
		}
		return i, nil
	}
	step, err := bound(e.step, 1)
	if err != nil {
		return nil, err
	}
	if step == 0 {
		return nil, fmt.Errorf("%w: slice step cannot be zero", ErrRender)
	}
	var lo, hi int64
	if step > 0 {
		lo, hi = 0, int64(n)
	} else {
		lo, hi = int64(n)-1, -1
	}
	clamp := func(i int64, forStart bool) int64 {
		if i < 0 {
			i += int64(n)
			if i < 0 {
				if step < 0 {
					return -1
				}
				return 0
			}
		}
		if i >= int64(n) {
			if step < 0 {
				return int64(n) - 1
			}
			return int64(n)
		}
		return i
	}
	if e.lo != nil {
		v, err := bound(e.lo, lo)
		if err != nil {
			return nil, err
		}
		if v != lo {
			lo = clamp(v, true)
		}
	}
	if e.hi != nil {
		v, err := bound(e.hi, hi)
		if err != nil {
			return nil, err
		}
		if v != hi || step > 0 {
			hi = clamp(v, false)
		}
	}
	var idx []int64
	if step > 0 {
		for i := lo; i < hi; i += step {
			idx = append(idx, i)
		}
	} else {
		for i := lo; i > hi; i += step {
			idx = append(idx, i)
		}
	}
	if l, ok := obj.([]value); ok {
		out := make([]value, 0, len(idx))
		for _, i := range idx {
			out = append(out, l[i])
		}
		return out, nil
	}
	var b strings.Builder
	for _, i := range idx {
		b.WriteRune(runes[i])
	}
	return b.String(), nil
}

func (st *state) evalBinary(e *binaryOp) (value, error) {
	l, err := st.eval(e.l)
	if err != nil {
		return nil, err
	}
	switch e.op {
	case "and":
		if !truth(l) {
			return l, nil
		}
		return st.eval(e.r)
	case "or":
		if truth(l) {
			return l, nil
		}
		return st.eval(e.r)
	}
	r, err := st.eval(e.r)
	if err != nil {
		return nil, err
	}
	switch e.op {
	case "==":
		return equal(l, r), nil
	case "!=":
		return !equal(l, r), nil
	case "<", ">", "<=", ">=":
		c, err := compare(l, r)
		if err != nil {
			return nil, err
		}
		switch e.op {
		case "<":
			return c < 0, nil
		case ">":
			return c > 0, nil
		case "<=":
			return c <= 0, nil
		}
		return c >= 0, nil
	case "in", "not in":
		in, err := contains(r, l)
		if err != nil {
			return nil, err
		}
		return in == (e.op == "in"), nil
	case "~":
		s := str(l) + str(r)
		if len(s) > maxOutput {
			return nil, fmt.Errorf("%w: string too long", ErrRender)
		}
		return s, nil
	case "+":
		switch x := l.(type) {
		case string:
			if y, ok := r.(string); ok {
				if len(x)+len(y) > maxOutput {
					return nil, fmt.Errorf("%w: string too long", ErrRender)
				}
				return x + y, nil
			}
		case []value:
			if y, ok := r.([]value); ok {
				out := make([]value, 0, len(x)+len(y))
				return append(append(out, x...), y...), nil
			}
		}
	}
	return arith(e.op, l, r)
}

func arith(op string, l, r value) (value, error) {
	if s, ok := l.(string); ok && op == "*" {
		if n, ok := r.(int64); ok {
			if n <= 0 {
				return "", nil
			}
			if int64(len(s))*n > maxOutput {
				return nil, fmt.Errorf("%w: string too long", ErrRender)
			}
			return strings.Repeat(s, int(n)), nil
		}
	}
	li, lInt := l.(int64)
	ri, rInt := r.(int64)
	lf, lok := toFloat(l)
	rf, rok := toFloat(r)
	if _, b := l.(bool); b {
		lok = false
	}
	if _, b := r.(bool); b {
		rok = false
	}
	if !lok || !rok {
		return nil, fmt.Errorf("%w: unsupported operand types for %s: %s and %s", ErrRender, op, typeName(l), typeName(r))
	}
	both := lInt && rInt
	switch op {
	case "+":
		if both {
			return li + ri, nil
		}
		return lf + rf, nil
	case "-":
		if both {
			return li - ri, nil
		}
		return lf - rf, nil
	case "*":
		if both {
			return li * ri, nil
		}
		return lf * rf, nil
	case "/":
		if rf == 0 {
			return nil, fmt.Errorf("%w: division by zero", ErrRender)
		}
		return lf / rf, nil
	case "//", "%":
		if rf == 0 {
			return nil, fmt.Errorf("%w: division by zero", ErrRender)
		}
		if both {
			q := li / ri
			if (li%ri != 0) && ((li < 0) != (ri < 0)) {
				q--
			}
			if op == "//" {
				return q, nil
			}
			return li - q*ri, nil
		}
		q := math.Floor(lf / rf)
		if op == "//" {
			return q, nil
		}
		return lf - q*rf, nil
	case "**":
		if both && ri >= 0 {
			return int64(math.Pow(float64(li), float64(ri))), nil
		}
		return math.Pow(lf, rf), nil
	}
	return nil, fmt.Errorf("%w: unknown operator %s", ErrRender, op)
}

func compare(l, r value) (int, error) {
	if ls, ok := l.(string); ok {
		if rs, ok := r.(string); ok {
			return strings.Compare(ls, rs), nil
		}
	}
	lf, lok := toFloat(l)
	rf, rok := toFloat(r)
	if !lok || !rok {
		return 0, fmt.Errorf("%w: cannot compare %s with %s", ErrRender, typeName(l), typeName(r))
	}
	switch {
	case lf < rf:
		return -1, nil
	case lf > rf:
		return 1, nil
	}
	return 0, nil
}

func contains(container, item value) (bool, error) {
	switch c := container.(type) {
	case string:
		s, ok := item.(string)
		if !ok {
			return false, fmt.Errorf("%w: 'in <string>' requires a string, not %s", ErrRender, typeName(item))
		}
		return strings.Contains(c, s), nil
	case []value:
		for _, x := range c {
			if equal(x, item) {
				return true, nil
			}
		}
		return false, nil
	case *dict:
		s, ok := item.(string)
		if !ok {
			return false, nil
		}
		_, has := c.m[s]
		return has, nil
	case undefinedT, nil:
		return false, nil
	}
	return false, fmt.Errorf("%w: %s is not a container", ErrRender, typeName(container))
}

// ---- calls: macros, methods, global functions ----

// entry is a row of the tables of filters, tests, methods and functions.
// The tables are slices of rows, not maps, so they are static data, which the
// linker drops from programs that never render (a map is built by the
// package's initialization, and keeps all it refers to).
type entry[F any] struct {
	name string
	f    F
}

// lookup returns the function of that name in table.
func lookup[F any](table []entry[F], name string) (F, bool) {
	for _, e := range table {
		if e.name == name {
			return e.f, true
		}
	}
	var none F
	return none, false
}

// args are a call's or filter's arguments, evaluated: positional, then
// keyword in source order.
type args struct {
	pos []value
	kw  []kwValue
}

type kwValue struct {
	name string
	v    value
}

// get returns the i-th positional argument, else the keyword argument key,
// else undefined.
func (a args) get(i int, key string) value {
	if i < len(a.pos) {
		return a.pos[i]
	}
	return a.keyword(key)
}

// keyword returns the keyword argument key (the last one given), or undefined.
func (a args) keyword(key string) value {
	if v, ok := a.lookup(key); ok {
		return v
	}
	return undefined
}

// lookup returns the keyword argument key (the last one given) and whether
// there is one.
func (a args) lookup(key string) (value, bool) {
	for i := len(a.kw) - 1; i >= 0; i-- {
		if a.kw[i].name == key {
			return a.kw[i].v, true
		}
	}
	return nil, false
}

func (st *state) evalCall(e *callOp) (value, error) {
	a, err := st.evalArgs(e.args, e.kw)
	if err != nil {
		return nil, err
	}
	switch fn := e.fn.(type) {
	case *getAttr: // a method, or a macro held in a namespace
		obj, err := st.eval(fn.obj)
		if err != nil {
			return nil, err
		}
		if d, ok := obj.(*dict); ok {
			if m, ok := d.m[fn.name].(*macro); ok {
				return st.callMacro(m, a)
			}
		}
		return callMethod(obj, fn.name, a.pos)
	case *nameRef: // a macro, else a global function
		if v, ok := st.sc.lookup(fn.name); ok {
			if m, ok := v.(*macro); ok {
				return st.callMacro(m, a)
			}
			return nil, fmt.Errorf("%w: %s %q is not callable", ErrRender, typeName(v), fn.name)
		}
		f, ok := lookup(functions, fn.name)
		if !ok {
			return nil, fmt.Errorf("%w: unknown function %q", ErrRender, fn.name)
		}
		return f(a)
	}
	return nil, fmt.Errorf("%w: expression is not callable", ErrRender)
}

func (st *state) callMacro(m *macro, a args) (value, error) {
	if err := st.step(); err != nil {
		return nil, err
	}
	if st.calls >= maxCalls {
		return nil, fmt.Errorf("%w: macros nested too deeply", ErrRender)
	}
	if len(a.pos) > len(m.params) {
		return nil, fmt.Errorf("%w: macro %s takes %d arguments, got %d", ErrRender, m.name, len(m.params), len(a.pos))
	}
	// Macros see the template's top-level variables, not the caller's.
	root := st.sc
	for root.parent != nil && root.parent.parent != nil {
		root = root.parent
	}
	sc := &scope{vars: map[string]value{}, parent: root}
	for i, p := range m.params {
		kw, _ := a.lookup(p)
		switch {
		case i < len(a.pos):
			sc.vars[p] = a.pos[i]
		case kw != nil: // a keyword argument given as none takes the default
			sc.vars[p] = kw
		case m.defaults[i] != nil:
			v, err := st.eval(m.defaults[i])
			if err != nil {
				return nil, err
			}
			sc.vars[p] = v
		default:
			sc.vars[p] = undefined
		}
	}
	saved := st.sc
	st.sc = sc
	st.calls++
	var b strings.Builder
	err := st.render(m.body, &b)
	st.calls--
	st.sc = saved
	if err == errBreak || err == errContinue {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	return b.String(), nil
}

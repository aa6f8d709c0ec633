package grammar

import "sync"

// Cache keeps compiled grammars by a key that names their source (a GBNF
// text, a JSON Schema, a tool set), so a front-end compiles a repeated one
// once, and a session that generates under it again keeps its matcher (the
// same *GBNF). It holds at most Size grammars, dropping the least recently
// used, and none of more than MaxElems elements (a few large grammars from
// hostile requests must not fill a Worker's memory). Safe for concurrent use;
// the zero Cache keeps nothing.
type Cache struct {
	Size     int
	MaxElems int

	mu    sync.Mutex
	m     map[string]*GBNF
	order []string // least recently used first
}

// Lookup returns the grammar kept under key, marking it used.
func (c *Cache) Lookup(key string) (*GBNF, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := c.m[key]
	if ok {
		c.touch(key)
	}
	return g, ok
}

// Get returns the grammar kept under key, or compiles it and keeps it
// (errors are not kept).
func (c *Cache) Get(key string, compile func() (*GBNF, error)) (*GBNF, error) {
	if g, ok := c.Lookup(key); ok {
		return g, nil
	}
	g, err := compile()
	if err != nil {
		return nil, err
	}
	c.Put(key, g)
	return g, nil
}

// Put keeps g under key, if it is small enough and the cache keeps any.
func (c *Cache) Put(key string, g *GBNF) {
	if c.Size <= 0 || len(g.elems) > c.MaxElems {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]*GBNF{}
	}
	if _, ok := c.m[key]; ok {
		c.m[key] = g
		c.touch(key)
		return
	}
	if len(c.order) >= c.Size {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.m[key] = g
	c.order = append(c.order, key)
}

// Len is how many grammars are kept.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// touch moves key to the most recently used end of order.
func (c *Cache) touch(key string) {
	for i, k := range c.order {
		if k == key {
			copy(c.order[i:], c.order[i+1:])
			c.order[len(c.order)-1] = key
			return
		}
	}
}

package jsonprefix

// Nesting is a stack of the open containers of a value, at most MaxDepth
// deep, each an object or an array: a bit each. Its zero value is empty.
// (A Gemma 4 forced call's recognizer, callgrammar, keeps its dicts and
// arrays in one too.)
type Nesting struct {
	objs  uint64 // bit d: the container at depth d+1 is an object
	depth uint8
}

// Push opens a container (an object when obj), and reports false, without
// opening it, when MaxDepth are open.
func (n *Nesting) Push(obj bool) bool {
	if n.depth == MaxDepth {
		return false
	}
	if obj {
		n.objs |= 1 << n.depth
	} else {
		n.objs &^= 1 << n.depth
	}
	n.depth++
	return true
}

// Pop closes the innermost container and reports how many stay open.
func (n *Nesting) Pop() int {
	n.depth--
	return int(n.depth)
}

// Depth is how many containers are open.
func (n Nesting) Depth() int { return int(n.depth) }

// InObject reports whether the innermost container is an object.
func (n Nesting) InObject() bool { return n.depth > 0 && n.objs>>(n.depth-1)&1 == 1 }

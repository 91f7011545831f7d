package window

// iheap is a binary min-heap that tells its items their index (for Fix and Remove).
type iheap[T any] struct {
	items []T
	less  func(a, b T) bool
	setIx func(t T, i int) // may be nil
}

func (h *iheap[T]) len() int { return len(h.items) }

func (h *iheap[T]) top() T { return h.items[0] }

func (h *iheap[T]) push(x T) {
	h.items = append(h.items, x)
	h.set(len(h.items) - 1)
	h.up(len(h.items) - 1)
}

func (h *iheap[T]) pop() T { return h.remove(0) }

// remove removes and returns the item at index i; its index becomes -1.
func (h *iheap[T]) remove(i int) T {
	n := len(h.items) - 1
	x := h.items[i]
	if i != n {
		h.items[i] = h.items[n]
		h.set(i)
	}
	var zero T
	h.items[n] = zero
	h.items = h.items[:n]
	if i != n {
		h.fix(i)
	}
	if h.setIx != nil {
		h.setIx(x, -1)
	}
	return x
}

// fix restores the heap order after the item at index i changed.
func (h *iheap[T]) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h *iheap[T]) set(i int) {
	if h.setIx != nil {
		h.setIx(h.items[i], i)
	}
}

func (h *iheap[T]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(h.items[i], h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		h.set(i)
		h.set(p)
		i = p
	}
}

func (h *iheap[T]) down(i0 int) bool {
	i, n := i0, len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && h.less(h.items[r], h.items[l]) {
			j = r
		}
		if !h.less(h.items[j], h.items[i]) {
			break
		}
		h.items[i], h.items[j] = h.items[j], h.items[i]
		h.set(i)
		h.set(j)
		i = j
	}
	return i > i0
}

package queue

// keyedHeap is a heap of items addressable by key, so items can be updated
// and removed in O(log n). Each item keeps its key and its position in its
// entry: a swap moves two pointers and two ints (container/heap's
// interface had it rebuild both keys and write the index map per swap,
// which made a pop from a 10,000-pod activeQ cost ~30 string allocations).
// The sift-up/sift-down steps are container/heap's, so items pop in
// exactly the order they did with it.
type keyedHeap[T any] struct {
	items []*heapEntry[T]
	index map[string]*heapEntry[T]
	key   func(T) string
	less  func(a, b T) bool
}

type heapEntry[T any] struct {
	val T
	key string
	pos int
}

func newHeap[T any](key func(T) string, less func(a, b T) bool) *keyedHeap[T] {
	return &keyedHeap[T]{index: map[string]*heapEntry[T]{}, key: key, less: less}
}

func (h *keyedHeap[T]) Len() int { return len(h.items) }

func (h *keyedHeap[T]) lessAt(i, j int) bool { return h.less(h.items[i].val, h.items[j].val) }

func (h *keyedHeap[T]) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].pos = i
	h.items[j].pos = j
}

// up and down are container/heap's.
func (h *keyedHeap[T]) up(j int) {
	for {
		i := (j - 1) / 2 // parent
		if i == j || !h.lessAt(j, i) {
			break
		}
		h.swap(i, j)
		j = i
	}
}

func (h *keyedHeap[T]) down(i0, n int) bool {
	i := i0
	for {
		j1 := 2*i + 1
		if j1 >= n || j1 < 0 { // j1 < 0 after int overflow
			break
		}
		j := j1 // left child
		if j2 := j1 + 1; j2 < n && h.lessAt(j2, j1) {
			j = j2 // = 2*i + 2  // right child
		}
		if !h.lessAt(j, i) {
			break
		}
		h.swap(i, j)
		i = j
	}
	return i > i0
}

func (h *keyedHeap[T]) fix(i int) {
	if !h.down(i, len(h.items)) {
		h.up(i)
	}
}

// removeAt takes out the entry at position i (container/heap's Remove).
func (h *keyedHeap[T]) removeAt(i int) *heapEntry[T] {
	n := len(h.items) - 1
	if n != i {
		h.swap(i, n)
		if !h.down(i, n) {
			h.up(i)
		}
	}
	e := h.items[n]
	h.items[n] = nil
	h.items = h.items[:n]
	delete(h.index, e.key)
	return e
}

// AddOrUpdate inserts or replaces the item with the same key.
func (h *keyedHeap[T]) AddOrUpdate(it T) {
	k := h.key(it)
	if e, ok := h.index[k]; ok {
		e.val = it
		h.fix(e.pos)
		return
	}
	e := &heapEntry[T]{val: it, key: k, pos: len(h.items)}
	h.index[k] = e
	h.items = append(h.items, e)
	h.up(e.pos)
}

// Get returns the item with key.
func (h *keyedHeap[T]) Get(key string) (T, bool) {
	if e, ok := h.index[key]; ok {
		return e.val, true
	}
	var zero T
	return zero, false
}

// Delete removes the item with key.
func (h *keyedHeap[T]) Delete(key string) bool {
	e, ok := h.index[key]
	if !ok {
		return false
	}
	h.removeAt(e.pos)
	return true
}

// Peek returns the top item.
func (h *keyedHeap[T]) Peek() (T, bool) {
	if len(h.items) == 0 {
		var zero T
		return zero, false
	}
	return h.items[0].val, true
}

// PopTop removes and returns the top item.
func (h *keyedHeap[T]) PopTop() (T, bool) {
	if len(h.items) == 0 {
		var zero T
		return zero, false
	}
	return h.removeAt(0).val, true
}

// List returns the items in no particular order.
func (h *keyedHeap[T]) List() []T {
	out := make([]T, len(h.items))
	for i, e := range h.items {
		out[i] = e.val
	}
	return out
}

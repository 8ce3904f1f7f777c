package queue

import "container/heap"

// keyedHeap is a heap of items addressable by key, so items can be updated
// and removed in O(log n).
type keyedHeap[T any] struct {
	items []T
	index map[string]int
	key   func(T) string
	less  func(a, b T) bool
}

func newHeap[T any](key func(T) string, less func(a, b T) bool) *keyedHeap[T] {
	return &keyedHeap[T]{index: map[string]int{}, key: key, less: less}
}

func (h *keyedHeap[T]) Len() int           { return len(h.items) }
func (h *keyedHeap[T]) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *keyedHeap[T]) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.index[h.key(h.items[i])] = i
	h.index[h.key(h.items[j])] = j
}
func (h *keyedHeap[T]) Push(x any) {
	it := x.(T)
	h.index[h.key(it)] = len(h.items)
	h.items = append(h.items, it)
}
func (h *keyedHeap[T]) Pop() any {
	n := len(h.items) - 1
	it := h.items[n]
	var zero T
	h.items[n] = zero
	h.items = h.items[:n]
	delete(h.index, h.key(it))
	return it
}

// AddOrUpdate inserts or replaces the item with the same key.
func (h *keyedHeap[T]) AddOrUpdate(it T) {
	if i, ok := h.index[h.key(it)]; ok {
		h.items[i] = it
		heap.Fix(h, i)
		return
	}
	heap.Push(h, it)
}

// Get returns the item with key.
func (h *keyedHeap[T]) Get(key string) (T, bool) {
	if i, ok := h.index[key]; ok {
		return h.items[i], true
	}
	var zero T
	return zero, false
}

// Delete removes the item with key.
func (h *keyedHeap[T]) Delete(key string) bool {
	i, ok := h.index[key]
	if !ok {
		return false
	}
	heap.Remove(h, i)
	return true
}

// Peek returns the top item.
func (h *keyedHeap[T]) Peek() (T, bool) {
	if len(h.items) == 0 {
		var zero T
		return zero, false
	}
	return h.items[0], true
}

// PopTop removes and returns the top item.
func (h *keyedHeap[T]) PopTop() (T, bool) {
	if len(h.items) == 0 {
		var zero T
		return zero, false
	}
	return heap.Pop(h).(T), true
}

// List returns the items in no particular order.
func (h *keyedHeap[T]) List() []T { return append([]T(nil), h.items...) }

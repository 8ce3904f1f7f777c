package framework

// PluginNames is a small set of plugin names, such as a cycle's plugins
// that returned Skip: a slice, since it holds a few names and is built in
// every cycle (a map per set was a measurable part of a warm cycle). The
// zero value is empty.
type PluginNames []string

// Has reports whether name is in the set.
func (p PluginNames) Has(name string) bool {
	for _, n := range p {
		if n == name {
			return true
		}
	}
	return false
}

// Insert adds names not in the set yet.
func (p *PluginNames) Insert(names ...string) {
	for _, n := range names {
		if !p.Has(n) {
			*p = append(*p, n)
		}
	}
}

// Len is the number of names.
func (p PluginNames) Len() int { return len(p) }

// Clone returns a copy.
func (p PluginNames) Clone() PluginNames {
	if p == nil {
		return nil
	}
	return append(PluginNames(nil), p...)
}

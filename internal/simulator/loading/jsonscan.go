package loading

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The loader reads a JSON document's head (kind, apiVersion, metadata's
// name and namespace, a List's items) and splits a List into its items
// by walking the bytes of a document already checked valid (json.Valid),
// without decoding, so a large List is not scanned and copied again
// before its objects are decoded. The walk never judges
// validity; anything it does not read the way encoding/json would (an
// escaped key, a head field given twice) sends the document back to the
// generic decode, whose messages stay those of every error.

// jsonHead is a document's head as decodeDocument reads it.
type jsonHead struct {
	kind, apiVersion, name, namespace string
	items                             []byte // the raw value, nil if absent
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(data []byte, i int) int {
	for i < len(data) && isJSONSpace(data[i]) {
		i++
	}
	return i
}

// stringEnd returns the index just past the string starting at data[i]
// (a quote), and whether it holds an escape.
func stringEnd(data []byte, i int) (int, bool) {
	escaped := false
	for j := i + 1; j < len(data); {
		k := bytes.IndexAny(data[j:], "\"\\")
		if k < 0 {
			return len(data), escaped
		}
		j += k
		if data[j] == '"' {
			return j + 1, escaped
		}
		escaped = true
		j += 2 // the backslash and the escaped byte (\u's digits are plain)
	}
	return len(data), escaped
}

// valueEnd returns the index just past the value starting at data[i].
func valueEnd(data []byte, i int) int {
	switch data[i] {
	case '"':
		end, _ := stringEnd(data, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, _ := stringEnd(data, j)
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(data)
	default: // number, true, false, null
		j := i
		for j < len(data) && data[j] != ',' && data[j] != '}' && data[j] != ']' && !isJSONSpace(data[j]) {
			j++
		}
		return j
	}
}

// eachMember calls fn with each member of the object at data[i] (a '{'),
// in order; fn returns false to stop. ok is false when a key holds an
// escape (its name would need decoding).
func eachMember(data []byte, i int, fn func(key, val []byte) bool) (ok bool) {
	i = skipSpace(data, i+1)
	for i < len(data) && data[i] != '}' {
		end, escaped := stringEnd(data, i)
		if escaped {
			return false
		}
		key := data[i+1 : end-1]
		i = skipSpace(data, end)
		i = skipSpace(data, i+1) // past ':'
		vend := valueEnd(data, i)
		if !fn(key, data[i:vend]) {
			return true
		}
		i = skipSpace(data, vend)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return true
}

// jsonString is a string value's text, "" for a value of another type (as
// an interface{} field read with a type assertion); a string with escapes
// or bytes that are not UTF-8 is decoded by encoding/json (which replaces
// those); ok is false when that fails (it never does on valid JSON).
func jsonString(val []byte) (string, bool) {
	if len(val) == 0 || val[0] != '"' {
		return "", true
	}
	if _, escaped := stringEnd(val, 0); !escaped && utf8.Valid(val) {
		return string(val[1 : len(val)-1]), true
	}
	var s string
	if err := json.Unmarshal(val, &s); err != nil {
		return "", false
	}
	return s, true
}

// scanHead reads a valid JSON object's head as encoding/json would fill
// decodeDocument's head struct: keys match case-insensitively
// (bytes.EqualFold, encoding/json's rule); ok is false when it can't be
// sure of that (a head key twice, an escaped key), and the caller decodes
// generically.
func scanHead(data []byte) (h jsonHead, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return h, false
	}
	var seen [5]bool // kind, apiVersion, metadata, items, and a failure
	once := func(n int) bool {
		if seen[n] {
			seen[4] = true
			return false
		}
		seen[n] = true
		return true
	}
	str := func(val []byte, out *string) bool {
		s, ok := jsonString(val)
		*out = s
		if !ok {
			seen[4] = true
		}
		return ok
	}
	ok = eachMember(data, i, func(key, val []byte) bool {
		switch {
		case bytes.EqualFold(key, []byte("kind")):
			return once(0) && str(val, &h.kind)
		case bytes.EqualFold(key, []byte("apiVersion")):
			return once(1) && str(val, &h.apiVersion)
		case bytes.EqualFold(key, []byte("items")):
			h.items = val
			return once(3)
		case bytes.EqualFold(key, []byte("metadata")):
			if !once(2) {
				return false
			}
			if val[0] != '{' {
				return true // a field of another type: left empty
			}
			var name, ns bool
			if !eachMember(val, 0, func(k, v []byte) bool {
				switch {
				case bytes.EqualFold(k, []byte("name")):
					if name {
						seen[4] = true
						return false
					}
					name = true
					return str(v, &h.name)
				case bytes.EqualFold(k, []byte("namespace")):
					if ns {
						seen[4] = true
						return false
					}
					ns = true
					return str(v, &h.namespace)
				}
				return true
			}) {
				seen[4] = true
				return false
			}
		}
		return true
	})
	return h, ok && !seen[4]
}

// splitArray returns the elements of the valid JSON array at data (a
// '['), as slices of data; ok is false when data is no array.
func splitArray(data []byte) (elems [][]byte, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, false
	}
	i = skipSpace(data, i+1)
	for i < len(data) && data[i] != ']' {
		end := valueEnd(data, i)
		elems = append(elems, data[i:end])
		i = skipSpace(data, end)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return elems, true
}

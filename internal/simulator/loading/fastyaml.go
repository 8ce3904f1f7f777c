package loading

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kubesched/kubesched/internal/jsonstr"
)

// fastYAMLToJSON converts the block-style YAML that kubectl, Helm and
// generators write (nested mappings and sequences of plain or quoted
// scalars, comments, empty {} and []) to JSON, an order of magnitude
// faster than sigs.k8s.io/yaml, which builds a generic tree through
// yaml.v2 and marshals it: at 150,000 pods that conversion was most of the
// loading time. ok is false for anything outside that subset (anchors,
// tags, block scalars, flow collections, multi-line plain scalars,
// quoted keys, timestamps, tabs...): the caller then converts with
// sigs.k8s.io/yaml, so the result is always that library's, which the
// differential test and fuzz target hold it to.
//
// Plain scalars resolve as yaml.v2 resolves them (its resolve.go): the
// YAML 1.1 booleans and nulls, integers in any base ParseInt accepts once
// underscores are removed, floats of its regular expression.
func fastYAMLToJSON(data []byte) (out []byte, ok bool) {
	p := yamlFast{out: make([]byte, 0, len(data)+len(data)/4)}
	if !p.split(data) || len(p.lines) == 0 {
		return nil, false
	}
	if p.lines[0].indent != 0 || isSeqLine(p.lines[0].text) {
		return nil, false // a top level other than a mapping: rare, left to yaml.v2
	}
	if !p.mapping(0) || p.i != len(p.lines) {
		return nil, false
	}
	return p.out, true
}

type yamlLine struct {
	indent int
	text   []byte // after the indentation, trailing spaces trimmed
}

type yamlFast struct {
	lines []yamlLine
	i     int
	out   []byte
	keys  []string // scratch for duplicate keys, by mapping depth
}

// split cuts data into its lines with content, refusing what the subset
// never holds: tabs, characters YAML does not print or reads as line
// breaks, directives and document markers.
func (p *yamlFast) split(data []byte) bool {
	if !printable(data) {
		return false
	}
	for len(data) > 0 {
		var line []byte
		if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
			line, data = data[:nl], data[nl+1:]
		} else {
			line, data = data, nil
		}
		indent := 0
		for indent < len(line) && line[indent] == ' ' {
			indent++
		}
		text := bytes.TrimRight(line[indent:], " ")
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		if text[0] == '\t' || bytes.IndexByte(text, '\t') >= 0 {
			return false
		}
		if indent == 0 && (text[0] == '%' || bytes.HasPrefix(text, []byte("---")) || bytes.HasPrefix(text, []byte("..."))) {
			return false
		}
		p.lines = append(p.lines, yamlLine{indent, text})
	}
	return true
}

// printable: data is valid UTF-8 of the characters yaml.v2 takes as they
// are in a one-line scalar: no control character but the line feed (no
// tab, no carriage return), none of the C1 range (NEL breaks a line), no
// line or paragraph separator, no byte order mark, no non-character.
func printable(data []byte) bool {
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 || r < 0xA0 || r == 0x2028 || r == 0x2029 || r == 0xFEFF || r >= 0xD800 && r < 0xE000 || r == 0xFFFE || r == 0xFFFF {
			return false
		}
		i += n
	}
	return true
}

func isSeqLine(t []byte) bool { return t[0] == '-' && (len(t) == 1 || t[1] == ' ') }

// node converts the block node starting at the current line, which is
// more indented than its parent (or, for a sequence, as indented as a
// mapping key that holds it).
func (p *yamlFast) node() bool {
	if isSeqLine(p.lines[p.i].text) {
		return p.sequence(p.lines[p.i].indent)
	}
	return p.mapping(p.lines[p.i].indent)
}

// mapping converts the mapping whose keys are at indent.
func (p *yamlFast) mapping(indent int) bool {
	p.out = append(p.out, '{')
	depth := len(p.keys)
	defer func() { p.keys = p.keys[:depth] }()
	first := true
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.indent < indent {
			break
		}
		if l.indent > indent || isSeqLine(l.text) {
			return false
		}
		key, rest, ok := splitKey(l.text)
		if !ok {
			return false
		}
		for _, k := range p.keys[depth:] {
			if k == key {
				return false // a duplicate key: yaml.v2's rule, not ours
			}
		}
		p.keys = append(p.keys, key)
		if !first {
			p.out = append(p.out, ',')
		}
		first = false
		p.out = jsonstr.Append(p.out, key)
		p.out = append(p.out, ':')
		p.i++
		if !p.value(indent, rest) {
			return false
		}
	}
	p.out = append(p.out, '}')
	return true
}

// value converts a key's (or a sequence item's) value: rest on its line,
// or, when rest is empty, the block on the next lines.
func (p *yamlFast) value(indent int, rest []byte) bool {
	if len(rest) == 0 {
		if p.i < len(p.lines) {
			next := p.lines[p.i]
			// A sequence may sit at its key's indentation (kubectl's
			// compact form).
			if next.indent > indent || next.indent == indent && isSeqLine(next.text) {
				return p.node()
			}
		}
		p.out = append(p.out, "null"...)
		return true
	}
	if !p.scalar(rest) {
		return false
	}
	// A more indented line after a scalar continues it (a multi-line
	// scalar) or is an error: either way, not the subset.
	return p.i == len(p.lines) || p.lines[p.i].indent <= indent
}

// sequence converts the sequence whose dashes are at indent.
func (p *yamlFast) sequence(indent int) bool {
	p.out = append(p.out, '[')
	first := true
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.indent != indent || !isSeqLine(l.text) {
			if l.indent > indent {
				return false
			}
			break
		}
		if !first {
			p.out = append(p.out, ',')
		}
		first = false
		rest := l.text[1:]
		col := indent + 1
		for len(rest) > 0 && rest[0] == ' ' {
			rest, col = rest[1:], col+1
		}
		switch {
		case len(rest) == 0:
			p.i++
			if p.i < len(p.lines) && p.lines[p.i].indent > indent {
				if !p.node() {
					return false
				}
			} else {
				p.out = append(p.out, "null"...)
			}
		case isSeqLine(rest):
			return false // a sequence in a sequence on one line
		case isKeyLine(rest):
			// "- key: value": a mapping whose keys are at the column of
			// this first one.
			p.lines[p.i] = yamlLine{indent: col, text: rest}
			if !p.mapping(col) {
				return false
			}
		default:
			p.i++
			if !p.scalar(rest) {
				return false
			}
			if p.i < len(p.lines) && p.lines[p.i].indent > indent {
				return false
			}
		}
	}
	p.out = append(p.out, ']')
	return true
}

// isKeyLine: t starts a mapping entry (a plain key and ": " or a final
// ":"); a quoted key is outside the subset and is caught by splitKey.
func isKeyLine(t []byte) bool {
	if t[0] == '"' || t[0] == '\'' {
		return false
	}
	t = stripComment(t)
	return bytes.Contains(t, []byte(": ")) || len(t) > 0 && t[len(t)-1] == ':'
}

// stripComment cuts a plain text's " #" comment.
func stripComment(t []byte) []byte {
	if i := bytes.Index(t, []byte(" #")); i >= 0 {
		return bytes.TrimRight(t[:i], " ")
	}
	return t
}

// splitKey splits "key: rest" (or "key:") into a plain key that yaml.v2
// resolves to a string, and the rest.
func splitKey(t []byte) (key string, rest []byte, ok bool) {
	if t[0] == '"' || t[0] == '\'' || t[0] == '?' {
		return "", nil, false
	}
	var k []byte
	if i := bytes.Index(t, []byte(": ")); i >= 0 {
		k, rest = t[:i], bytes.TrimLeft(t[i+2:], " ")
	} else if t[len(t)-1] == ':' {
		k = t[:len(t)-1]
	} else {
		return "", nil, false
	}
	// yaml.v2 takes a simple key of at most 1,024 characters.
	if len(k) == 0 || len(k) > 1000 || bytes.Contains(k, []byte(" #")) || !plainStart(k) || k[len(k)-1] == ' ' {
		return "", nil, false
	}
	ks := string(k)
	if ks == "<<" {
		return "", nil, false // a merge key
	}
	if js, str, ok := resolvePlain(ks); !ok || !str || js != nil {
		return "", nil, false // a key yaml.v2 reads as a number, boolean or null
	}
	if len(rest) > 0 && rest[0] == '#' {
		rest = nil
	}
	return ks, rest, true
}

// plainStart: a plain scalar may start with t's first byte (YAML's
// indicators may not, except "-", "?" and ":" before a non-space, which
// the subset leaves out too).
func plainStart(t []byte) bool {
	switch t[0] {
	case '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	}
	return true
}

// scalar converts a value on its line: quoted, an empty flow collection,
// or plain.
func (p *yamlFast) scalar(t []byte) bool {
	switch t[0] {
	case '"':
		s, after, ok := doubleQuoted(t)
		if !ok || !commentOnly(after) {
			return false
		}
		p.out = jsonstr.Append(p.out, s)
		return true
	case '\'':
		s, after, ok := singleQuoted(t)
		if !ok || !commentOnly(after) {
			return false
		}
		p.out = jsonstr.Append(p.out, s)
		return true
	case '{', '[':
		t = stripComment(t)
		if string(t) == "{}" || string(t) == "[]" {
			p.out = append(p.out, t...)
			return true
		}
		return false
	}
	t = stripComment(t)
	if len(t) == 0 || !plainStart(t) || bytes.Contains(t, []byte(": ")) || t[len(t)-1] == ':' {
		return false
	}
	js, str, ok := resolvePlain(string(t))
	if !ok {
		return false
	}
	if str {
		p.out = jsonstr.Append(p.out, string(t))
	} else {
		p.out = append(p.out, js...)
	}
	return true
}

func commentOnly(t []byte) bool {
	t = bytes.TrimLeft(t, " ")
	return len(t) == 0 || t[0] == '#' && len(t) > 0
}

// doubleQuoted reads a one-line double-quoted scalar without escapes
// (they are left to yaml.v2); after is what follows the closing quote.
func doubleQuoted(t []byte) (s string, after []byte, ok bool) {
	end := bytes.IndexByte(t[1:], '"')
	if end < 0 {
		return "", nil, false
	}
	body := t[1 : 1+end]
	if bytes.IndexByte(body, '\\') >= 0 {
		return "", nil, false
	}
	after = t[2+end:]
	if len(after) > 0 && after[0] != ' ' {
		return "", nil, false
	}
	return string(body), after, true
}

// singleQuoted reads a one-line single-quoted scalar (two single quotes
// stand for one).
func singleQuoted(t []byte) (s string, after []byte, ok bool) {
	var b strings.Builder
	i := 1
	for {
		j := bytes.IndexByte(t[i:], '\'')
		if j < 0 {
			return "", nil, false
		}
		b.Write(t[i : i+j])
		i += j + 1
		if i < len(t) && t[i] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		break
	}
	after = t[i:]
	if len(after) > 0 && after[0] != ' ' {
		return "", nil, false
	}
	return b.String(), after, true
}

// resolvePlain resolves a plain scalar as yaml.v2 does: str true for a
// string; else js is its JSON (as sigs.k8s.io/yaml marshals the value).
// ok is false for what the subset leaves to yaml.v2 (timestamps, the
// infinities and NaN, which JSON can't hold).
func resolvePlain(s string) (js []byte, str bool, ok bool) {
	if s == "" {
		return []byte("null"), false, true
	}
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
		return []byte("true"), false, true
	case "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return []byte("false"), false, true
	case "~", "null", "Null", "NULL":
		return []byte("null"), false, true
	case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return nil, false, false
	}
	switch c := s[0]; {
	case c == '.':
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return marshalFloat(f)
		}
		return nil, true, true
	case c == '+' || c == '-' || c >= '0' && c <= '9':
		if looksLikeTimestamp(s) {
			return nil, false, false
		}
		plain := strings.ReplaceAll(s, "_", "")
		if v, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return strconv.AppendInt(nil, v, 10), false, true
		}
		if v, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return strconv.AppendUint(nil, v, 10), false, true
		}
		if isYAMLFloat(plain) {
			if f, err := strconv.ParseFloat(plain, 64); err == nil {
				return marshalFloat(f)
			}
		}
		if strings.HasPrefix(plain, "0b") || strings.HasPrefix(plain, "-0b") {
			return nil, false, false // binary: rare, left to yaml.v2
		}
		return nil, true, true
	}
	return nil, true, true
}

// looksLikeTimestamp: yaml.v2 tries a timestamp when four digits and a
// dash start the scalar.
func looksLikeTimestamp(s string) bool {
	return len(s) > 4 && s[4] == '-' && strings.IndexFunc(s[:4], func(r rune) bool { return r < '0' || r > '9' }) < 0
}

// isYAMLFloat is yaml.v2's ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$.
func isYAMLFloat(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	} else {
		if digits() == 0 {
			return false
		}
		if i < len(s) && s[i] == '.' {
			i++
			digits()
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

func marshalFloat(f float64) ([]byte, bool, bool) {
	b, err := json.Marshal(f)
	if err != nil {
		return nil, false, false
	}
	return b, false, true
}

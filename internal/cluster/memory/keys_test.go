package memory

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestObjectsOrderAsTheirKeysOrderAsStrings(t *testing.T) {
	tests := []struct {
		name       string
		ans, aname string
		bns, bname string
	}{
		{name: "the same namespace orders by name", ans: "apps", aname: "b", bns: "apps", bname: "a"},
		{name: "a namespace that is a prefix of the other orders after it when the next byte is below the slash", ans: "a", aname: "x", bns: "a-b", bname: "y"},
		{name: "a namespace that is a prefix of the other orders before it when the next byte is above the slash", ans: "a", aname: "x", bns: "ab", bname: "y"},
		{name: "namespaces that differ early order by their first difference", ans: "team-b", aname: "a", bns: "team-a", bname: "z"},
		{name: "an empty namespace orders before any other", ans: "", aname: "z", bns: "a", bname: "a"},
		{name: "an invalid namespace holding a slash still orders as its key", ans: "a", aname: "b", bns: "a/", bname: "a"},
	}
	sign := func(c int) int { return min(max(c, -1), 1) }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := strings.Compare(key(tt.ans, tt.aname), key(tt.bns, tt.bname))
			if got := sign(compareKeys(tt.ans, tt.aname, tt.bns, tt.bname)); got != want {
				t.Errorf("compareKeys(%q, %q, %q, %q) = %d, want %d", tt.ans, tt.aname, tt.bns, tt.bname, got, want)
			}
			if got := sign(compareKeys(tt.bns, tt.bname, tt.ans, tt.aname)); got != -want {
				t.Errorf("compareKeys reversed = %d, want %d", got, -want)
			}
		})
	}
	t.Run("random keys over a small alphabet order as their strings", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		word := func() string {
			b := make([]byte, r.IntN(4))
			for i := range b {
				b[i] = "a-b./z"[r.IntN(6)]
			}
			return string(b)
		}
		for range 20000 {
			ans, aname, bns, bname := word(), word(), word(), word()
			want := strings.Compare(key(ans, aname), key(bns, bname))
			if got := sign(compareKeys(ans, aname, bns, bname)); got != want {
				t.Fatalf("compareKeys(%q, %q, %q, %q) = %d, want %d", ans, aname, bns, bname, got, want)
			}
		}
	})
}

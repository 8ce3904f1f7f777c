package runtime

import (
	"slices"
	"testing"

	"github.com/kubesched/kubesched/pkg/framework"
)

func TestSkipSetsListThePluginsOfAMaskInPluginOrder(t *testing.T) {
	names := []string{"A", "B", "C", "D"}
	name := func(i int) string { return names[i] }
	tests := []struct {
		name string
		mask uint64
		want framework.PluginNames
	}{
		{name: "no skips give no list", mask: 0, want: nil},
		{name: "one skip gives its plugin", mask: 1 << 2, want: framework.PluginNames{"C"}},
		{name: "skips are listed in plugin order", mask: 1<<3 | 1<<0 | 1<<1, want: framework.PluginNames{"A", "B", "D"}},
	}
	var s skipSets
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.list(tt.mask, len(names), name)
			if !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Fatalf("list(%b) = %#v, want %#v", tt.mask, got, tt.want)
			}
			again := s.list(tt.mask, len(names), name)
			if len(got) > 0 && &again[0] != &got[0] {
				t.Errorf("a second cycle with the same skips got a new list")
			}
			if cap(got) != len(got) {
				t.Errorf("cap %d > len %d: an append would write into the shared list", cap(got), len(got))
			}
		})
	}
}

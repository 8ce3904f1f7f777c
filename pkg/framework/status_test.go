package framework

import (
	"errors"
	"testing"
)

func TestStampingASharedSkipStatusLeavesTheNextOneClean(t *testing.T) {
	tests := []struct {
		name  string
		stamp func(*Status) *Status
		check func(*Status) bool
	}{
		{name: "a plugin name stamped on a skip stays on that status", stamp: func(s *Status) *Status { return s.WithPlugin("A") },
			check: func(s *Status) bool { return s.Plugin() == "A" }},
		{name: "an error attached to a skip stays on that status", stamp: func(s *Status) *Status { return s.WithError(errors.New("boom")) },
			check: func(s *Status) bool { return s.err != nil && s.err.Error() == "boom" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.stamp(NewStatus(Skip))
			if !tt.check(got) || !got.IsSkip() {
				t.Errorf("stamped status %+v lacks what was stamped", got)
			}
			next := NewStatus(Skip)
			if next.Plugin() != "" || next.err != nil || !next.IsSkip() {
				t.Errorf("the next NewStatus(Skip) = %+v, want a clean Skip", next)
			}
		})
	}
	if NewStatus(Skip, "why") == NewStatus(Skip, "why") {
		t.Error("a Skip with reasons is shared, want its own")
	}
}

package framework

import (
	"errors"
	"testing"
)

func TestStatusInternerSharesOnlyEqualRejections(t *testing.T) {
	first := NewStatus(Unschedulable, "Insufficient cpu").WithPlugin("NodeResourcesFit")
	tests := []struct {
		name      string
		next      *Status
		wantFirst bool
	}{
		{name: "the same code, plugin and reasons give the first status",
			next: NewStatus(Unschedulable, "Insufficient cpu").WithPlugin("NodeResourcesFit"), wantFirst: true},
		{name: "another plugin gives its own status",
			next: NewStatus(Unschedulable, "Insufficient cpu").WithPlugin("Other")},
		{name: "another code gives its own status",
			next: NewStatus(UnschedulableAndUnresolvable, "Insufficient cpu").WithPlugin("NodeResourcesFit")},
		{name: "more reasons give their own status",
			next: NewStatus(Unschedulable, "Insufficient cpu", "Insufficient memory").WithPlugin("NodeResourcesFit")},
		{name: "reasons that join to the same text are told apart",
			next: NewStatus(Unschedulable, "Insufficient", "cpu").WithPlugin("NodeResourcesFit")},
		{name: "a rejection with an underlying error is left as it is",
			next: NewStatus(Unschedulable, "Insufficient cpu").WithPlugin("NodeResourcesFit").WithError(errors.New("boom"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in StatusInterner
			if got := in.Intern(first); got != first {
				t.Fatalf("the first status was not kept")
			}
			got := in.Intern(tt.next)
			if (got == first) != tt.wantFirst {
				t.Errorf("got the first status: %v, want %v", got == first, tt.wantFirst)
			}
			if !tt.wantFirst && got != tt.next {
				t.Errorf("a status not interned was replaced")
			}
		})
	}
	var in StatusInterner
	if got := in.Intern(nil); got != nil {
		t.Errorf("success became %v", got)
	}
}

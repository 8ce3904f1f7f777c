package difffuzz

import (
	"errors"
	"strings"
	"testing"
)

func TestErrorDiffAgreesOnlyOnTheSameError(t *testing.T) {
	allocator := errors.New(`running "DynamicResources" filter plugin: claim default/claim2, request gpu: cannot add device gpu.example.com/n6/gpu-2 because a claim constraint would not be satisfied`)
	upstream := errors.New("Filter on n6: " + allocator.Error())
	other := errors.New(`running "DynamicResources" filter plugin: claim default/claim2: timed out`)
	tests := []struct {
		name      string
		upstream  error
		kubesched error
		want      string // "" for agreement, else the start of the difference
	}{
		{name: "both failing with the plugin's error agree (upstream names the node)", upstream: upstream, kubesched: allocator},
		{name: "different errors differ", upstream: upstream, kubesched: other, want: "error: upstream fails with"},
		{name: "only upstream failing differs", upstream: upstream, want: "error: upstream fails with"},
		{name: "only kubesched failing differs", kubesched: allocator, want: "error: kubesched fails with"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := errorDiff(tt.upstream, tt.kubesched)
			if (tt.want == "") != (got == "") || !strings.HasPrefix(got, tt.want) {
				t.Errorf("errorDiff = %q, want %q", got, tt.want)
			}
		})
	}
}

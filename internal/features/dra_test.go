package features

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/dynamic-resource-allocation/structured"

	"github.com/kubesched/kubesched/pkg/plugins/dynamicresources"
)

func TestDRAFeatures(t *testing.T) {
	tests := []struct {
		name        string
		set         map[string]bool
		want        structured.Features
		wantTimeout bool
	}{
		{name: "the defaults are kube-scheduler v1.37's", want: dynamicresources.AllocatorFeatures, wantTimeout: true},
		{name: "consumable capacity can be turned off",
			set: map[string]bool{string(DRAConsumableCapacity): false, string(DRAFractionalCapacityRange): false},
			want: func() structured.Features {
				f := dynamicresources.AllocatorFeatures
				f.ConsumableCapacity, f.FractionalCapacityRange = false, false
				return f
			}(), wantTimeout: true},
		{name: "binding conditions need both of their gates",
			set: map[string]bool{string(DRADeviceBindingConditions): false},
			want: func() structured.Features {
				f := dynamicresources.AllocatorFeatures
				f.DeviceBindingAndStatus = false
				return f
			}(), wantTimeout: true},
		{name: "an alpha feature can be turned on, the filter timeout off",
			set: map[string]bool{string(DRAListTypeAttributes): true, string(DRASchedulerFilterTimeout): false},
			want: func() structured.Features {
				f := dynamicresources.AllocatorFeatures
				f.ListTypeAttributes = true
				return f
			}(), wantTimeout: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := New()
			if err := g.SetFromMap(tt.set); err != nil {
				t.Fatal(err)
			}
			got, timeout, _ := DRAFeatures(g)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("features (-want,+got):\n%s", diff)
			}
			if timeout != tt.wantTimeout {
				t.Errorf("filter timeout %v, want %v", timeout, tt.wantTimeout)
			}
		})
	}
}

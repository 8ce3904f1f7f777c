package dynamicresources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	st "github.com/kubesched/kubesched/internal/testing"
)

func taintRule(name, pool string, effect resourceapi.DeviceTaintEffect) *resourceapi.DeviceTaintRule {
	return &resourceapi.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourceapi.DeviceTaintRuleSpec{
			DeviceSelector: &resourceapi.DeviceTaintSelector{Driver: ptr.To(driver), Pool: ptr.To(pool)},
			Taint:          resourceapi.DeviceTaint{Key: "maintenance", Value: "true", Effect: effect}}}
}

func TestDeviceTaintRules(t *testing.T) {
	nodes := []*v1.Node{st.MakeNode().Name("a").Obj(), st.MakeNode().Name("b").Obj()}
	base := []interface{}{
		st.DeviceClass("gpu", driver),
		st.MakeSlice("a", driver).Device("gpu-0").Obj(),
		st.MakeSlice("b", driver).Device("gpu-0").Obj(),
	}
	plain := st.MakeClaim("c").Request("gpu", "gpu", 1).Obj()
	tolerating := plain.DeepCopy()
	tolerating.Spec.Devices.Requests[0].Exactly.Tolerations = []resourceapi.DeviceToleration{{Key: "maintenance", Operator: resourceapi.DeviceTolerationOpExists}}
	tests := []struct {
		name       string
		claim      *resourceapi.ResourceClaim
		rule       *resourceapi.DeviceTaintRule
		taintRules bool
		want       map[string]string
	}{
		{name: "a NoSchedule rule on node a's pool keeps the claim off a", claim: plain, rule: taintRule("r", "a", resourceapi.DeviceTaintEffectNoSchedule), taintRules: true,
			want: map[string]string{"a": unresolvable(ErrReasonCannotAllocate), "b": ""}},
		{name: "a claim that tolerates the taint still gets a's device", claim: tolerating, rule: taintRule("r", "a", resourceapi.DeviceTaintEffectNoSchedule), taintRules: true,
			want: map[string]string{"a": "", "b": ""}},
		{name: "a taint of effect None keeps nothing off", claim: plain, rule: taintRule("r", "a", resourceapi.DeviceTaintEffectNone), taintRules: true,
			want: map[string]string{"a": "", "b": ""}},
		{name: "with DRADeviceTaintRules off the rule does nothing", claim: plain, rule: taintRule("r", "a", resourceapi.DeviceTaintEffectNoSchedule), taintRules: false,
			want: map[string]string{"a": "", "b": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := append(append([]interface{}{}, base...), tt.claim, tt.rule)
			pl, m := newPlugin(t, nil, objs...)
			m.SetFeatures(AllocatorFeatures, true, tt.taintRules)
			pod := st.MakePod().Name("p").UID("p").Claim("gpu", "c").Obj()
			if diff := cmp.Diff(tt.want, st.RunFilterAll(pl, pod, st.NodeInfos(nodes, nil)...)); diff != "" {
				t.Errorf("verdicts (-want,+got):\n%s", diff)
			}
			// The listers' slice itself is never modified.
			if n := len(base[1].(*resourceapi.ResourceSlice).Spec.Devices[0].Taints); n != 0 {
				t.Errorf("the published slice got %d taints", n)
			}
		})
	}
}

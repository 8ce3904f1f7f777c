package integration

import (
	"sort"
	"strings"
	"testing"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	upstreamconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	upstreamscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	upstreamvalidation "k8s.io/kubernetes/pkg/scheduler/apis/config/validation"

	"github.com/kubesched/kubesched/internal/config"
	"github.com/kubesched/kubesched/internal/scheduler"
	"github.com/kubesched/kubesched/pkg/plugins"
)

// TestExtenderConfigurationsValidateAsKubeSchedulers: the extenders of a
// configuration are accepted or refused exactly as kube-scheduler
// v1.37.2's own decoding and validation do, message for message.
func TestExtenderConfigurationsValidateAsKubeSchedulers(t *testing.T) {
	const header = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
	tests := []struct {
		name string
		yaml string
	}{
		{name: "an extender with every field is valid", yaml: `extenders:
- urlPrefix: https://127.0.0.1:8888/sched
  filterVerb: filter
  prioritizeVerb: prioritize
  preemptVerb: preempt
  bindVerb: bind
  weight: 3
  enableHTTPS: true
  tlsConfig: {insecure: true, serverName: ext}
  httpTimeout: 2s
  nodeCacheCapable: true
  managedResources:
  - {name: example.com/gpu, ignoredByScheduler: true}
  ignorable: true
`},
		{name: "a prioritizer without a weight is refused", yaml: "extenders:\n- urlPrefix: http://a\n  prioritizeVerb: p\n"},
		{name: "a negative weight is refused", yaml: "extenders:\n- urlPrefix: http://a\n  prioritizeVerb: p\n  weight: -2\n"},
		{name: "a weight without a prioritizer is accepted", yaml: "extenders:\n- urlPrefix: http://a\n  weight: 5\n"},
		{name: "two binders are refused", yaml: "extenders:\n- urlPrefix: http://a\n  bindVerb: b\n- urlPrefix: http://b\n  bindVerb: b\n- urlPrefix: http://c\n  bindVerb: b\n"},
		{name: "a resource managed twice is refused", yaml: "extenders:\n- urlPrefix: http://a\n  managedResources: [{name: example.com/x}]\n- urlPrefix: http://b\n  managedResources: [{name: example.com/x}, {name: example.com/y}]\n"},
		{name: "a native resource cannot be managed", yaml: "extenders:\n- urlPrefix: http://a\n  managedResources: [{name: cpu}, {name: kubernetes.io/foo}, {name: requests.example.com/x}]\n"},
		{name: "a malformed resource name is refused", yaml: "extenders:\n- urlPrefix: http://a\n  managedResources: [{name: bad_name/x}, {name: example.com/-x}, {name: \"\"}]\n"},
		{name: "no extenders at all is valid", yaml: "extenders: []\n"},
	}
	known := scheduler.Known(plugins.NewInTreeRegistry())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := upstreamErrors(t, header+tt.yaml)
			cfg, err := config.Decode([]byte(header + tt.yaml))
			if err != nil {
				t.Fatalf("kubesched refused to decode what kube-scheduler decodes: %v", err)
			}
			config.SetDefaults(cfg, known)
			var got []string
			for _, e := range config.Validate(cfg, known) {
				got = append(got, e.Error())
			}
			sort.Strings(got)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("kubesched:\n  %s\nkube-scheduler:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
			// The case's name says whether kube-scheduler refuses it.
			if refused := strings.Contains(tt.name, "refused") || strings.Contains(tt.name, "cannot"); refused != (len(want) > 0) {
				t.Errorf("kube-scheduler's errors %v; the case expects refused=%v", want, refused)
			}
		})
	}
}

// upstreamErrors decodes and validates with kube-scheduler's own code and
// returns its errors, sorted.
func upstreamErrors(t *testing.T, yaml string) []string {
	t.Helper()
	obj, _, err := upstreamscheme.Codecs.UniversalDecoder().Decode([]byte(yaml), nil, nil)
	if err != nil {
		t.Fatalf("kube-scheduler refused to decode: %v", err)
	}
	cfg := obj.(*upstreamconfig.KubeSchedulerConfiguration)
	agg := upstreamvalidation.ValidateKubeSchedulerConfiguration(cfg)
	var out []string
	if agg != nil {
		for _, e := range utilerrors.Flatten(agg).Errors() {
			out = append(out, e.Error())
		}
	}
	sort.Strings(out)
	return out
}

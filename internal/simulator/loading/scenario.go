package loading

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
)

type scenarioDoc struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Steps []stepDoc `json:"steps"`
	} `json:"spec"`
}

type stepDoc struct {
	At          string              `json:"at"`
	Name        string              `json:"name,omitempty"`
	Create      []json.RawMessage   `json:"create,omitempty"`
	Delete      []cluster.ObjectRef `json:"delete,omitempty"`
	Scale       []cluster.ScaleRef  `json:"scale,omitempty"`
	Cordon      []string            `json:"cordon,omitempty"`
	Uncordon    []string            `json:"uncordon,omitempty"`
	Drain       []string            `json:"drain,omitempty"`
	DeleteNodes []string            `json:"deleteNodes,omitempty"`
	Taint       []cluster.NodeTaint `json:"taint,omitempty"`
	Untaint     []cluster.NodeTaint `json:"untaint,omitempty"`
}

var (
	deletable = map[string]bool{"Pod": true, "Node": true, "Deployment": true, "ReplicaSet": true, "StatefulSet": true,
		"Job": true, "DaemonSet": true, "ReplicationController": true, "PodGroup": true, "CronJob": true}
	scalable = map[string]bool{"Deployment": true, "ReplicaSet": true, "StatefulSet": true, "Job": true, "ReplicationController": true}
)

// decodeScenario reads a cluster.Scenario document; errors name the field.
// namespace is -n (Options.Namespace, "" if not given): the objects its
// steps create and the objects they delete or scale that name no
// namespace are in it, as the files' objects are.
func decodeScenario(path string, doc int, js []byte, namespace string) (*cluster.Scenario, error) {
	lerr := func(obj, field, msg string) error {
		return &LoadError{File: path, Document: doc, Object: obj, Field: field, Msg: msg}
	}
	var d scenarioDoc
	strict, err := kjson.UnmarshalStrict(js, &d)
	if err != nil {
		return nil, lerr(cluster.ScenarioKind, "", err.Error())
	}
	desc := cluster.ScenarioKind + " " + d.Metadata.Name
	if len(strict) > 0 {
		return nil, lerr(desc, "", runtime.NewStrictDecodingError(strict).Error())
	}
	if d.APIVersion != cluster.ScenarioAPIVersion {
		return nil, lerr(desc, "apiVersion", fmt.Sprintf("Unsupported value: %q: supported values: %q", d.APIVersion, cluster.ScenarioAPIVersion))
	}
	if d.Metadata.Name == "" {
		return nil, lerr(cluster.ScenarioKind, "metadata.name", "Required value")
	}
	sc := &cluster.Scenario{Name: d.Metadata.Name, Source: location(path, doc)}
	var last time.Duration
	for i, sd := range d.Spec.Steps {
		f := fmt.Sprintf("spec.steps[%d]", i)
		at, err := time.ParseDuration(sd.At)
		switch {
		case sd.At == "":
			return nil, lerr(desc, f+".at", "Required value")
		case err != nil:
			return nil, lerr(desc, f+".at", fmt.Sprintf("Invalid value: %q: a duration such as 90s or 10m", sd.At))
		case at < 0:
			return nil, lerr(desc, f+".at", fmt.Sprintf("Invalid value: %q: must not be negative", sd.At))
		case at < last:
			return nil, lerr(desc, f+".at", fmt.Sprintf("Invalid value: %q: steps must be in time order (the step before is at %s)", sd.At, last))
		}
		last = at
		st := cluster.Step{At: at, Name: sd.Name, Delete: sd.Delete, Scale: sd.Scale, Cordon: sd.Cordon, Uncordon: sd.Uncordon,
			Drain: sd.Drain, DeleteNodes: sd.DeleteNodes, Taint: sd.Taint, Untaint: sd.Untaint}
		if st.Name == "" {
			st.Name = fmt.Sprintf("step %d", i+1)
		}
		for j, raw := range sd.Create {
			out := decoded{namespace: namespace}
			if err := decodeDocument(path, doc, 0, raw, true, &out); err != nil {
				var le *LoadError
				if errors.As(err, &le) {
					le.Field = fmt.Sprintf("%s.create[%d]", f, j) + prefixDot(le.Field)
					if le.Object == "" {
						le.Object = desc
					}
				}
				return nil, err
			}
			if len(out.skipped) > 0 || len(out.objs) != 1 {
				kind := "a List"
				if len(out.skipped) > 0 {
					kind = out.skipped[0]
				}
				return nil, lerr(desc, fmt.Sprintf("%s.create[%d]", f, j), fmt.Sprintf("%s cannot be created by a step: the simulator reads Nodes, Pods, workloads and the objects plugins read", kind))
			}
			st.Create = append(st.Create, out.objs[0])
		}
		for j, r := range sd.Delete {
			g := fmt.Sprintf("%s.delete[%d]", f, j)
			if !deletable[r.Kind] {
				return nil, lerr(desc, g+".kind", fmt.Sprintf("Unsupported value: %q: a step deletes a Pod, a Node or a workload", r.Kind))
			}
			if r.Name == "" {
				return nil, lerr(desc, g+".name", "Required value")
			}
			if r.Namespace == "" && r.Kind != "Node" {
				sd.Delete[j].Namespace = namespace // -n's; without it, default
			}
		}
		for j, r := range sd.Scale {
			g := fmt.Sprintf("%s.scale[%d]", f, j)
			if !scalable[r.Kind] {
				return nil, lerr(desc, g+".kind", fmt.Sprintf("Unsupported value: %q: a step scales a Deployment, ReplicaSet, StatefulSet, ReplicationController or Job", r.Kind))
			}
			if r.Name == "" {
				return nil, lerr(desc, g+".name", "Required value")
			}
			if r.Replicas < 0 {
				return nil, lerr(desc, g+".replicas", fmt.Sprintf("Invalid value: %d: must not be negative", r.Replicas))
			}
			if r.Namespace == "" {
				sd.Scale[j].Namespace = namespace
			}
		}
		for _, tl := range []struct {
			name string
			ts   []cluster.NodeTaint
		}{{"taint", sd.Taint}, {"untaint", sd.Untaint}} {
			for j, t := range tl.ts {
				g := fmt.Sprintf("%s.%s[%d]", f, tl.name, j)
				if t.Node == "" {
					return nil, lerr(desc, g+".node", "Required value")
				}
				if t.Key == "" {
					return nil, lerr(desc, g+".key", "Required value")
				}
				switch t.Effect {
				case v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute:
				default:
					return nil, lerr(desc, g+".effect", fmt.Sprintf("Unsupported value: %q: supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"", t.Effect))
				}
			}
		}
		sc.Steps = append(sc.Steps, st)
	}
	return sc, nil
}

func prefixDot(field string) string {
	if field == "" {
		return ""
	}
	return "." + field
}

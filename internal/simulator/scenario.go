package simulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"
)

// The Scenario kind: a timeline of steps simulate replays on virtual time.
//
//	apiVersion: simulation.kubesched.io/v1alpha1
//	kind: Scenario
//	metadata: {name: rollout}
//	spec:
//	  steps:
//	  - at: 10m                 # virtual time since the start
//	    name: scale web         # optional; "step N" otherwise
//	    create: [<objects>]     # Nodes, Pods, workloads, and the objects plugins read
//	    delete: [{kind: Deployment, namespace: shop, name: web}]  # Pod, Node or a workload
//	    scale: [{kind: Deployment, namespace: shop, name: web, replicas: 30}]
//	    cordon: [node-a]        # spec.unschedulable
//	    uncordon: [node-a]
//	    drain: [node-b]         # cordon, then delete its pods but DaemonSets' (as kubectl drain
//	                            # --ignore-daemonsets --force --disable-eviction: PDBs are not consulted)
//	    deleteNodes: [node-c]   # the node and its pods (the pod GC)
//	    taint: [{node: node-d, key: k, value: v, effect: NoSchedule}]
//	    untaint: [{node: node-d, key: k, effect: NoSchedule}]
//
// Pods (and workload pod templates) with the annotation
// simulation.kubesched.io/duration finish that long after they are bound.
const (
	ScenarioAPIVersion = "simulation.kubesched.io/v1alpha1"
	ScenarioKind       = "Scenario"
	// DurationAnnotation: a pod finishes (succeeds and goes away) this
	// long after it is bound, a Go duration ("90s", "2h").
	DurationAnnotation = "simulation.kubesched.io/duration"
)

// Scenario is a timeline read from a Scenario manifest.
type Scenario struct {
	Name   string
	Source string // file#document
	Steps  []Step
}

// Step is what happens at one point of virtual time.
type Step struct {
	At          time.Duration
	Name        string
	Create      []runtime.Object
	Delete      []ObjectRef
	Scale       []ScaleRef
	Cordon      []string
	Uncordon    []string
	Drain       []string
	DeleteNodes []string
	Taint       []NodeTaint
	Untaint     []NodeTaint
}

// ObjectRef names an object a step deletes.
type ObjectRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// ScaleRef sets a workload's replicas (a Job's parallelism).
type ScaleRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Replicas  int32  `json:"replicas"`
}

// NodeTaint is a taint on a node.
type NodeTaint struct {
	Node   string         `json:"node"`
	Key    string         `json:"key"`
	Value  string         `json:"value,omitempty"`
	Effect v1.TaintEffect `json:"effect"`
}

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
	At          string            `json:"at"`
	Name        string            `json:"name,omitempty"`
	Create      []json.RawMessage `json:"create,omitempty"`
	Delete      []ObjectRef       `json:"delete,omitempty"`
	Scale       []ScaleRef        `json:"scale,omitempty"`
	Cordon      []string          `json:"cordon,omitempty"`
	Uncordon    []string          `json:"uncordon,omitempty"`
	Drain       []string          `json:"drain,omitempty"`
	DeleteNodes []string          `json:"deleteNodes,omitempty"`
	Taint       []NodeTaint       `json:"taint,omitempty"`
	Untaint     []NodeTaint       `json:"untaint,omitempty"`
}

var (
	deletable = map[string]bool{"Pod": true, "Node": true, "Deployment": true, "ReplicaSet": true, "StatefulSet": true,
		"Job": true, "DaemonSet": true, "ReplicationController": true}
	scalable = map[string]bool{"Deployment": true, "ReplicaSet": true, "StatefulSet": true, "Job": true, "ReplicationController": true}
)

// decodeScenario reads a Scenario document; errors name the field.
func decodeScenario(path string, doc int, js []byte) (*Scenario, error) {
	lerr := func(obj, field, msg string) error {
		return &LoadError{File: path, Document: doc, Object: obj, Field: field, Msg: msg}
	}
	var d scenarioDoc
	strict, err := kjson.UnmarshalStrict(js, &d)
	if err != nil {
		return nil, lerr(ScenarioKind, "", err.Error())
	}
	desc := ScenarioKind + " " + d.Metadata.Name
	if len(strict) > 0 {
		return nil, lerr(desc, "", runtime.NewStrictDecodingError(strict).Error())
	}
	if d.APIVersion != ScenarioAPIVersion {
		return nil, lerr(desc, "apiVersion", fmt.Sprintf("Unsupported value: %q: supported values: %q", d.APIVersion, ScenarioAPIVersion))
	}
	if d.Metadata.Name == "" {
		return nil, lerr(ScenarioKind, "metadata.name", "Required value")
	}
	sc := &Scenario{Name: d.Metadata.Name, Source: fmt.Sprintf("%s#%d", path, doc)}
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
		st := Step{At: at, Name: sd.Name, Delete: sd.Delete, Scale: sd.Scale, Cordon: sd.Cordon, Uncordon: sd.Uncordon,
			Drain: sd.Drain, DeleteNodes: sd.DeleteNodes, Taint: sd.Taint, Untaint: sd.Untaint}
		if st.Name == "" {
			st.Name = fmt.Sprintf("step %d", i+1)
		}
		for j, raw := range sd.Create {
			var out decoded
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
		}
		for _, tl := range []struct {
			name string
			ts   []NodeTaint
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

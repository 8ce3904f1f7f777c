package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	fw "github.com/kubesched/kubesched/test/integration/framework"
)

// testExtender is an extender served by the test: each verb's handler, if
// set, answers; a verb without one answers 500.
type testExtender struct {
	filter     func(a *extenderv1.ExtenderArgs) extenderv1.ExtenderFilterResult
	prioritize func(a *extenderv1.ExtenderArgs) extenderv1.HostPriorityList
	bind       func(a *extenderv1.ExtenderBindingArgs) extenderv1.ExtenderBindingResult
	preempt    func(a *extenderv1.ExtenderPreemptionArgs) extenderv1.ExtenderPreemptionResult
}

// start serves the extender until the test ends; it returns its URL.
func (x testExtender) start(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var out interface{}
		switch strings.TrimPrefix(r.URL.Path, "/") {
		case "filter":
			var a extenderv1.ExtenderArgs
			if x.filter != nil && json.NewDecoder(r.Body).Decode(&a) == nil {
				out = x.filter(&a)
			}
		case "prioritize":
			var a extenderv1.ExtenderArgs
			if x.prioritize != nil && json.NewDecoder(r.Body).Decode(&a) == nil {
				out = x.prioritize(&a)
			}
		case "bind":
			var a extenderv1.ExtenderBindingArgs
			if x.bind != nil && json.NewDecoder(r.Body).Decode(&a) == nil {
				out = x.bind(&a)
			}
		case "preempt":
			var a extenderv1.ExtenderPreemptionArgs
			if x.preempt != nil && json.NewDecoder(r.Body).Decode(&a) == nil {
				out = x.preempt(&a)
			}
		}
		if out == nil {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// withoutNodes filters out the named nodes with a message each, passing
// the others back as Node objects (an extender that is not
// node-cache-capable).
func withoutNodes(msgs map[string]string) func(a *extenderv1.ExtenderArgs) extenderv1.ExtenderFilterResult {
	return func(a *extenderv1.ExtenderArgs) extenderv1.ExtenderFilterResult {
		res := extenderv1.ExtenderFilterResult{Nodes: &v1.NodeList{}, FailedNodes: extenderv1.FailedNodesMap{}}
		for _, n := range a.Nodes.Items {
			if msg, ok := msgs[n.Name]; ok {
				res.FailedNodes[n.Name] = msg
			} else {
				res.Nodes.Items = append(res.Nodes.Items, n)
			}
		}
		return res
	}
}

// bindThrough binds through the API, as a binding extender must.
func bindThrough(c kubernetes.Interface) func(a *extenderv1.ExtenderBindingArgs) extenderv1.ExtenderBindingResult {
	return func(a *extenderv1.ExtenderBindingArgs) extenderv1.ExtenderBindingResult {
		err := c.CoreV1().Pods(a.PodNamespace).Bind(context.Background(), &v1.Binding{
			ObjectMeta: metav1.ObjectMeta{Namespace: a.PodNamespace, Name: a.PodName, UID: a.PodUID},
			Target:     v1.ObjectReference{Kind: "Node", Name: a.Node},
		}, metav1.CreateOptions{})
		if err != nil {
			return extenderv1.ExtenderBindingResult{Error: err.Error()}
		}
		return extenderv1.ExtenderBindingResult{}
	}
}

func extenderScenarios() []scenario {
	return []scenario{
		{
			name: "an extender filters, prioritizes and binds",
			setup: func(t *testing.T, c kubernetes.Interface) {
				fw.CreateNode(t, c, "node-1", "4", "8Gi", 110, map[string]string{"pool": "reserved"})
				fw.CreateNode(t, c, "node-2", "4", "8Gi", 110, nil)
				fw.CreateNode(t, c, "node-3", "4", "8Gi", 110, nil)
			},
			config: func(t *testing.T, c kubernetes.Interface) (string, string) {
				url := testExtender{
					filter: withoutNodes(map[string]string{"node-1": "node-1 is reserved"}),
					prioritize: func(a *extenderv1.ExtenderArgs) extenderv1.HostPriorityList {
						var out extenderv1.HostPriorityList
						for _, n := range a.Nodes.Items {
							score := int64(0)
							if n.Name == "node-3" {
								score = 10
							}
							out = append(out, extenderv1.HostPriority{Host: n.Name, Score: score})
						}
						return out
					},
					bind: bindThrough(c),
				}.start(t)
				return fmt.Sprintf("extenders:\n- urlPrefix: %s\n  filterVerb: filter\n  prioritizeVerb: prioritize\n  weight: 1\n  bindVerb: bind\n", url), url
			},
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				fw.CreatePod(t, c, pod("placed", "500m"))
				node, _ := waitBound(t, c, "placed", 60*time.Second)
				o.exact["placed: node"] = node
				o.exact["placed: Scheduled events"] = eventSummary(t, c, "placed", "Scheduled")
				reserved := pod("reserved-only", "500m")
				reserved.Spec.NodeSelector = map[string]string{"pool": "reserved"}
				fw.CreatePod(t, c, reserved)
				o.exact["reserved-only: condition"] = waitCondition(t, c, "reserved-only")
				o.exact["reserved-only: FailedScheduling events"] = eventSummary(t, c, "reserved-only", "FailedScheduling")
			},
		},
		{
			name: "an ignorable extender that fails is skipped",
			setup: func(t *testing.T, c kubernetes.Interface) {
				fw.CreateNode(t, c, "node-1", "4", "8Gi", 110, nil)
			},
			config: func(t *testing.T, c kubernetes.Interface) (string, string) {
				url := testExtender{}.start(t)
				return fmt.Sprintf("extenders:\n- urlPrefix: %s\n  filterVerb: filter\n  prioritizeVerb: prioritize\n  weight: 1\n  bindVerb: bind\n  ignorable: true\n", url), url
			},
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				fw.CreatePod(t, c, pod("p", "500m"))
				node, _ := waitBound(t, c, "p", 60*time.Second)
				o.exact["node"] = node
				o.exact["Scheduled events"] = eventSummary(t, c, "p", "Scheduled")
			},
		},
		{
			name: "an extender that fails and is not ignorable fails the pod with its error",
			setup: func(t *testing.T, c kubernetes.Interface) {
				fw.CreateNode(t, c, "node-1", "4", "8Gi", 110, nil)
				fw.CreateNode(t, c, "node-2", "4", "8Gi", 110, nil)
			},
			config: func(t *testing.T, c kubernetes.Interface) (string, string) {
				url := testExtender{}.start(t)
				return fmt.Sprintf("extenders:\n- urlPrefix: %s\n  filterVerb: filter\n", url), url
			},
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				fw.CreatePod(t, c, pod("p", "500m"))
				o.exact["condition"] = waitCondition(t, c, "p")
				o.exact["FailedScheduling events"] = eventSummary(t, c, "p", "FailedScheduling")
			},
		},
		{
			// managedResources: the extender is asked only about pods that
			// request its resource, which NodeResourcesFit then ignores
			// (ignoredByScheduler): no node has it in its allocatable.
			name: "an extender managing an ignored resource is asked only about the pods that request it",
			setup: func(t *testing.T, c kubernetes.Interface) {
				fw.CreateNode(t, c, "node-big", "8", "16Gi", 110, nil)
				fw.CreateNode(t, c, "node-small", "2", "4Gi", 110, nil)
			},
			config: func(t *testing.T, c kubernetes.Interface) (string, string) {
				url := testExtender{filter: withoutNodes(map[string]string{"node-big": "no licence server reachable"})}.start(t)
				return fmt.Sprintf("extenders:\n- urlPrefix: %s\n  filterVerb: filter\n  managedResources:\n  - name: example.com/licence\n    ignoredByScheduler: true\n", url), url
			},
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				licensed := pod("licensed", "500m")
				licensed.Spec.Containers[0].Resources.Requests["example.com/licence"] = resource.MustParse("1")
				licensed.Spec.Containers[0].Resources.Limits = v1.ResourceList{"example.com/licence": resource.MustParse("1")}
				fw.CreatePod(t, c, licensed)
				node, _ := waitBound(t, c, "licensed", 60*time.Second)
				o.exact["licensed: node"] = node
				fw.CreatePod(t, c, pod("plain", "500m"))
				node, _ = waitBound(t, c, "plain", 60*time.Second)
				o.exact["plain: node"] = node
			},
		},
		{
			name: "an extender narrows preemption to the node it keeps",
			setup: func(t *testing.T, c kubernetes.Interface) {
				fw.CreateNode(t, c, "node-1", "1", "8Gi", 110, nil)
				fw.CreateNode(t, c, "node-2", "1", "8Gi", 110, nil)
				createBound(t, c, withPriority(pod("low-1", "1"), 1), "node-1")
				createBound(t, c, withPriority(pod("low-2", "1"), 1), "node-2")
			},
			config: func(t *testing.T, c kubernetes.Interface) (string, string) {
				url := testExtender{
					preempt: func(a *extenderv1.ExtenderPreemptionArgs) extenderv1.ExtenderPreemptionResult {
						out := extenderv1.ExtenderPreemptionResult{NodeNameToMetaVictims: map[string]*extenderv1.MetaVictims{}}
						for node, v := range a.NodeNameToVictims {
							if node != "node-2" {
								continue
							}
							mv := &extenderv1.MetaVictims{NumPDBViolations: v.NumPDBViolations}
							for _, p := range v.Pods {
								mv.Pods = append(mv.Pods, &extenderv1.MetaPod{UID: string(p.UID)})
							}
							out.NodeNameToMetaVictims[node] = mv
						}
						return out
					},
				}.start(t)
				return fmt.Sprintf("extenders:\n- urlPrefix: %s\n  preemptVerb: preempt\n", url), url
			},
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				fw.CreatePod(t, c, withPriority(pod("high", "1"), 10))
				fw.Eventually(t, 30*time.Second, "the preemptor nominated", func() (bool, error) {
					p, err := getPod(c, "default", "high")
					return err == nil && p.Status.NominatedNodeName != "", err
				})
				p, _ := getPod(c, "default", "high")
				o.exact["nominated node"] = p.Status.NominatedNodeName
				o.exact["Preempted events on low-2"] = eventSummary(t, c, "low-2", "Preempted")
				o.exact["Preempted events on low-1"] = eventSummaryNow(t, c, "low-1", "Preempted")
				forceDelete(t, c, "low-2") // no kubelet ends its grace period
				node, _ := waitBound(t, c, "high", 60*time.Second)
				o.exact["node"] = node
			},
		},
	}
}

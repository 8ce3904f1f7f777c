// Package extender is the HTTP client of KubeSchedulerConfiguration's
// extenders: kube-scheduler v1.37's HTTPExtender behaviour (its requests,
// its answers' handling, its errors), in our own code. The wire types are
// k8s.io/kube-scheduler/extender/v1's, which carry no json tags: the keys
// are the Go field names ("Pod", "Nodes", "NodeNames", "FailedNodes", ...).
package extender

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/sets"
	restclient "k8s.io/client-go/rest"
	configv1 "k8s.io/kube-scheduler/config/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesched/kubesched/pkg/framework"
)

// DefaultTimeout is httpTimeout when the configuration leaves it 0.
const DefaultTimeout = 5 * time.Second

// HTTP is one configured extender.
type HTTP struct {
	url                                               string
	filterVerb, prioritizeVerb, bindVerb, preemptVerb string
	weight                                            int64
	client                                            *http.Client
	nodeCacheCapable                                  bool
	managed                                           sets.Set[string]
	ignorable                                         bool
}

var _ framework.Extender = &HTTP{}

// New builds the client of one extender of the configuration: its TLS
// settings (enableHTTPS without a CA skips verification, as upstream),
// its timeout (5 s when 0).
func New(cfg *configv1.Extender) (*HTTP, error) {
	timeout := cfg.HTTPTimeout.Duration
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	rt, err := transport(cfg)
	if err != nil {
		return nil, err
	}
	managed := sets.New[string]()
	for _, r := range cfg.ManagedResources {
		managed.Insert(r.Name)
	}
	return &HTTP{
		url:              cfg.URLPrefix,
		filterVerb:       cfg.FilterVerb,
		prioritizeVerb:   cfg.PrioritizeVerb,
		bindVerb:         cfg.BindVerb,
		preemptVerb:      cfg.PreemptVerb,
		weight:           cfg.Weight,
		client:           &http.Client{Transport: rt, Timeout: timeout},
		nodeCacheCapable: cfg.NodeCacheCapable,
		managed:          managed,
		ignorable:        cfg.Ignorable,
	}, nil
}

func transport(cfg *configv1.Extender) (http.RoundTripper, error) {
	var rc restclient.Config
	if t := cfg.TLSConfig; t != nil {
		rc.TLSClientConfig = restclient.TLSClientConfig{
			Insecure: t.Insecure, ServerName: t.ServerName,
			CertFile: t.CertFile, KeyFile: t.KeyFile, CAFile: t.CAFile,
			CertData: t.CertData, KeyData: t.KeyData, CAData: t.CAData,
		}
	}
	if cfg.EnableHTTPS && len(rc.CAFile) == 0 && len(rc.CAData) == 0 {
		rc.Insecure = true
	}
	tlsConfig, err := restclient.TLSConfigFor(&rc)
	if err != nil {
		return nil, err
	}
	return utilnet.SetTransportDefaults(&http.Transport{TLSClientConfig: tlsConfig}), nil
}

// Name is the URL prefix, as upstream names an extender.
func (h *HTTP) Name() string { return h.url }

// IsIgnorable implements framework.Extender.
func (h *HTTP) IsIgnorable() bool { return h.ignorable }

// IsBinder implements framework.Extender.
func (h *HTTP) IsBinder() bool { return h.bindVerb != "" }

// IsFilter implements framework.Extender.
func (h *HTTP) IsFilter() bool { return h.filterVerb != "" }

// IsPrioritizer implements framework.Extender.
func (h *HTTP) IsPrioritizer() bool { return h.prioritizeVerb != "" }

// SupportsPreemption implements framework.Extender.
func (h *HTTP) SupportsPreemption() bool { return h.preemptVerb != "" }

// IsInterested implements framework.Extender: no managed resources, or
// one of them named in a container's or an init container's requests or
// limits (not the pod-level resources, and not sidecars' restart policy:
// upstream reads exactly these two lists).
func (h *HTTP) IsInterested(pod *v1.Pod) bool {
	if h.managed.Len() == 0 {
		return true
	}
	return h.names(pod.Spec.Containers) || h.names(pod.Spec.InitContainers)
}

func (h *HTTP) names(cs []v1.Container) bool {
	for i := range cs {
		for name := range cs[i].Resources.Requests {
			if h.managed.Has(string(name)) {
				return true
			}
		}
		for name := range cs[i].Resources.Limits {
			if h.managed.Has(string(name)) {
				return true
			}
		}
	}
	return false
}

// args is the request body of filter and prioritize: node names for a
// node-cache-capable extender, whole Node objects otherwise.
func (h *HTTP) args(pod *v1.Pod, nodes []*framework.NodeInfo) *extenderv1.ExtenderArgs {
	a := &extenderv1.ExtenderArgs{Pod: pod}
	if h.nodeCacheCapable {
		names := make([]string, 0, len(nodes))
		for _, n := range nodes {
			names = append(names, n.NodeName())
		}
		a.NodeNames = &names
	} else {
		list := &v1.NodeList{}
		for _, n := range nodes {
			list.Items = append(list.Items, *n.Node())
		}
		a.Nodes = list
	}
	return a
}

// Filter implements framework.Extender. A node-cache-capable extender
// answers with names, which must be among the nodes sent; otherwise with
// Node objects, which become NodeInfos of their own, without pods (as
// upstream: what the scorers then see of those nodes is the Node alone).
func (h *HTTP) Filter(pod *v1.Pod, nodes []*framework.NodeInfo) ([]*framework.NodeInfo, extenderv1.FailedNodesMap, extenderv1.FailedNodesMap, error) {
	if h.filterVerb == "" {
		return nodes, extenderv1.FailedNodesMap{}, extenderv1.FailedNodesMap{}, nil
	}
	var result extenderv1.ExtenderFilterResult
	if err := h.send(h.filterVerb, h.args(pod, nodes), &result); err != nil {
		return nil, nil, nil, err
	}
	if result.Error != "" {
		return nil, nil, nil, errors.New(result.Error)
	}
	var out []*framework.NodeInfo
	switch {
	case h.nodeCacheCapable && result.NodeNames != nil:
		byName := make(map[string]*framework.NodeInfo, len(nodes))
		for _, n := range nodes {
			byName[n.NodeName()] = n
		}
		out = make([]*framework.NodeInfo, len(*result.NodeNames))
		for i, name := range *result.NodeNames {
			n, ok := byName[name]
			if !ok {
				return nil, nil, nil, fmt.Errorf("extender %q claims a filtered node %q which is not found in the input node list", h.url, name)
			}
			out[i] = n
		}
	case result.Nodes != nil:
		out = make([]*framework.NodeInfo, len(result.Nodes.Items))
		for i := range result.Nodes.Items {
			out[i] = framework.NewNodeInfo()
			out[i].SetNode(&result.Nodes.Items[i])
		}
	}
	return out, result.FailedNodes, result.FailedAndUnresolvableNodes, nil
}

// Prioritize implements framework.Extender. Without a prioritize verb
// every node scores 0 with weight 0.
func (h *HTTP) Prioritize(pod *v1.Pod, nodes []*framework.NodeInfo) (*extenderv1.HostPriorityList, int64, error) {
	if h.prioritizeVerb == "" {
		list := make(extenderv1.HostPriorityList, 0, len(nodes))
		for _, n := range nodes {
			list = append(list, extenderv1.HostPriority{Host: n.NodeName()})
		}
		return &list, 0, nil
	}
	var result extenderv1.HostPriorityList
	if err := h.send(h.prioritizeVerb, h.args(pod, nodes), &result); err != nil {
		return nil, 0, err
	}
	return &result, h.weight, nil
}

// Bind implements framework.Extender.
func (h *HTTP) Bind(b *v1.Binding) error {
	if !h.IsBinder() {
		return fmt.Errorf("unexpected empty bindVerb in extender")
	}
	var result extenderv1.ExtenderBindingResult
	args := &extenderv1.ExtenderBindingArgs{PodName: b.Name, PodNamespace: b.Namespace, PodUID: b.UID, Node: b.Target.Name}
	if err := h.send(h.bindVerb, args, &result); err != nil {
		return err
	}
	if result.Error != "" {
		return errors.New(result.Error)
	}
	return nil
}

// ProcessPreemption implements framework.Extender: the candidates go out
// as pods (or as UIDs to a node-cache-capable extender); the answer is
// always UIDs, resolved against the nodes' pods.
func (h *HTTP) ProcessPreemption(pod *v1.Pod, victims map[string]*extenderv1.Victims, nodeInfos framework.NodeInfoLister) (map[string]*extenderv1.Victims, error) {
	if !h.SupportsPreemption() {
		return nil, fmt.Errorf("preempt verb is not defined for extender %v but run into ProcessPreemption", h.url)
	}
	args := &extenderv1.ExtenderPreemptionArgs{Pod: pod}
	if h.nodeCacheCapable {
		args.NodeNameToMetaVictims = metaVictims(victims)
	} else {
		args.NodeNameToVictims = victims
	}
	var result extenderv1.ExtenderPreemptionResult
	if err := h.send(h.preemptVerb, args, &result); err != nil {
		return nil, err
	}
	out := map[string]*extenderv1.Victims{}
	for node, mv := range result.NodeNameToMetaVictims {
		ni, err := nodeInfos.Get(node)
		if err != nil {
			return nil, err
		}
		v := &extenderv1.Victims{Pods: []*v1.Pod{}, NumPDBViolations: mv.NumPDBViolations}
		for _, mp := range mv.Pods {
			p := podByUID(ni, mp.UID)
			if p == nil {
				return nil, fmt.Errorf("extender: %v claims to preempt pod (UID: %v) on node: %v, but the pod is not found on that node", h.url, mp, ni.NodeName())
			}
			v.Pods = append(v.Pods, p)
		}
		out[node] = v
	}
	return out, nil
}

func podByUID(ni *framework.NodeInfo, uid string) *v1.Pod {
	for _, p := range ni.Pods() {
		if string(p.Pod.UID) == uid {
			return p.Pod
		}
	}
	return nil
}

func metaVictims(victims map[string]*extenderv1.Victims) map[string]*extenderv1.MetaVictims {
	out := make(map[string]*extenderv1.MetaVictims, len(victims))
	for node, v := range victims {
		mv := &extenderv1.MetaVictims{Pods: []*extenderv1.MetaPod{}, NumPDBViolations: v.NumPDBViolations}
		for _, p := range v.Pods {
			mv.Pods = append(mv.Pods, &extenderv1.MetaPod{UID: string(p.UID)})
		}
		out[node] = mv
	}
	return out
}

// send POSTs args as JSON to URLPrefix/verb and decodes a 200's body into
// result; any other status is an error with upstream's message.
func (h *HTTP) send(verb string, args, result interface{}) error {
	body, err := json.Marshal(args)
	if err != nil {
		return err
	}
	url := strings.TrimRight(h.url, "/") + "/" + verb
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("failed %v with extender at URL %v, code %v", verb, url, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(result)
}

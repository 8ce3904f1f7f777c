package testing

import (
	"context"
	"sort"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/pkg/framework"
)

// AffinityTerm builds a pod affinity term selecting app=value over
// topologyKey; namespaces may be given.
func AffinityTerm(topologyKey, app string, namespaces ...string) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{TopologyKey: topologyKey, Namespaces: namespaces,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}
}

func (p *PodWrapper) affinity() *v1.Affinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	return p.Spec.Affinity
}

// PodAffinity adds a required pod affinity term.
func (p *PodWrapper) PodAffinity(t v1.PodAffinityTerm) *PodWrapper {
	a := p.affinity()
	if a.PodAffinity == nil {
		a.PodAffinity = &v1.PodAffinity{}
	}
	a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, t)
	return p
}

// PodAntiAffinity adds a required pod anti-affinity term.
func (p *PodWrapper) PodAntiAffinity(t v1.PodAffinityTerm) *PodWrapper {
	a := p.affinity()
	if a.PodAntiAffinity == nil {
		a.PodAntiAffinity = &v1.PodAntiAffinity{}
	}
	a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, t)
	return p
}

// PreferredPodAffinity adds a preferred pod affinity term.
func (p *PodWrapper) PreferredPodAffinity(weight int32, t v1.PodAffinityTerm) *PodWrapper {
	a := p.affinity()
	if a.PodAffinity == nil {
		a.PodAffinity = &v1.PodAffinity{}
	}
	a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
		v1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: t})
	return p
}

// PreferredPodAntiAffinity adds a preferred pod anti-affinity term.
func (p *PodWrapper) PreferredPodAntiAffinity(weight int32, t v1.PodAffinityTerm) *PodWrapper {
	a := p.affinity()
	if a.PodAntiAffinity == nil {
		a.PodAntiAffinity = &v1.PodAntiAffinity{}
	}
	a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
		v1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: t})
	return p
}

// SpreadConstraint adds a topology spread constraint over pods with app=value.
func (p *PodWrapper) SpreadConstraint(maxSkew int32, key string, when v1.UnsatisfiableConstraintAction, app string) *PodWrapper {
	p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, v1.TopologySpreadConstraint{
		MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: when,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
	})
	return p
}

// LastSpreadConstraint returns the last constraint added, to set its
// optional fields.
func (p *PodWrapper) LastSpreadConstraint() *v1.TopologySpreadConstraint {
	return &p.Spec.TopologySpreadConstraints[len(p.Spec.TopologySpreadConstraints)-1]
}

// OwnedBy sets a controller owner reference.
func (p *PodWrapper) OwnedBy(apiVersion, kind, name string) *PodWrapper {
	yes := true
	p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name,
		UID: types.UID("uid-" + name), Controller: &yes})
	return p
}

// Verdict is a Filter outcome on one node: "" when it fits, else the code
// and first reason.
func Verdict(st *framework.Status) string {
	if st.IsSuccess() {
		return ""
	}
	r := st.Reasons()
	if len(r) == 0 {
		return st.Code().String()
	}
	return st.Code().String() + ": " + r[0]
}

// RunFilterAll runs PreFilter over all nodes then Filter on each, and
// returns each node's Verdict (a PreFilter rejection applies to all).
func RunFilterAll(pl framework.Plugin, pod *v1.Pod, nodes ...*framework.NodeInfo) map[string]string {
	ctx := context.Background()
	state := framework.NewCycleState()
	out := map[string]string{}
	if pf, ok := pl.(framework.PreFilterPlugin); ok {
		_, st := pf.PreFilter(ctx, state, pod, nodes)
		if st.IsSkip() {
			for _, ni := range nodes {
				out[ni.NodeName()] = ""
			}
			return out
		}
		if !st.IsSuccess() {
			for _, ni := range nodes {
				out[ni.NodeName()] = Verdict(st)
			}
			return out
		}
	}
	for _, ni := range nodes {
		out[ni.NodeName()] = Verdict(pl.(framework.FilterPlugin).Filter(ctx, state, pod, ni))
	}
	return out
}

// NodeInfos places pods on their spec.nodeName among nodes, sorted by name.
func NodeInfos(nodes []*v1.Node, pods []*v1.Pod) []*framework.NodeInfo {
	byName := map[string]*framework.NodeInfo{}
	var out []*framework.NodeInfo
	for _, n := range nodes {
		ni := NodeInfo(n)
		byName[n.Name] = ni
		out = append(out, ni)
	}
	for _, p := range pods {
		if ni := byName[p.Spec.NodeName]; ni != nil {
			ni.AddPod(p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NodeName() < out[j].NodeName() })
	return out
}

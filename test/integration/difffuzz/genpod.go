package difffuzz

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// drawPod draws a pod over the fields the default profile's plugins read.
// Assigned pods (the cluster's) get spec.nodeName and a simpler spec.
func (g *Generator) drawPod(name string, assigned bool) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: pick(g, g.namespaces...), Labels: g.podLabels()}}
	g.extra, g.statuses = nil, nil
	g.podWorkload(p)
	s := &p.Spec
	for i := range 1 + g.intn(2) {
		s.Containers = append(s.Containers, g.container(fmt.Sprintf("c%d", i)))
	}
	if g.chance(0.3) {
		for i := range 1 + g.intn(2) {
			c := g.container(fmt.Sprintf("i%d", i))
			if g.chance(0.5) {
				c.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways) // a sidecar
			}
			s.InitContainers = append(s.InitContainers, c)
		}
	}
	if g.chance(0.15) {
		s.Resources = &v1.ResourceRequirements{Requests: g.resources(0.7, false), Limits: g.resources(0.4, false)}
	}
	if g.chance(0.1) {
		s.Overhead = v1.ResourceList{v1.ResourceCPU: resource.MustParse(pick(g, "100m", "250m")), v1.ResourceMemory: resource.MustParse("64Mi")}
	}
	if g.chance(0.15) {
		s.HostNetwork = true
	}
	if g.chance(0.1) {
		// A user namespace; with hostNetwork the pod needs the node's
		// declared feature UserNamespacesHostNetwork.
		s.HostUsers = ptr.To(false)
	}
	if s.Priority == nil {
		s.Priority = ptr.To(pick(g, int32(0), 0, 100, 1000, -5))
	}
	if assigned {
		s.NodeName = pick(g, g.nodes...)
		g.storageAndClaims(p, true)
		if g.chance(0.3) {
			s.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{g.podTerm()}}}
		}
		if g.chance(0.2) {
			s.Affinity = g.affinity()
		}
		if g.chance(0.2) {
			s.TopologySpreadConstraints = g.spread(p.Labels)
		}
		return p
	}
	if g.chance(0.2) {
		s.NodeSelector = map[string]string{}
		for range g.intn(3) {
			k := pick(g, nodeKeys...)
			s.NodeSelector[k] = g.nodeValue(k)
		}
	}
	if g.chance(0.05) {
		s.NodeName = pick(g, append(g.nodes, "missing-node")...)
	}
	if g.chance(0.6) {
		s.Affinity = g.affinity()
	}
	if g.chance(0.5) {
		s.Tolerations = g.tolerations()
	}
	if g.chance(0.4) {
		s.TopologySpreadConstraints = g.spread(p.Labels)
	}
	if g.chance(0.35) {
		s.Volumes = g.volumes()
	}
	if g.chance(0.05) {
		s.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/gate"}}
	}
	g.storageAndClaims(p, false)
	if len(s.Volumes) > 0 && g.chance(0.3) {
		// A mount; bindMountOptions (NodeDeclaredFeatures infers
		// VolumeBindMountOptions) is alpha: dropped on create while off.
		m := v1.VolumeMount{Name: s.Volumes[0].Name, MountPath: "/data"}
		if g.chance(0.3) {
			m.BindMountOptions = []string{"noexec"}
		}
		s.Containers[0].VolumeMounts = append(s.Containers[0].VolumeMounts, m)
	}
	if g.chance(0.02) {
		// RestartAllContainers (NodeDeclaredFeatures infers
		// RestartAllContainersOnContainerExits), alpha.
		c := &s.Containers[0]
		c.RestartPolicy = ptr.To(v1.ContainerRestartPolicyNever)
		c.RestartPolicyRules = []v1.ContainerRestartRule{{Action: "RestartAllContainers",
			ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
	}
	return p
}

// storageAndClaims adds volumes over the storage objects, resource
// claims, and a request of the extended resource a DeviceClass provides,
// when the cluster has them.
func (g *Generator) storageAndClaims(p *v1.Pod, assigned bool) {
	if g.st.on && g.chance(pick(g, 0.3, 0.6)) {
		for range 1 + g.intn(3) {
			v, extra := g.podVolume(p, len(p.Spec.Volumes), assigned)
			p.Spec.Volumes = append(p.Spec.Volumes, v)
			g.extra = append(g.extra, extra...)
		}
	}
	if g.dra.on && g.chance(0.35) {
		extra, statuses := g.podClaims(p, assigned)
		g.extra = append(g.extra, extra...)
		g.statuses = append(g.statuses, statuses...)
	}
	if !assigned && g.dra.extended && g.chance(0.2) {
		q := resource.MustParse(pick(g, "1", "2"))
		c := &p.Spec.Containers[0]
		if c.Resources.Requests == nil {
			c.Resources.Requests = v1.ResourceList{}
		}
		if c.Resources.Limits == nil {
			c.Resources.Limits = v1.ResourceList{}
		}
		c.Resources.Requests[draExtended], c.Resources.Limits[draExtended] = q, q
	}
}

// podLabels draws labels (none, some, or empty).
func (g *Generator) podLabels() map[string]string {
	if g.chance(0.1) {
		return nil
	}
	l := map[string]string{}
	for range g.intn(4) {
		l[pick(g, podKeys...)] = pick(g, podValues...)
	}
	return l
}

// container draws a container: image, requests/limits (or none), ports.
func (g *Generator) container(name string) v1.Container {
	c := v1.Container{Name: name, Image: pick(g, imageNames...)}
	switch g.intn(5) {
	case 0: // no resources
	case 1: // limits only: requests default to them
		c.Resources.Limits = g.resources(0.6, true)
	case 2:
		c.Resources.Requests = g.resources(0.6, true)
		c.Resources.Limits = c.Resources.Requests.DeepCopy()
	default:
		c.Resources.Requests = g.resources(0.6, true)
		if g.chance(0.4) {
			c.Resources.Limits = g.resources(0.5, true)
		}
	}
	if g.chance(0.25) {
		for range 1 + g.intn(2) {
			port := v1.ContainerPort{ContainerPort: pick(g, int32(80), 8080, 53), Protocol: pick(g, v1.ProtocolTCP, v1.ProtocolUDP, v1.ProtocolSCTP, "")}
			if g.chance(0.7) {
				port.HostPort = pick(g, int32(80), 8080, 53, 9000)
				port.HostIP = pick(g, "", "", "0.0.0.0", "127.0.0.1", "10.0.0.1")
			}
			c.Ports = append(c.Ports, port)
		}
	}
	return c
}

// resources draws a resource list; each resource is present with
// probability p (extended and hugepages only for containers).
func (g *Generator) resources(p float64, container bool) v1.ResourceList {
	rl := v1.ResourceList{}
	if g.chance(p) {
		rl[v1.ResourceCPU] = resource.MustParse(pick(g, "0", "100m", "500m", "1", "2", "3500m", "8", "1M"))
	}
	if g.chance(p) {
		rl[v1.ResourceMemory] = resource.MustParse(pick(g, "0", "64Mi", "512Mi", "1Gi", "4Gi", "15Gi", hugest(g)))
	}
	if container && g.chance(p/3) {
		rl[v1.ResourceEphemeralStorage] = resource.MustParse(pick(g, "1Gi", "10Gi", "50Gi"))
	}
	if container && g.chance(p/5) {
		rl[hugepages] = resource.MustParse(pick(g, "2Mi", "1Gi"))
	}
	if container && g.chance(p/5) {
		rl[extended] = resource.MustParse(pick(g, "1", "2"))
	}
	if g.chance(0.05) {
		return nil
	}
	return rl
}

// nodeValue draws a value for a node label key (numbers for gpu-count).
func (g *Generator) nodeValue(k string) string {
	switch k {
	case v1.LabelHostname:
		return pick(g, g.nodes...)
	case v1.LabelTopologyZone:
		return pick(g, zones...)
	case "gpu-count":
		return pick(g, "0", "2", "8")
	}
	return pick(g, "ssd", "hdd", "general", "spot", "r1")
}

// selectorTerm draws a node selector term: expressions of every operator,
// matchFields on metadata.name, or nothing (an empty term).
func (g *Generator) selectorTerm() v1.NodeSelectorTerm {
	var t v1.NodeSelectorTerm
	for range g.intn(3) {
		k := pick(g, nodeKeys...)
		r := v1.NodeSelectorRequirement{Key: k, Operator: pick(g, v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn, v1.NodeSelectorOpExists,
			v1.NodeSelectorOpDoesNotExist, v1.NodeSelectorOpGt, v1.NodeSelectorOpLt)}
		switch r.Operator {
		case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
			for range 1 + g.intn(2) {
				r.Values = append(r.Values, g.nodeValue(k))
			}
		case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
			r.Key = pick(g, "gpu-count", "gpu-count", k)
			r.Values = []string{pick(g, "0", "1", "4", "10")}
		}
		t.MatchExpressions = append(t.MatchExpressions, r)
	}
	if g.chance(0.15) {
		t.MatchFields = []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: pick(g, v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn), Values: []string{pick(g, g.nodes...)}}}
	}
	return t
}

// affinity draws node affinity and pod (anti-)affinity, required and
// preferred.
func (g *Generator) affinity() *v1.Affinity {
	a := &v1.Affinity{}
	if g.chance(0.5) {
		na := &v1.NodeAffinity{}
		if g.chance(0.6) {
			na.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{}
			for range 1 + g.intn(2) {
				na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = append(na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms, g.selectorTerm())
			}
		}
		for range g.intn(3) {
			na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution,
				v1.PreferredSchedulingTerm{Weight: pick(g, int32(1), 10, 50, 100), Preference: g.selectorTerm()})
		}
		a.NodeAffinity = na
	}
	if g.chance(0.5) {
		a.PodAffinity = &v1.PodAffinity{}
		a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = g.podTerms()
	}
	if g.chance(0.5) {
		a.PodAntiAffinity = &v1.PodAntiAffinity{}
		a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = g.podTerms()
	}
	return a
}

// podTerms draws required and weighted pod (anti-)affinity terms.
func (g *Generator) podTerms() ([]v1.PodAffinityTerm, []v1.WeightedPodAffinityTerm) {
	var req []v1.PodAffinityTerm
	var pref []v1.WeightedPodAffinityTerm
	for range g.intn(2) {
		req = append(req, g.podTerm())
	}
	for range g.intn(3) {
		pref = append(pref, v1.WeightedPodAffinityTerm{Weight: pick(g, int32(1), 5, 100), PodAffinityTerm: g.podTerm()})
	}
	return req, pref
}

// labelSelector draws nil (matches nothing), {} (matches everything) or a
// real selector.
func (g *Generator) labelSelector(keys []string) *metav1.LabelSelector {
	switch g.intn(5) {
	case 0:
		return nil
	case 1:
		return &metav1.LabelSelector{}
	}
	sel := &metav1.LabelSelector{}
	if g.chance(0.6) {
		sel.MatchLabels = map[string]string{pick(g, keys...): pick(g, podValues...)}
	}
	if g.chance(0.5) {
		r := metav1.LabelSelectorRequirement{Key: pick(g, keys...), Operator: pick(g, metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn, metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist)}
		if r.Operator == metav1.LabelSelectorOpIn || r.Operator == metav1.LabelSelectorOpNotIn {
			r.Values = []string{pick(g, podValues...), pick(g, podValues...)}
		}
		sel.MatchExpressions = append(sel.MatchExpressions, r)
	}
	return sel
}

// podTerm draws a pod affinity term: label selector nil/{}/real,
// namespaces, namespace selector nil/{}/real, topology key (some nodes
// lack it), matchLabelKeys/mismatchLabelKeys.
func (g *Generator) podTerm() v1.PodAffinityTerm {
	t := v1.PodAffinityTerm{LabelSelector: g.labelSelector(podKeys), TopologyKey: pick(g, topoKeys...)}
	if g.chance(0.3) {
		t.Namespaces = []string{pick(g, g.namespaces...)}
	}
	switch g.intn(4) {
	case 0:
		t.NamespaceSelector = &metav1.LabelSelector{}
	case 1:
		t.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": pick(g, "prod", "dev")}}
	}
	if g.chance(0.2) {
		t.MatchLabelKeys = []string{pick(g, podKeys...)}
	}
	if g.chance(0.15) {
		t.MismatchLabelKeys = []string{pick(g, podKeys...)}
	}
	return t
}

// tolerations draws tolerations: Exists with no key, no effect, Equal,
// each effect, Gt/Lt (rejected while TaintTolerationComparisonOperators is
// off), tolerationSeconds.
func (g *Generator) tolerations() []v1.Toleration {
	var ts []v1.Toleration
	for range 1 + g.intn(3) {
		t := v1.Toleration{Operator: pick(g, v1.TolerationOpExists, v1.TolerationOpEqual, v1.TolerationOpEqual, "", v1.TolerationOperator("Gt")),
			Effect: pick(g, "", v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute)}
		if t.Operator != v1.TolerationOpExists || g.chance(0.6) {
			t.Key = pick(g, "dedicated", "gpu", "spot", "example.com/special", v1.TaintNodeUnschedulable)
		}
		switch t.Operator {
		case v1.TolerationOpEqual, "":
			t.Value = pick(g, "", "gpu", "true")
		case "Gt":
			t.Value = "1"
		}
		if t.Effect == v1.TaintEffectNoExecute && g.chance(0.3) {
			t.TolerationSeconds = ptr.To(int64(60))
		}
		ts = append(ts, t)
	}
	return ts
}

// spread draws topology spread constraints over every field.
func (g *Generator) spread(labels map[string]string) []v1.TopologySpreadConstraint {
	var cs []v1.TopologySpreadConstraint
	for range 1 + g.intn(2) {
		c := v1.TopologySpreadConstraint{MaxSkew: pick(g, int32(1), 1, 2, 5), TopologyKey: pick(g, topoKeys...),
			WhenUnsatisfiable: pick(g, v1.DoNotSchedule, v1.ScheduleAnyway), LabelSelector: g.labelSelector(podKeys)}
		if c.WhenUnsatisfiable == v1.DoNotSchedule && g.chance(0.25) {
			c.MinDomains = ptr.To(pick(g, int32(1), 2, 4))
		}
		if g.chance(0.3) {
			c.NodeAffinityPolicy = ptr.To(pick(g, v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore))
		}
		if g.chance(0.3) {
			c.NodeTaintsPolicy = ptr.To(pick(g, v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore))
		}
		if g.chance(0.2) {
			c.MatchLabelKeys = []string{pick(g, podKeys...)}
		}
		cs = append(cs, c)
	}
	return cs
}

// volumes draws volumes: a missing PVC, generic ephemeral, image volumes,
// hostPath, emptyDir, configMap.
func (g *Generator) volumes() []v1.Volume {
	var vs []v1.Volume
	for i := range 1 + g.intn(2) {
		v := v1.Volume{Name: fmt.Sprintf("v%d", i)}
		switch g.intn(6) {
		case 0:
			v.PersistentVolumeClaim = &v1.PersistentVolumeClaimVolumeSource{ClaimName: "missing-claim"}
		case 1:
			v.Ephemeral = &v1.EphemeralVolumeSource{VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{Spec: v1.PersistentVolumeClaimSpec{
				AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}}}}
		case 2, 3:
			v.Image = &v1.ImageVolumeSource{Reference: pick(g, imageNames...), PullPolicy: v1.PullIfNotPresent}
		case 4:
			v.HostPath = &v1.HostPathVolumeSource{Path: "/data"}
		default:
			v.EmptyDir = &v1.EmptyDirVolumeSource{}
		}
		vs = append(vs, v)
	}
	return vs
}

package realgen

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The corpus has kube-prometheus' node-exporter as its one DaemonSet; an
// EKS cluster also runs the add-ons below on every node (the VPC CNI,
// kube-proxy, a log agent) and CoreDNS, written here as EKS installs
// them (their requests, priority classes, tolerations, affinity).

func requests(cpu, memory string) v1.ResourceRequirements {
	r := v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}
	if memory != "" {
		r.Requests[v1.ResourceMemory] = resource.MustParse(memory)
	}
	return r
}

// eksNodeAffinity is the add-ons' required node affinity: Linux nodes of
// the usual architectures, no Fargate or hybrid nodes.
func eksNodeAffinity() *v1.Affinity {
	return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
			{Key: v1.LabelOSStable, Operator: v1.NodeSelectorOpIn, Values: []string{"linux"}},
			{Key: v1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"amd64", "arm64"}},
			{Key: "eks.amazonaws.com/compute-type", Operator: v1.NodeSelectorOpNotIn, Values: []string{"fargate", "hybrid", "auto"}},
		}}}}}}
}

func daemonSet(ns, name string, labels map[string]string, spec v1.PodSpec) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &intstr.IntOrString{Type: intstr.String, StrVal: "10%"}}},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}

// addons are the EKS add-ons: the DaemonSets aws-node (the VPC CNI),
// kube-proxy and fluent-bit (CloudWatch Container Insights' log agent),
// and CoreDNS with its Service and PodDisruptionBudget; coredns runs
// corednsReplicas.
func addons(corednsReplicas int32) []runtime.Object {
	tolerateAll := []v1.Toleration{{Operator: v1.TolerationOpExists}}
	awsNode := daemonSet("kube-system", "aws-node", map[string]string{"k8s-app": "aws-node"}, v1.PodSpec{
		HostNetwork: true, PriorityClassName: "system-node-critical", ServiceAccountName: "aws-node",
		TerminationGracePeriodSeconds: ptr(int64(10)), Tolerations: tolerateAll, Affinity: eksNodeAffinity(),
		InitContainers: []v1.Container{{Name: "aws-vpc-cni-init", Image: "602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni-init:v1.19.2-eksbuild.1",
			Resources: requests("25m", "")}},
		Containers: []v1.Container{
			{Name: "aws-node", Image: "602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni:v1.19.2-eksbuild.1",
				Ports: []v1.ContainerPort{{Name: "metrics", ContainerPort: 61678}}, Resources: requests("25m", "")},
			{Name: "aws-eks-nodeagent", Image: "602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon/aws-network-policy-agent:v1.1.6-eksbuild.1",
				Resources: requests("25m", "")},
		},
	})
	kubeProxy := daemonSet("kube-system", "kube-proxy", map[string]string{"k8s-app": "kube-proxy"}, v1.PodSpec{
		HostNetwork: true, PriorityClassName: "system-node-critical", ServiceAccountName: "kube-proxy",
		Tolerations: tolerateAll, Affinity: eksNodeAffinity(),
		Containers: []v1.Container{{Name: "kube-proxy", Image: "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/kube-proxy:v1.37.2-minimal-eksbuild.1",
			Resources: requests("100m", "")}},
	})
	fluentBit := daemonSet("amazon-cloudwatch", "fluent-bit", map[string]string{"k8s-app": "fluent-bit"}, v1.PodSpec{
		ServiceAccountName: "fluent-bit", TerminationGracePeriodSeconds: ptr(int64(10)),
		Tolerations: []v1.Toleration{{Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
			{Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}},
		Containers: []v1.Container{{Name: "fluent-bit", Image: "public.ecr.aws/aws-observability/aws-for-fluent-bit:2.32.5",
			Resources: v1.ResourceRequirements{Requests: requests("500m", "100Mi").Requests,
				Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("200Mi")}}}},
	})
	dnsLabels := map[string]string{"k8s-app": "kube-dns", "eks.amazonaws.com/component": "coredns"}
	dnsSelector := &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns", "eks.amazonaws.com/component": "coredns"}}
	affinity := eksNodeAffinity()
	affinity.PodAntiAffinity = &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{
		Weight: 100, PodAffinityTerm: v1.PodAffinityTerm{TopologyKey: v1.LabelHostname,
			LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k8s-app", Operator: metav1.LabelSelectorOpIn, Values: []string{"kube-dns"}}}}}}}}
	coredns := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: "kube-system", Labels: dnsLabels},
		Spec: appsv1.DeploymentSpec{Replicas: ptr(corednsReplicas), Selector: dnsSelector,
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &intstr.IntOrString{IntVal: 1}}},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: dnsLabels}, Spec: v1.PodSpec{
				PriorityClassName: "system-cluster-critical", ServiceAccountName: "coredns", DNSPolicy: v1.DNSDefault,
				Tolerations: []v1.Toleration{{Key: "CriticalAddonsOnly", Operator: v1.TolerationOpExists},
					{Key: "node-role.kubernetes.io/control-plane", Effect: v1.TaintEffectNoSchedule}},
				Affinity: affinity,
				TopologySpreadConstraints: []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone,
					WhenUnsatisfiable: v1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}}}},
				Containers: []v1.Container{{Name: "coredns", Image: "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/coredns:v1.11.4-eksbuild.2",
					Ports: []v1.ContainerPort{{Name: "dns", ContainerPort: 53, Protocol: v1.ProtocolUDP}, {Name: "dns-tcp", ContainerPort: 53, Protocol: v1.ProtocolTCP}},
					Resources: v1.ResourceRequirements{Requests: requests("100m", "70Mi").Requests,
						Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("170Mi")}}}},
			}},
		},
	}
	kubeDNS := &v1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: "kube-dns", Namespace: "kube-system", Labels: map[string]string{"k8s-app": "kube-dns"}},
		Spec: v1.ServiceSpec{Selector: map[string]string{"k8s-app": "kube-dns"}, ClusterIP: "172.20.0.10",
			Ports: []v1.ServicePort{{Name: "dns", Port: 53, Protocol: v1.ProtocolUDP}, {Name: "dns-tcp", Port: 53, Protocol: v1.ProtocolTCP}}},
	}
	pdb := &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: "kube-system"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &intstr.IntOrString{IntVal: 1}, Selector: dnsSelector.DeepCopy()},
	}
	return []runtime.Object{awsNode, kubeProxy, fluentBit, coredns, kubeDNS, pdb}
}

func ptr[T any](v T) *T { return &v }

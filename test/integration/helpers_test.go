package integration

import (
	"context"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// allBound is true when n pods named prefix* exist in default, all bound.
func allBound(c kubernetes.Interface, prefix string, n int) (bool, error) {
	pods, err := c.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	count := 0
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, prefix) {
			if p.Spec.NodeName == "" {
				return false, nil
			}
			count++
		}
	}
	return count == n, nil
}

// overcommitted lists nodes whose bound pods request more cpu than allocatable.
func overcommitted(c kubernetes.Interface) ([]string, error) {
	nodes, err := c.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	pods, err := c.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	used := map[string]*resource.Quantity{}
	count := map[string]int64{}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" {
			continue
		}
		if used[p.Spec.NodeName] == nil {
			used[p.Spec.NodeName] = resource.NewMilliQuantity(0, resource.DecimalSI)
		}
		for _, ctr := range p.Spec.Containers {
			if q, ok := ctr.Resources.Requests[v1.ResourceCPU]; ok {
				used[p.Spec.NodeName].Add(q)
			}
		}
		count[p.Spec.NodeName]++
	}
	var out []string
	for _, n := range nodes.Items {
		if u := used[n.Name]; u != nil && u.Cmp(n.Status.Allocatable[v1.ResourceCPU]) > 0 {
			out = append(out, n.Name+" cpu "+u.String())
		}
		if pods := n.Status.Allocatable[v1.ResourcePods]; count[n.Name] > pods.Value() {
			out = append(out, n.Name+" pods")
		}
	}
	return out, nil
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

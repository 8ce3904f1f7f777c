package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/internal/simulator/loading"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/test/integration/framework"
)

// TestJobPodGroupsMatchKubeControllerManager: with WorkloadWithJob (alpha),
// kube-controller-manager v1.37.2's Job controller gives each new Job a
// Workload and a PodGroup and puts the Job's pods in it; simulate plays
// that controller. Both sides get the same Jobs (the simulator reads them
// as the API server stored them, UIDs included) and the PodGroups and pods
// they make are compared: names (which hash the Job's UID), spec, owners,
// and each pod's group.
func TestJobPodGroupsMatchKubeControllerManager(t *testing.T) {
	gates := "--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true,WorkloadWithJob=true"
	cp := framework.StartControlPlaneWith(t, "--runtime-config=scheduling.k8s.io/v1beta1=true", gates)
	framework.StartControllerManager(t, cp, "job", gates)
	c := cp.Client
	ctx := context.Background()
	const ns = "jobs"
	framework.CreateNamespace(t, c, ns)
	framework.CreateNode(t, c, "plain", "8", "16Gi", 110, nil)
	pod := func(app string) *st.PodWrapper {
		return st.MakePod().Namespace(ns).Label("app", app).Req(map[v1.ResourceName]string{v1.ResourceCPU: "100m"})
	}
	three := int32(3)
	for _, j := range []*st.JobWrapper{
		st.MakeJob("train", 3, &three, pod("train")).GangIn("topology.kubernetes.io/rack"),
		st.MakeJob("plain-job-with-a-name-of-fifty-five-characters-abcdefgh", 2, &three, pod("plain")),
	} {
		createWorkload(t, c, ns, j.Obj())
	}
	var real []schedulingv1beta1.PodGroup
	framework.Eventually(t, 90*time.Second, "kube-controller-manager creates 2 PodGroups and 5 pods", func() (bool, error) {
		l, err := c.SchedulingV1beta1().PodGroups(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		real = l.Items
		pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		return len(real) == 2 && len(pods.Items) == 5, nil
	})
	var theirs []string
	for i := range real {
		theirs = append(theirs, podGroupShape(&real[i]))
	}
	realPods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	must(t, err)
	for i := range realPods.Items {
		theirs = append(theirs, memberShape(&realPods.Items[i]))
	}

	cluster := loadStoredWith(t, c, ns, loading.Options{JobPodGroups: true}, true)
	var ours []string
	for _, pg := range cluster.PodGroups {
		ours = append(ours, podGroupShape(pg))
	}
	for _, p := range cluster.Pods {
		if p.Namespace == ns {
			ours = append(ours, memberShape(p))
		}
	}
	sort.Strings(theirs)
	sort.Strings(ours)
	if strings.Join(theirs, "\n") != strings.Join(ours, "\n") {
		t.Errorf("kube-controller-manager made\n%s\nkubesched simulate made\n%s", strings.Join(theirs, "\n"), strings.Join(ours, "\n"))
	} else {
		t.Logf("both made\n%s", strings.Join(ours, "\n"))
	}
}

// podGroupShape is a PodGroup's name, spec (priority aside: admission
// resolves it later on our side) and owners (kind, name, controller).
func podGroupShape(pg *schedulingv1beta1.PodGroup) string {
	spec := pg.Spec.DeepCopy()
	spec.Priority = nil
	b, _ := json.Marshal(spec)
	var owners []string
	for _, o := range pg.OwnerReferences {
		owners = append(owners, fmt.Sprintf("%s/%s controller=%v", o.Kind, o.Name, o.Controller != nil && *o.Controller))
	}
	sort.Strings(owners)
	return fmt.Sprintf("PodGroup %s %s owners %v", pg.Name, b, owners)
}

// memberShape is a pod's Job (its generateName), its group and its owners'
// kinds and names.
func memberShape(p *v1.Pod) string {
	group := ""
	if g := p.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil {
		group = *g.PodGroupName
	}
	var owners []string
	for _, o := range p.OwnerReferences {
		owners = append(owners, o.Kind+"/"+o.Name)
	}
	sort.Strings(owners)
	return fmt.Sprintf("pod %s group %q owners %v", p.GenerateName, group, owners)
}

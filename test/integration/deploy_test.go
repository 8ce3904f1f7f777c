package integration

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"

	fw "github.com/kubesched/kubesched/test/integration/framework"
)

// TestTheDeployRBACIsEnough runs kubesched as deploy/ would: with the
// ServiceAccount and ClusterRole of deploy/rbac.yaml (a token minted for
// it) and the configuration of deploy/config.yaml, leader election in
// kube-system included. A missing right fails the test.
func TestTheDeployRBACIsEnough(t *testing.T) {
	cp := fw.StartControlPlane(t)
	c := cp.Client
	ctx := context.Background()
	dec := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	var config string
	for _, f := range []string{"rbac.yaml", "config.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "deploy", f))
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if err != nil {
				break
			}
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			obj, _, err := dec.Decode(doc, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			switch o := obj.(type) {
			case *v1.ServiceAccount:
				_, err = c.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			case *rbacv1.ClusterRole:
				_, err = c.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
			case *rbacv1.ClusterRoleBinding:
				_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
			case *v1.ConfigMap:
				config = o.Data["config.yaml"]
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	tok, err := c.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, "kubesched", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	fw.CreateNode(t, c, "n1", "4", "8Gi", 110, nil)
	s := fw.StartSchedulerArgs(t, cp, "--config", cfgPath, "--kubeconfig", cp.KubeconfigForToken("kubesched", tok.Status.Token))
	fw.CreatePod(t, c, fw.PodSpec("default", "fits", "kubesched", "1", ""))
	fw.CreatePod(t, c, fw.PodSpec("default", "too-big", "kubesched", "8", ""))
	fw.Eventually(t, 60*time.Second, "the pod bound and the other marked unschedulable", func() (bool, error) {
		a, err1 := getPod(c, "default", "fits")
		b, err2 := getPod(c, "default", "too-big")
		if err1 != nil || err2 != nil {
			return false, nil
		}
		cond := podScheduledCondition(b)
		return a.Spec.NodeName == "n1" && cond != nil && cond.Reason == v1.PodReasonUnschedulable, nil
	})
	l, err := c.CoordinationV1().Leases("kube-system").Get(ctx, "kubesched", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		t.Errorf("lease kube-system/kubesched = %v, %v; want held", l, err)
	}
	fw.Eventually(t, 30*time.Second, "the Scheduled event", func() (bool, error) {
		evs, err := c.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.Reason == "Scheduled" && e.Regarding.Name == "fits" {
				return true, nil
			}
		}
		return false, nil
	})
	if s.Exited() {
		t.Error("kubesched exited")
	}
	if log, err := os.ReadFile(s.LogPath); err != nil || bytes.Contains(log, []byte("forbidden")) {
		t.Errorf("kubesched was refused something (%v); see %s", err, s.LogPath)
	}
}

func ptr[T any](v T) *T { return &v }

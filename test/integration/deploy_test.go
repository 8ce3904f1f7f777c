package integration

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
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
			case *rbacv1.RoleBinding:
				_, err = c.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
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
	saKubeconfig := cp.KubeconfigForToken("kubesched", tok.Status.Token)
	securePort := fw.FreePort(t)
	s := fw.StartSchedulerArgs(t, cp, "--config", cfgPath, "--kubeconfig", saKubeconfig,
		"--secure-port", strconv.Itoa(securePort), "--bind-address", "127.0.0.1",
		"--authentication-kubeconfig", saKubeconfig, "--authorization-kubeconfig", saKubeconfig)
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
	// The HTTPS port: probes are open, /metrics needs an authorized user.
	base := fmt.Sprintf("https://127.0.0.1:%d", securePort)
	for _, tc := range []struct {
		path, token string
		want        []int
	}{
		{"/healthz", "", []int{200}},
		{"/readyz", "", []int{200}},
		{"/metrics", "", []int{401, 403}},
		{"/metrics", cp.AdminToken(), []int{200}},
	} {
		fw.Eventually(t, 30*time.Second, tc.path+" over HTTPS", func() (bool, error) {
			code, err := httpsGet(base+tc.path, tc.token)
			for _, w := range tc.want {
				if code == w {
					return true, nil
				}
			}
			return false, fmt.Errorf("status %d, %v; want %v", code, err, tc.want)
		})
	}
	if log, err := os.ReadFile(s.LogPath); err != nil || bytes.Contains(log, []byte("forbidden")) {
		t.Errorf("kubesched was refused something (%v); see %s", err, s.LogPath)
	}
}

func ptr[T any](v T) *T { return &v }

func httpsGet(url, token string) (int, error) {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

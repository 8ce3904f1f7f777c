package extender

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

// server answers every verb with answer(verb, body) and records the
// requests' top-level JSON keys.
type server struct {
	*httptest.Server
	keys   map[string][]string
	bodies map[string][]byte
}

func newServer(t *testing.T, answer func(verb string, body []byte) (int, interface{})) *server {
	t.Helper()
	s := &server{keys: map[string][]string{}, bodies: map[string][]byte{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		verb := strings.TrimPrefix(r.URL.Path, "/sched/")
		var m map[string]json.RawMessage
		_ = json.Unmarshal(body, &m)
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		s.keys[verb], s.bodies[verb] = keys, body
		if r.Header.Get("Content-Type") != "application/json" || r.Method != http.MethodPost {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		code, out := answer(verb, body)
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(s.Close)
	return s
}

func nodeInfos(names ...string) []*framework.NodeInfo {
	var out []*framework.NodeInfo
	for i, n := range names {
		ni := framework.NewNodeInfo(st.MakePod().Name("on-" + n).UID("uid-" + n).Node(n).Obj())
		ni.SetNode(st.MakeNode().Name(n).Obj())
		ni.SetIndex(i)
		out = append(out, ni)
	}
	return out
}

func names(nis []*framework.NodeInfo) []string {
	var out []string
	for _, ni := range nis {
		out = append(out, ni.NodeName())
	}
	return out
}

func TestFilter(t *testing.T) {
	pod := st.MakePod().Name("p").UID("p").Obj()
	tests := []struct {
		name             string
		nodeCacheCapable bool
		code             int
		answer           extenderv1.ExtenderFilterResult
		wantKeys         []string
		wantNodes        []string
		// wantSame: the nodes passed are the NodeInfos sent (with pods).
		wantSame bool
		wantErr  string
	}{
		{
			name: "whole nodes go out under the Go field names and come back as NodeInfos without pods",
			answer: extenderv1.ExtenderFilterResult{
				Nodes:       &v1.NodeList{Items: []v1.Node{*st.MakeNode().Name("b").Obj()}},
				FailedNodes: extenderv1.FailedNodesMap{"a": "no"},
			},
			wantKeys: []string{"NodeNames", "Nodes", "Pod"}, wantNodes: []string{"b"},
		},
		{
			name:             "a node-cache-capable extender gets names and its answer maps back to the same NodeInfos",
			nodeCacheCapable: true,
			answer:           extenderv1.ExtenderFilterResult{NodeNames: &[]string{"b", "a"}},
			wantKeys:         []string{"NodeNames", "Nodes", "Pod"}, wantNodes: []string{"b", "a"}, wantSame: true,
		},
		{
			name:             "a name that was not sent is an error",
			nodeCacheCapable: true,
			answer:           extenderv1.ExtenderFilterResult{NodeNames: &[]string{"zz"}},
			wantErr:          `claims a filtered node "zz" which is not found in the input node list`,
		},
		{
			name:    "the answer's Error is the error",
			answer:  extenderv1.ExtenderFilterResult{Error: "backend down"},
			wantErr: "backend down",
		},
		{
			name:    "a status other than 200 is an error naming the verb, the URL and the code",
			code:    http.StatusInternalServerError,
			wantErr: "failed filter with extender at URL ",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, func(string, []byte) (int, interface{}) {
				if tt.code != 0 {
					return tt.code, nil
				}
				return http.StatusOK, tt.answer
			})
			e, err := New(&configv1.Extender{URLPrefix: srv.URL + "/sched/", FilterVerb: "filter", NodeCacheCapable: tt.nodeCacheCapable})
			if err != nil {
				t.Fatal(err)
			}
			sent := nodeInfos("a", "b")
			got, failed, _, err := e.Filter(pod, sent)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(srv.keys["filter"], ",") != strings.Join(tt.wantKeys, ",") {
				t.Errorf("request keys = %v, want %v", srv.keys["filter"], tt.wantKeys)
			}
			var args extenderv1.ExtenderArgs
			if err := json.Unmarshal(srv.bodies["filter"], &args); err != nil || args.Pod == nil || args.Pod.Name != "p" {
				t.Errorf("request = %s (%v), want the pod", srv.bodies["filter"], err)
			}
			if tt.nodeCacheCapable != (args.NodeNames != nil) || tt.nodeCacheCapable == (args.Nodes != nil) {
				t.Errorf("request sent NodeNames %v and Nodes %v, node-cache-capable %v", args.NodeNames, args.Nodes != nil, tt.nodeCacheCapable)
			}
			if strings.Join(names(got), ",") != strings.Join(tt.wantNodes, ",") {
				t.Errorf("nodes = %v, want %v", names(got), tt.wantNodes)
			}
			for _, ni := range got {
				if same := len(ni.Pods()) == 1 && ni.Index() >= 0; same != tt.wantSame {
					t.Errorf("node %s: has the sent NodeInfo's pods and index = %v, want %v", ni.NodeName(), same, tt.wantSame)
				}
			}
			if tt.answer.FailedNodes != nil && failed["a"] != "no" {
				t.Errorf("failed = %v, want a: no", failed)
			}
		})
	}
}

func TestPrioritizeBindAndPreempt(t *testing.T) {
	pod := st.MakePod().Name("p").Namespace("ns").UID("p").Obj()
	srv := newServer(t, func(verb string, body []byte) (int, interface{}) {
		switch verb {
		case "prioritize":
			return http.StatusOK, extenderv1.HostPriorityList{{Host: "a", Score: 3}, {Host: "b", Score: 10}}
		case "bind":
			return http.StatusOK, extenderv1.ExtenderBindingResult{}
		case "preempt":
			return http.StatusOK, extenderv1.ExtenderPreemptionResult{NodeNameToMetaVictims: map[string]*extenderv1.MetaVictims{
				"b": {Pods: []*extenderv1.MetaPod{{UID: "uid-b"}}, NumPDBViolations: 1},
			}}
		}
		return http.StatusNotFound, nil
	})
	e, err := New(&configv1.Extender{URLPrefix: srv.URL + "/sched", PrioritizeVerb: "prioritize", Weight: 4, BindVerb: "bind", PreemptVerb: "preempt", NodeCacheCapable: true})
	if err != nil {
		t.Fatal(err)
	}
	nodes := nodeInfos("a", "b")

	list, weight, err := e.Prioritize(pod, nodes)
	if err != nil || weight != 4 || len(*list) != 2 || (*list)[1].Score != 10 {
		t.Errorf("Prioritize = %v, %d, %v; want the server's list and weight 4", list, weight, err)
	}

	if err := e.Bind(&v1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "p"}, Target: v1.ObjectReference{Kind: "Node", Name: "b"}}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(srv.keys["bind"], ","); got != "Node,PodName,PodNamespace,PodUID" {
		t.Errorf("bind request keys = %s, want the Go field names", got)
	}

	victims := map[string]*extenderv1.Victims{"a": {Pods: []*v1.Pod{nodes[0].Pods()[0].Pod}}, "b": {Pods: []*v1.Pod{nodes[1].Pods()[0].Pod}}}
	out, err := e.ProcessPreemption(pod, victims, lister(nodes))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out["b"] == nil || out["b"].Pods[0].Name != "on-b" || out["b"].NumPDBViolations != 1 {
		t.Errorf("ProcessPreemption = %v, want node b with its pod, resolved by UID", out)
	}
	var args extenderv1.ExtenderPreemptionArgs
	if err := json.Unmarshal(srv.bodies["preempt"], &args); err != nil || args.NodeNameToMetaVictims["a"] == nil || args.NodeNameToMetaVictims["a"].Pods[0].UID != "uid-a" || args.NodeNameToVictims != nil {
		t.Errorf("preempt request = %s: a node-cache-capable extender gets UIDs only", srv.bodies["preempt"])
	}
}

func TestWithoutVerbs(t *testing.T) {
	e, err := New(&configv1.Extender{URLPrefix: "http://127.0.0.1:1/unused"})
	if err != nil {
		t.Fatal(err)
	}
	nodes := nodeInfos("a", "b")
	if got, _, _, err := e.Filter(&v1.Pod{}, nodes); err != nil || len(got) != 2 {
		t.Errorf("Filter without a verb = %v, %v; want every node, no call", names(got), err)
	}
	if list, w, err := e.Prioritize(&v1.Pod{}, nodes); err != nil || w != 0 || len(*list) != 2 || (*list)[0].Score != 0 {
		t.Errorf("Prioritize without a verb = %v, %d, %v; want zeros with weight 0", list, w, err)
	}
	if err := e.Bind(&v1.Binding{}); err == nil {
		t.Error("Bind without a verb succeeded")
	}
	if e.client.Timeout != DefaultTimeout {
		t.Errorf("timeout = %v, want the default %v", e.client.Timeout, DefaultTimeout)
	}
	e2, _ := New(&configv1.Extender{URLPrefix: "http://x", HTTPTimeout: metav1.Duration{Duration: 2 * time.Second}})
	if e2.client.Timeout != 2*time.Second {
		t.Errorf("timeout = %v, want the configured 2s", e2.client.Timeout)
	}
}

func TestIsInterested(t *testing.T) {
	managed := []configv1.ExtenderManagedResource{{Name: "example.com/foo"}}
	tests := []struct {
		name    string
		managed []configv1.ExtenderManagedResource
		pod     *v1.Pod
		want    bool
	}{
		{name: "an extender that manages nothing is interested in every pod", pod: st.MakePod().Obj(), want: true},
		{name: "a container requesting a managed resource interests it", managed: managed, pod: st.MakePod().Req(map[v1.ResourceName]string{"example.com/foo": "1"}).Obj(), want: true},
		{name: "an init container requesting a managed resource interests it", managed: managed, pod: st.MakePod().InitReq(map[v1.ResourceName]string{"example.com/foo": "1"}).Obj(), want: true},
		{name: "a pod asking only for other resources does not", managed: managed, pod: st.MakePod().Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj(), want: false},
		{name: "pod-level resources are not read", managed: managed, pod: st.MakePod().PodRequests(map[v1.ResourceName]string{"example.com/foo": "1"}).Obj(), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := New(&configv1.Extender{URLPrefix: "http://x", ManagedResources: tt.managed})
			if err != nil {
				t.Fatal(err)
			}
			if got := e.IsInterested(tt.pod); got != tt.want {
				t.Errorf("IsInterested = %v, want %v", got, tt.want)
			}
		})
	}
}

type lister []*framework.NodeInfo

func (l lister) List() ([]*framework.NodeInfo, error)                     { return l, nil }
func (l lister) HavePodsWithAffinityList() ([]*framework.NodeInfo, error) { return nil, nil }
func (l lister) HavePodsWithRequiredAntiAffinityList() ([]*framework.NodeInfo, error) {
	return nil, nil
}
func (l lister) Get(name string) (*framework.NodeInfo, error) {
	for _, ni := range l {
		if ni.NodeName() == name {
			return ni, nil
		}
	}
	return nil, io.EOF
}

func TestTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(extenderv1.ExtenderBindingResult{})
	}))
	defer srv.Close()
	pem := func(s *httptest.Server) []byte {
		return []byte("-----BEGIN CERTIFICATE-----\n" + base64Lines(s.Certificate().Raw) + "-----END CERTIFICATE-----\n")
	}
	tests := []struct {
		name    string
		cfg     configv1.Extender
		wantErr bool
	}{
		{name: "enableHTTPS without a CA skips verification", cfg: configv1.Extender{EnableHTTPS: true}},
		{name: "the server's own CA verifies it", cfg: configv1.Extender{EnableHTTPS: true, TLSConfig: &configv1.ExtenderTLSConfig{CAData: pem(srv)}}},
		{name: "without enableHTTPS or a CA an unknown certificate is refused", cfg: configv1.Extender{}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.URLPrefix, cfg.BindVerb = srv.URL, "bind"
			e, err := New(&cfg)
			if err != nil {
				t.Fatal(err)
			}
			err = e.Bind(&v1.Binding{})
			if (err != nil) != tt.wantErr {
				t.Errorf("Bind over TLS: %v, want an error %v", err, tt.wantErr)
			}
		})
	}
}

func base64Lines(b []byte) string {
	s := base64.StdEncoding.EncodeToString(b)
	var out strings.Builder
	for len(s) > 64 {
		out.WriteString(s[:64] + "\n")
		s = s[64:]
	}
	out.WriteString(s + "\n")
	return out.String()
}

package framework

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

// FaultProxy stands between kubesched and kube-apiserver on loopback and
// makes a share of the Binding calls fail, each in one of four ways:
//
//   - 500 without forwarding (the API never saw it);
//   - 409 Conflict without forwarding;
//   - a 2 s stall, then 504 (a timeout);
//   - forwarded, the pod is bound, then the answer is replaced by a 500
//     (the scheduler believes it failed).
//
// It counts what it injected and every Binding the API server accepted,
// per pod. Everything else passes through, watches included.
type FaultProxy struct {
	URL  string
	rate float64
	// PauseWatchesOnBinding: at the first Binding call, the pod watches
	// stop delivering (until ResumeWatches), so the scheduler never hears
	// that its pod was bound: a watch that lags behind the Binding.
	PauseWatchesOnBinding bool
	paused                chan struct{} // closed while watches flow
	pauseOnce             sync.Once

	mu       sync.Mutex
	rng      *rand.Rand
	Injected map[string]int
	// Bound counts accepted Bindings per namespace/name.
	Bound map[string]int
	// BoundUIDs counts accepted Bindings per namespace/name/uid, the
	// Binding's UID: a pod deleted and created again under its name is
	// another pod.
	BoundUIDs map[string]int
	// InjectedPods counts the injected faults per namespace/name and kind.
	InjectedPods map[string]map[string]int
}

var bindingPath = regexp.MustCompile(`^/api/v1/namespaces/([^/]+)/pods/([^/]+)/binding$`)

// StartFaultProxy proxies to cp's API server, failing rate of the Binding
// calls, with a seeded choice; it stops when the test ends.
func StartFaultProxy(t testing.TB, cp *ControlPlane, rate float64, seed int64) *FaultProxy {
	t.Helper()
	target, err := url.Parse(cp.URL())
	if err != nil {
		t.Fatal(err)
	}
	fp := &FaultProxy{rate: rate, rng: rand.New(rand.NewSource(seed)), Injected: map[string]int{}, Bound: map[string]int{},
		BoundUIDs: map[string]int{}, InjectedPods: map[string]map[string]int{}, paused: make(chan struct{})}
	close(fp.paused)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, MaxIdleConnsPerHost: 100}
	rp.FlushInterval = -1 // stream watches
	rp.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, err error) {
		http.Error(w, err.Error(), http.StatusBadGateway)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := bindingPath.FindStringSubmatch(r.URL.Path)
		if r.URL.Path == "/api/v1/pods" && r.URL.Query().Get("watch") != "" {
			rp.ServeHTTP(&gatedWriter{ResponseWriter: w, fp: fp}, r)
			return
		}
		if r.Method != http.MethodPost || m == nil {
			rp.ServeHTTP(w, r)
			return
		}
		if fp.PauseWatchesOnBinding {
			fp.pauseOnce.Do(func() {
				fp.mu.Lock()
				fp.paused = make(chan struct{})
				fp.mu.Unlock()
			})
		}
		key := m[1] + "/" + m[2]
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		uidKey := key + "/" + bindingUID(body)
		fault := fp.pick()
		if fault != "" {
			fp.mu.Lock()
			if fp.InjectedPods[key] == nil {
				fp.InjectedPods[key] = map[string]int{}
			}
			fp.InjectedPods[key][fault]++
			fp.mu.Unlock()
		}
		switch fault {
		case "500":
			writeStatus(w, http.StatusInternalServerError, "InternalError", "injected by the fault proxy")
		case "409":
			writeStatus(w, http.StatusConflict, "Conflict", "injected by the fault proxy")
		case "timeout":
			// A stalled server: answer after 2 s, or when the client gives up.
			select {
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
			}
			writeStatus(w, http.StatusGatewayTimeout, "Timeout", "injected by the fault proxy")
		default:
			rec := &recorder{header: http.Header{}, body: &bytes.Buffer{}}
			rp.ServeHTTP(rec, r)
			if rec.code == http.StatusCreated {
				fp.mu.Lock()
				fp.Bound[key]++
				fp.BoundUIDs[uidKey]++
				fp.mu.Unlock()
			}
			if fault == "bound-then-500" {
				writeStatus(w, http.StatusInternalServerError, "InternalError", "injected by the fault proxy after the binding")
				return
			}
			for k, v := range rec.header {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.code)
			_, _ = w.Write(rec.body.Bytes())
		}
	}))
	// TLS, as client-go sends bearer tokens to an API server.
	srv.StartTLS()
	t.Cleanup(srv.Close)
	fp.URL = srv.URL
	return fp
}

// ResumeWatches lets the paused pod watches deliver again.
func (fp *FaultProxy) ResumeWatches() {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	select {
	case <-fp.paused:
	default:
		close(fp.paused)
	}
}

func (fp *FaultProxy) flowing() chan struct{} {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	return fp.paused
}

// gatedWriter holds a watch's writes while the proxy is paused.
type gatedWriter struct {
	http.ResponseWriter
	fp *FaultProxy
}

func (g *gatedWriter) Write(b []byte) (int, error) {
	<-g.fp.flowing()
	return g.ResponseWriter.Write(b)
}

func (g *gatedWriter) Flush() {
	<-g.fp.flowing()
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// pick draws the fault for one Binding call ("" for none).
func (fp *FaultProxy) pick() string {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	if fp.rng.Float64() >= fp.rate {
		return ""
	}
	f := []string{"500", "409", "timeout", "bound-then-500"}[fp.rng.Intn(4)]
	fp.Injected[f]++
	return f
}

// Counts returns copies of the injected faults and the accepted bindings.
func (fp *FaultProxy) Counts() (injected, bound map[string]int) {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	injected, bound = map[string]int{}, map[string]int{}
	for k, v := range fp.Injected {
		injected[k] = v
	}
	for k, v := range fp.Bound {
		bound[k] = v
	}
	return injected, bound
}

// PodCounts returns copies of the injected faults per pod and kind and of
// the accepted Bindings per namespace/name/uid.
func (fp *FaultProxy) PodCounts() (injected map[string]map[string]int, bound map[string]int) {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	injected, bound = map[string]map[string]int{}, map[string]int{}
	for k, v := range fp.InjectedPods {
		injected[k] = map[string]int{}
		for f, n := range v {
			injected[k][f] = n
		}
	}
	for k, v := range fp.BoundUIDs {
		bound[k] = v
	}
	return injected, bound
}

// bindingUID is the metadata.uid of a Binding's body, JSON or protobuf
// (kubesched's default content type); "" when it cannot be read.
func bindingUID(body []byte) string {
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
	if err != nil {
		return ""
	}
	if b, ok := obj.(*v1.Binding); ok {
		return string(b.UID)
	}
	return ""
}

// Kubeconfig writes a kubeconfig for the admin user through the proxy.
func (fp *FaultProxy) Kubeconfig(t testing.TB, cp *ControlPlane) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig-proxy")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: proxy
  cluster: {server: %s, insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: %s}
contexts:
- name: proxy
  context: {cluster: proxy, user: admin}
current-context: proxy
`, fp.URL, cp.token)
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeStatus(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":%q,"reason":%q,"code":%d}`, msg, reason, code)
}

// recorder buffers a proxied response.
type recorder struct {
	header http.Header
	code   int
	body   *bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.code = code }

var _ io.Writer = (*recorder)(nil)

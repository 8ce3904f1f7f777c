package kube

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
)

// apiRecorder is an API server that records each request and answers
// with code (and a Status for an error).
type apiRecorder struct {
	mu   sync.Mutex
	reqs []string
	code int
}

func (a *apiRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	a.reqs = append(a.reqs, fmt.Sprintf("%s %s?%s %s %x", r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), body))
	code := a.code
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	if code >= 300 {
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":%d}`, code)
		return
	}
	fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Success"}`)
}

func (a *apiRecorder) last(t *testing.T) string {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.reqs) == 0 {
		t.Fatal("no request")
	}
	return a.reqs[len(a.reqs)-1]
}

func protobufClient(t *testing.T, url string) kubernetes.Interface {
	t.Helper()
	cfg := &rest.Config{Host: url}
	cfg.ContentType, cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf,application/json"
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTheDirectWritesSendWhatTheTypedClientsSend: bind and the event sink
// skip the typed clients' parameter encoding and answer decoding; the
// requests must stay byte for byte the same.
func TestTheDirectWritesSendWhatTheTypedClientsSend(t *testing.T) {
	api := &apiRecorder{code: http.StatusCreated}
	srv := httptest.NewServer(api)
	defer srv.Close()
	c := protobufClient(t, srv.URL)
	ctx := context.Background()

	b := &v1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u"}, Target: v1.ObjectReference{Kind: "Node", Name: "n"}}
	if err := c.CoreV1().Pods("ns").Bind(ctx, b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	typed := api.last(t)
	if !strings.Contains(typed, "POST /api/v1/namespaces/ns/pods/p/binding? application/vnd.kubernetes.protobuf ") {
		t.Fatalf("typed binding request %s: want a protobuf POST to the binding subresource", typed)
	}
	if err := bind(ctx, c, b); err != nil {
		t.Fatal(err)
	}
	if got := api.last(t); got != typed {
		t.Errorf("binding request:\n  direct %s\n  typed  %s", got, typed)
	}

	ev := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p.1"}, Reason: "Scheduled", Note: "Successfully assigned ns/p to n"}
	if _, err := (&events.EventSinkImpl{Interface: c.EventsV1()}).Create(ctx, ev); err != nil {
		t.Fatal(err)
	}
	typed = api.last(t)
	got, err := newEventSink(c).Create(ctx, ev)
	if err != nil || got != ev {
		t.Fatalf("Create = %v, %v; want the event sent back, no error", got, err)
	}
	if last := api.last(t); last != typed {
		t.Errorf("event request:\n  direct %s\n  typed  %s", last, typed)
	}

	api.code = http.StatusNotFound
	if err := bind(ctx, c, b); !apierrors.IsNotFound(err) {
		t.Errorf("bind of a pod the API does not have: %v, want NotFound", err)
	}
	if _, err := newEventSink(c).Create(ctx, ev); !apierrors.IsNotFound(err) {
		t.Errorf("event refused by the API: %v, want its NotFound", err)
	}
}

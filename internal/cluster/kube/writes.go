package kube

import (
	"context"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
)

// The two writes every scheduled pod costs, a Binding and a Scheduled
// Event, are sent through the REST client directly: the typed clients
// encode empty CreateOptions into query parameters by reflection and
// decode the server's answer, which nothing here reads (the broadcaster
// drops what Create returns; a Binding's answer is a Status). The
// requests are the same: the same paths, bodies and content type.

// restClient is c's REST client, nil for a client without one (the fake
// clientset of unit tests, whose typed clients are used instead).
func restClient(c rest.Interface) *rest.RESTClient {
	rc, ok := c.(*rest.RESTClient)
	if !ok || rc == nil {
		return nil
	}
	return rc
}

// bind POSTs the pods/binding subresource.
func bind(ctx context.Context, client kubernetes.Interface, b *v1.Binding) error {
	rc := restClient(client.CoreV1().RESTClient())
	if rc == nil {
		return client.CoreV1().Pods(b.Namespace).Bind(ctx, b, metav1.CreateOptions{})
	}
	return rc.Post().Namespace(b.Namespace).Resource("pods").Name(b.Name).SubResource("binding").Body(b).Do(ctx).Error()
}

// eventSink is client-go's events.k8s.io/v1 sink whose Create does not
// decode the created Event (it returns the one sent).
type eventSink struct {
	events.EventSinkImpl
	rc *rest.RESTClient
}

func newEventSink(client kubernetes.Interface) events.EventSink {
	s := &eventSink{EventSinkImpl: events.EventSinkImpl{Interface: client.EventsV1()}, rc: restClient(client.EventsV1().RESTClient())}
	if s.rc == nil {
		return &s.EventSinkImpl
	}
	return s
}

// Create implements events.EventSink.
func (s *eventSink) Create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	if ev.Namespace == "" {
		return s.EventSinkImpl.Create(ctx, ev) // the typed client's error
	}
	if err := s.rc.Post().Namespace(ev.Namespace).Resource("events").Body(ev).Do(ctx).Error(); err != nil {
		return nil, err
	}
	return ev, nil
}

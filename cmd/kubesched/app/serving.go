package app

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/server"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	netutils "k8s.io/utils/net"

	"github.com/kubesched/kubesched/cmd/kubesched/app/options"
)

// serveSecurely serves the handler over HTTPS as kube-scheduler does:
// delegated authentication (TokenReview, client certificates) and
// authorization (SubjectAccessReview), with /healthz, /readyz and /livez
// always allowed. It returns once listening.
func serveSecurely(ctx context.Context, opts *options.Options, handler http.Handler) error {
	ss := opts.SecureServing
	if ss == nil || ss.BindPort == 0 {
		return nil
	}
	if err := ss.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return fmt.Errorf("self-signed certificate: %w", err)
	}
	var info *server.SecureServingInfo
	if err := ss.ApplyTo(&info); err != nil {
		return fmt.Errorf("secure serving: %w", err)
	}
	var authn server.AuthenticationInfo
	if err := opts.Authentication.ApplyTo(&authn, info, nil); err != nil {
		return fmt.Errorf("authentication: %w", err)
	}
	var authz server.AuthorizationInfo
	if err := opts.Authorization.ApplyTo(&authz); err != nil {
		return fmt.Errorf("authorization: %w", err)
	}
	resolver := &apirequest.RequestInfoFactory{}
	h := genericapifilters.WithAuthorization(handler, authz.Authorizer, scheme.Codecs)
	h = genericapifilters.WithAuthentication(h, authn.Authenticator, genericapifilters.Unauthorized(scheme.Codecs), nil, nil)
	h = genericapifilters.WithRequestInfo(h, resolver)
	h = genericapifilters.WithCacheControl(h)
	h = genericfilters.WithPanicRecovery(h, resolver)
	if _, _, err := info.Serve(h, 5*time.Second, ctx.Done()); err != nil {
		return fmt.Errorf("secure serving: %w", err)
	}
	klog.FromContext(ctx).Info("Serving securely", "address", info.Listener.Addr().String())
	return nil
}

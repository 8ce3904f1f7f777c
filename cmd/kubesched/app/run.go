package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	componentbaseconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	schedconfig "github.com/kubesched/kubesched/cmd/kubesched/app/config"
	"github.com/kubesched/kubesched/cmd/kubesched/app/options"
	"github.com/kubesched/kubesched/internal/cluster/kube"
	"github.com/kubesched/kubesched/internal/features"
	"github.com/kubesched/kubesched/internal/metrics"
	"github.com/kubesched/kubesched/internal/scheduler"
)

// ErrLostLease is returned when leadership is lost: the process must exit
// non-zero so that it is restarted, as kube-scheduler does.
var ErrLostLease = errors.New("leaderelection lost")

// shutdownGrace bounds how long in-flight binding cycles may take once
// shutdown starts.
const shutdownGrace = 30 * time.Second

// restConfig builds the client configuration from clientConnection.
func restConfig(cc componentbaseconfigv1alpha1.ClientConnectionConfiguration) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if cc.Kubeconfig == "" {
		cfg, err = rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no --kubeconfig or clientConnection.kubeconfig, and not in a cluster: %w", err)
		}
	} else if cfg, err = clientcmd.BuildConfigFromFlags("", cc.Kubeconfig); err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", cc.Kubeconfig, err)
	}
	cfg.QPS = cc.QPS
	cfg.Burst = int(cc.Burst)
	cfg.ContentType = cc.ContentType
	cfg.AcceptContentTypes = cc.AcceptContentTypes
	return cfg, nil
}

// health is the state the probes report.
type health struct {
	synced   atomic.Bool
	watchdog *leaderelection.HealthzAdaptor
	// debug serves /debug/cache (behind authorization on the secure port).
	debug http.Handler
	// profiling serves /debug/pprof/ (enableProfiling, on by default as
	// in kube-scheduler).
	profiling bool
}

func (h *health) mux() *http.ServeMux {
	m := http.NewServeMux()
	live := func(w http.ResponseWriter, r *http.Request) {
		if h.watchdog != nil {
			if err := h.watchdog.Check(r); err != nil {
				http.Error(w, "leaderElection: "+err.Error(), http.StatusInternalServerError)
				return
			}
		}
		fmt.Fprint(w, "ok")
	}
	m.HandleFunc("/healthz", live)
	m.HandleFunc("/livez", live)
	m.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !h.synced.Load() {
			http.Error(w, "informers not synced", http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, "ok")
	})
	m.Handle("/metrics", legacyregistry.Handler())
	if h.debug != nil {
		m.Handle("/debug/cache", h.debug)
	}
	if h.profiling {
		m.HandleFunc("/debug/pprof/", pprof.Index)
		m.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		m.HandleFunc("/debug/pprof/profile", pprof.Profile)
		m.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		m.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return m
}

// serve starts the HTTPS and plain HTTP listeners; it returns when they listen.
func serve(ctx context.Context, opts *options.Options, h *health) error {
	handler := h.mux()
	if err := serveSecurely(ctx, opts, handler); err != nil {
		return err
	}
	if opts.HTTPAddress == "" {
		return nil
	}
	ln, err := net.Listen("tcp", opts.HTTPAddress)
	if err != nil {
		return fmt.Errorf("--http-address: %w", err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	logger := klog.FromContext(ctx)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error(err, "Serving stopped", "address", ln.Addr().String())
		}
	}()
	go func() {
		<-ctx.Done()
		c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(c)
	}()
	logger.Info("Serving insecurely", "address", ln.Addr().String())
	return nil
}

// runScheduler is kube-scheduler's job: connect, watch, wait for the caches,
// win the lease (when enabled), schedule until ctx ends or the lease is lost.
func runScheduler(ctx context.Context, cc schedconfig.CompletedConfig, opts *options.Options) error {
	cfg := cc.ComponentConfig
	logger := klog.FromContext(ctx)
	restCfg, err := restConfig(cfg.ClientConnection)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(rest.AddUserAgent(restCfg, "kubesched"))
	if err != nil {
		return err
	}
	metrics.Register()
	world := kube.NewWorld(client)
	informers := kube.NewInformers(client)
	if cc.Features != nil && cc.Features.Enabled(features.GenericWorkload) {
		informers.EnablePodGroups()
		metrics.RegisterPodGroups()
		if cc.Features.Enabled(features.TopologyAwareWorkloadScheduling) {
			metrics.RegisterPlacements()
		}
	}
	sched, err := scheduler.New(ctx, cfg, cc.Registry, world,
		append(cc.SchedulerOptions(), scheduler.WithSeed(time.Now().UnixNano()), scheduler.WithListers(informers.Listers()))...)
	if err != nil {
		return err
	}
	if err := informers.AddHandlers(sched, world); err != nil {
		return err
	}
	h := &health{debug: cacheDebugHandler(sched, client), profiling: cfg.EnableProfiling == nil || *cfg.EnableProfiling}
	leaderElect := cfg.LeaderElection.LeaderElect != nil && *cfg.LeaderElection.LeaderElect
	if leaderElect {
		h.watchdog = leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
	}
	if err := serve(ctx, opts, h); err != nil {
		return err
	}
	world.StartEvents(ctx.Done())
	defer world.ShutdownEvents()
	informers.Start(ctx)
	defer informers.Shutdown()
	if !informers.WaitForSync(ctx) {
		if ctx.Err() != nil {
			return nil
		}
		return errors.New("informer caches did not sync")
	}
	h.synced.Store(true)
	logger.Info("Informer caches are synced")
	go compareOnSignal(ctx, sched, client)

	// run schedules until runCtx ends, then waits (bounded) for the
	// in-flight binding cycles.
	run := func(runCtx context.Context) {
		sched.Run(runCtx)
		if !sched.WaitForBindingsTimeout(shutdownGrace) {
			logger.Info("Shutdown: gave up waiting for binding cycles", "after", shutdownGrace)
		}
	}
	if !leaderElect {
		run(ctx)
		return nil
	}

	leCfg, err := leaderElectionConfig(ctx, cfg.LeaderElection, restCfg)
	if err != nil {
		return err
	}
	// The lease outlives the scheduling context: on shutdown scheduling
	// stops first, bindings finish, and only then is the lease released.
	leCtx, cancelLE := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelLE()
	var started atomic.Bool
	finished := make(chan struct{})
	lost := atomic.Bool{}
	leCfg.Callbacks = leaderelection.LeaderCallbacks{
		OnStartedLeading: func(lctx context.Context) {
			started.Store(true)
			defer close(finished)
			runCtx, cancel := context.WithCancel(lctx)
			defer cancel()
			go func() {
				select {
				case <-ctx.Done():
					cancel()
				case <-runCtx.Done():
				}
			}()
			logger.Info("Became leader; scheduling")
			run(runCtx)
		},
		OnStoppedLeading: func() {
			if ctx.Err() == nil {
				lost.Store(true)
			}
		},
	}
	leCfg.WatchDog = h.watchdog
	le, err := leaderelection.NewLeaderElector(*leCfg)
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	go func() {
		<-ctx.Done()
		if started.Load() {
			<-finished
		}
		cancelLE()
	}()
	le.Run(leCtx)
	if lost.Load() {
		return ErrLostLease
	}
	return nil
}

func leaderElectionConfig(ctx context.Context, le componentbaseconfigv1alpha1.LeaderElectionConfiguration, restCfg *rest.Config) (*leaderelection.LeaderElectionConfig, error) {
	host, err := os.Hostname()
	if err != nil {
		return nil, err
	}
	id := host + "_" + string(uuid.NewUUID())
	client, err := kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(restCfg), "kubesched-leader-election"))
	if err != nil {
		return nil, err
	}
	lock, err := resourcelock.New(le.ResourceLock, le.ResourceNamespace, le.ResourceName, client.CoreV1(), client.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return nil, fmt.Errorf("leader election lock: %w", err)
	}
	klog.FromContext(ctx).Info("Leader election", "lock", le.ResourceNamespace+"/"+le.ResourceName, "identity", id)
	return &leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   le.LeaseDuration.Duration,
		RenewDeadline:   le.RenewDeadline.Duration,
		RetryPeriod:     le.RetryPeriod.Duration,
		ReleaseOnCancel: true,
		Name:            "kubesched",
	}, nil
}

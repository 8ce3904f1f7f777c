package app

import (
	"context"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/internal/cluster/kube"
	"github.com/kubesched/kubesched/internal/scheduler"
)

// compareOnSignal logs the cache and queue and their differences from a
// fresh LIST of nodes and pods on every SIGUSR2, as kube-scheduler's cache
// debugger does.
func compareOnSignal(ctx context.Context, sched *scheduler.Scheduler, client kubernetes.Interface) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR2)
	defer signal.Stop(ch)
	logger := klog.FromContext(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-ch:
			objs, err := kube.ListCluster(ctx, client)
			if err != nil {
				logger.Error(err, "Cache comparison: listing the cluster")
				continue
			}
			sched.LogDebugReport(logger, objs.Nodes, objs.Pods)
		}
	}
}

// cacheDebugHandler serves the same report at /debug/cache; the status is
// 200 when the cache and queue agree with the API, 409 when they do not.
func cacheDebugHandler(sched *scheduler.Scheduler, client kubernetes.Interface) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		objs, err := kube.ListCluster(r.Context(), client)
		if err != nil {
			http.Error(w, "listing the cluster: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		report, diffs := sched.DebugReport(objs.Nodes, objs.Pods)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if len(diffs) > 0 {
			w.WriteHeader(http.StatusConflict)
		}
		_, _ = w.Write([]byte(report))
	})
}

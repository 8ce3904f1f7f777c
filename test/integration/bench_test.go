package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	goruntime "runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/kubesched/kubesched/internal/testing/perfgen"
	fw "github.com/kubesched/kubesched/test/integration/framework"
)

// realResult is one scheduler's run of one workload on a fresh control
// plane, as TestBenchmarkAgainstKubeScheduler reports it.
type realResult struct {
	Workload  string `json:"workload"`
	Scheduler string `json:"scheduler"`
	Measured  int    `json:"measuredPods"`
	Bound     int    `json:"bound"`
	// Throughput is scheduler_perf's SchedulingThroughput: the average of
	// 1-second samples of pods bound, from the first bind to the last.
	Throughput float64 `json:"schedulingThroughput"`
	// StartToLastBind runs from the scheduler's start (the backlog already
	// created) to the last measured pod bound.
	StartToLastBind float64 `json:"startToLastBindSeconds"`
	// FirstCreateToLastBind includes creating the backlog.
	FirstCreateToLastBind float64 `json:"firstCreateToLastBindSeconds"`
	P50                   float64 `json:"createToBindP50Seconds"`
	P99                   float64 `json:"createToBindP99Seconds"`
	// SchedulerCPU is the scheduler process's CPU from its start to the
	// last bind; APIServerCPU kube-apiserver's over the same interval.
	SchedulerCPU    float64 `json:"schedulerCPUSeconds"`
	SchedulerCPUPod float64 `json:"schedulerCPUMsPerPod"`
	APIServerCPU    float64 `json:"apiServerCPUSeconds"`
	// EtcdCPU is etcd's over the same interval.
	EtcdCPU float64 `json:"etcdCPUSeconds"`
	// Busy is the scheduler's, kube-apiserver's and etcd's CPU over the
	// machine's (start to last bind, every core): near 1, the run is bound
	// by the machine, not by any one process.
	Busy float64 `json:"machineBusy"`
	// SchedulerShare is the scheduler's part of that busy CPU (its own,
	// kube-apiserver's and etcd's): what the scheduler costs the machine
	// it shares with the control plane.
	SchedulerShare float64 `json:"schedulerShareOfBusyCPU"`
}

// TestBenchmarkAgainstKubeScheduler runs the benchmark suite (perfgen's
// scheduler_perf workloads) against a real kube-apiserver and etcd, once
// with kubesched (built without -race) and once with upstream's
// kube-scheduler v1.37.2, each on a fresh control plane with the whole
// backlog created before the scheduler starts, and prints a table with the
// ratio per workload. It is a benchmark, not a test: it asserts nothing
// about speed and runs only with KUBESCHED_BENCH=1 (make bench-real).
//
//	KUBESCHED_BENCH_ONLY=SchedulingBasic   substrings of workload names
//	KUBESCHED_BENCH_SCALE=10               divide node and pod counts
//	KUBESCHED_BENCH_JSON=out.json          also write the results
//	KUBESCHED_BENCH_PROFILE=DIR            kubesched's CPU profile per workload
//	KUBESCHED_BENCH_PROFILE_SECONDS=40     its length (default pods/1500, 2 to 30)
//	KUBESCHED_BENCH_SCHEDULERS=kubesched   run only these (kubesched, kube-scheduler)
//	KUBESCHED_BENCH_ENV="GOGC=200 X=y"      added to kubesched's environment
func TestBenchmarkAgainstKubeScheduler(t *testing.T) {
	if os.Getenv("KUBESCHED_BENCH") == "" {
		t.Skip("a benchmark: set KUBESCHED_BENCH=1 (make bench-real)")
	}
	if err := fw.BuildNoRace(); err != nil {
		t.Fatal(err)
	}
	scale, _ := strconv.Atoi(os.Getenv("KUBESCHED_BENCH_SCALE"))
	only := os.Getenv("KUBESCHED_BENCH_ONLY")
	impls := []fw.Implementation{fw.Kubesched, fw.Upstream}
	if v := os.Getenv("KUBESCHED_BENCH_SCHEDULERS"); v != "" {
		impls = nil
		for _, name := range strings.Split(v, ",") {
			impl := fw.Implementation(strings.TrimSpace(name))
			if impl != fw.Kubesched && impl != fw.Upstream {
				t.Fatalf("KUBESCHED_BENCH_SCHEDULERS: %q is neither %q nor %q", name, fw.Kubesched, fw.Upstream)
			}
			impls = append(impls, impl)
		}
	}
	var results []realResult
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "WORKLOAD\tSCHEDULER\tPODS\tBOUND\tTHROUGHPUT (pods/s)\tSTART->LAST BIND (s)\tP50 (s)\tP99 (s)\tSCHED CPU (s)\tCPU/POD (ms)\tAPISERVER CPU (s)\tETCD CPU (s)\tMACHINE BUSY\tSCHED SHARE\tRATIO\t")
	for _, w := range append(perfgen.All(), perfgen.DRA()...) {
		if scale > 1 {
			w = w.Scaled(scale)
		}
		if only != "" && !slices.ContainsFunc(strings.Split(only, ","), func(s string) bool { return strings.Contains(w.FullName(), s) }) {
			continue
		}
		var pair []realResult
		for _, impl := range impls {
			t.Run(w.FullName()+"/"+string(impl), func(t *testing.T) {
				pair = append(pair, runReal(t, w, impl))
			})
		}
		for i, r := range pair {
			ratio := ""
			if i == 0 && len(pair) == 2 && pair[0].Scheduler == string(fw.Kubesched) && pair[1].Throughput > 0 {
				ratio = fmt.Sprintf("%.2fx thr, %.2fx cpu/pod", r.Throughput/pair[1].Throughput, r.SchedulerCPUPod/pair[1].SchedulerCPUPod)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.0f\t%.1f\t%.2f\t%.2f\t%.1f\t%.2f\t%.1f\t%.1f\t%.0f%%\t%.0f%%\t%s\t\n", r.Workload, r.Scheduler, r.Measured, r.Bound,
				r.Throughput, r.StartToLastBind, r.P50, r.P99, r.SchedulerCPU, r.SchedulerCPUPod, r.APIServerCPU, r.EtcdCPU, 100*r.Busy, 100*r.SchedulerShare, ratio)
		}
		tw.Flush()
		results = append(results, pair...)
	}
	if path := os.Getenv("KUBESCHED_BENCH_JSON"); path != "" {
		b, _ := json.MarshalIndent(results, "", "  ")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// benchConfig is the configuration both schedulers run with: the default
// profile, no leader election, and client rate limits as high as
// scheduler_perf's (QPS 5000), so neither is throttled by its client.
func benchConfig(kubeconfig string) string {
	kc := ""
	if kubeconfig != "" {
		kc = "\n  kubeconfig: " + kubeconfig
	}
	return `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:` + kc + `
  qps: 5000
  burst: 5000
`
}

func runReal(t *testing.T, w perfgen.Workload, impl fw.Implementation) realResult {
	cp := fw.StartControlPlane(t)
	cfg := *cp.RestConfig()
	cfg.QPS, cfg.Burst = 5000, 5000
	client := kubernetes.NewForConfigOrDie(&cfg)

	// The backlog: everything, measured pods included, before the scheduler.
	var measured []*v1.Pod
	var rest []runtime.Object
	for _, o := range w.Objects() {
		if p, ok := o.(*v1.Pod); ok && p.Spec.NodeName == "" && strings.HasPrefix(p.Name, measuredPrefix(w)) {
			measured = append(measured, p)
			continue
		}
		rest = append(rest, o)
	}
	createAll(t, client, rest)
	if w.Controllers != "" {
		// With scheduler_perf's client limits, so that neither scheduler
		// waits for the controller's rate limiter.
		fw.StartControllerManager(t, cp, w.Controllers, "--kube-api-qps=5000", "--kube-api-burst=5000")
	}
	var mu sync.Mutex
	created := map[string]time.Time{}
	bound := map[string]time.Time{}
	names := map[string]bool{}
	progress, allBound := make(chan struct{}, 1), make(chan struct{})
	for _, p := range measured {
		names[p.Namespace+"/"+p.Name] = true
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	podInformer := factory.Core().V1().Pods().Informer()
	nominated := map[string]bool{}
	signal := func() {
		select {
		case progress <- struct{}{}:
		default:
		}
	}
	record := func(obj interface{}) {
		p, ok := obj.(*v1.Pod)
		if !ok {
			return
		}
		k := p.Namespace + "/" + p.Name
		if p.Spec.NodeName == "" {
			// A preemptor's first nomination is progress too: PreemptionBasic
			// nominates every high-priority pod (one attempt each, victims
			// deleted) before the first of them binds, for longer than the
			// stall limit at full size.
			if p.Status.NominatedNodeName != "" {
				mu.Lock()
				if names[k] && !nominated[k] {
					nominated[k] = true
					signal()
				}
				mu.Unlock()
			}
			return
		}
		mu.Lock()
		if names[k] {
			if _, seen := bound[k]; !seen {
				bound[k] = time.Now()
				signal()
				if len(bound) == len(names) {
					close(allBound)
				}
			}
		}
		mu.Unlock()
	}
	if _, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: record, UpdateFunc: func(_, n interface{}) { record(n) }}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	factory.WaitForCacheSync(stop)
	objs := make([]runtime.Object, len(measured))
	for i, p := range measured {
		objs[i] = p
	}
	createAll(t, client, objs, func(o runtime.Object) {
		p := o.(*v1.Pod)
		mu.Lock()
		created[p.Namespace+"/"+p.Name] = time.Now()
		mu.Unlock()
	})

	if w.Controllers != "" {
		waitForClaims(t, client, len(measured))
	}
	apiCPU0, err := fw.ProcessCPU(cp.APIServerPID())
	if err != nil {
		t.Fatal(err)
	}
	etcdCPU0, err := fw.ProcessCPU(cp.EtcdPID())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var pid int
	var profiling sync.WaitGroup
	defer profiling.Wait() // before the scheduler is stopped
	if dir := os.Getenv("KUBESCHED_BENCH_PROFILE"); dir != "" {
		// kube-apiserver's CPU profile during either scheduler's run: what
		// the API work per pod is, the bound of both on two cores.
		profiling.Add(1)
		go func() {
			defer profiling.Done()
			secs := profileSeconds(len(measured))
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs+30)*time.Second)
			defer cancel()
			body, err := client.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").Param("seconds", strconv.Itoa(secs)).DoRaw(ctx)
			if err != nil {
				t.Logf("kube-apiserver profile: %v", err)
				return
			}
			file := profileFile(dir, w, string(impl)+"-apiserver")
			if err := os.WriteFile(file, body, 0o644); err != nil {
				t.Log(err)
			}
		}()
	}
	if impl == fw.Upstream {
		pid = fw.StartKubeSchedulerWith(t, cp, benchConfig(cp.Kubeconfig), "1").PID()
	} else {
		dir := t.TempDir()
		path := dir + "/config.yaml"
		if err := os.WriteFile(path, []byte(benchConfig("")), 0o644); err != nil {
			t.Fatal(err)
		}
		verbosity := "1"
		if v := os.Getenv("KUBESCHED_BENCH_VERBOSITY"); v != "" {
			verbosity = v
		}
		s := fw.StartSchedulerNoRaceEnv(t, cp, strings.Fields(os.Getenv("KUBESCHED_BENCH_ENV")), "--config", path, "--kubeconfig", cp.Kubeconfig, "-v", verbosity)
		pid = s.PID()
		if dir := os.Getenv("KUBESCHED_BENCH_PROFILE"); dir != "" {
			// A CPU profile of kubesched while it works through the backlog,
			// from as soon as it serves.
			fw.Eventually(t, 30*time.Second, "kubesched serving", func() (bool, error) {
				code, _, err := s.Get("/healthz")
				return code == 200, err
			})
			profiling.Add(1)
			go func() {
				defer profiling.Done()
				secs := profileSeconds(len(measured))
				code, body, err := s.GetWithin(fmt.Sprintf("/debug/pprof/profile?seconds=%d", secs), time.Duration(secs+10)*time.Second)
				if err != nil || code != 200 {
					t.Logf("profile: %d %v", code, err)
					return
				}
				file := profileFile(dir, w, "kubesched")
				if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
					t.Log(err)
				}
			}()
		}
	}

	if w.Churn != nil {
		churnStop, churnDone := make(chan struct{}), make(chan struct{})
		defer func() { close(churnStop); <-churnDone }()
		go churn(t, client, w.Churn, churnStop, churnDone)
	}

	// Wait for every measured pod, or for progress to stop for 30 s.
	stall := time.NewTimer(30 * time.Second)
	defer stall.Stop()
wait:
	for {
		select {
		case <-allBound:
			break wait
		case <-progress:
			stall.Reset(30 * time.Second)
		case <-stall.C:
			mu.Lock()
			t.Logf("%s: %d of %d measured pods bound, no progress for 30 s", impl, len(bound), len(measured))
			mu.Unlock()
			break wait
		}
	}
	var schedCPU, apiCPU, etcdCPU time.Duration
	if c, err := fw.ProcessCPU(pid); err == nil {
		schedCPU = c
	}
	if c, err := fw.ProcessCPU(cp.APIServerPID()); err == nil {
		apiCPU = c - apiCPU0
	}
	if c, err := fw.ProcessCPU(cp.EtcdPID()); err == nil {
		etcdCPU = c - etcdCPU0
	}
	mu.Lock()
	defer mu.Unlock()
	r := realResult{Workload: w.FullName(), Scheduler: string(impl), Measured: len(measured), Bound: len(bound),
		SchedulerCPU: schedCPU.Seconds(), APIServerCPU: apiCPU.Seconds(), EtcdCPU: etcdCPU.Seconds()}
	if len(bound) == 0 {
		return r
	}
	var binds []time.Time
	var latencies []float64
	firstCreate := time.Time{}
	for k, b := range bound {
		binds = append(binds, b)
		latencies = append(latencies, b.Sub(created[k]).Seconds())
	}
	for _, c := range created {
		if firstCreate.IsZero() || c.Before(firstCreate) {
			firstCreate = c
		}
	}
	sort.Slice(binds, func(i, j int) bool { return binds[i].Before(binds[j]) })
	sort.Float64s(latencies)
	last := binds[len(binds)-1]
	r.StartToLastBind = last.Sub(start).Seconds()
	r.Busy = (r.SchedulerCPU + r.APIServerCPU + r.EtcdCPU) / (r.StartToLastBind * float64(goruntime.NumCPU()))
	if busy := r.SchedulerCPU + r.APIServerCPU + r.EtcdCPU; busy > 0 {
		r.SchedulerShare = r.SchedulerCPU / busy
	}
	r.FirstCreateToLastBind = last.Sub(firstCreate).Seconds()
	r.P50 = latencies[len(latencies)/2]
	r.P99 = latencies[len(latencies)*99/100]
	r.SchedulerCPUPod = 1000 * r.SchedulerCPU / float64(len(bound))
	r.Throughput = throughput(binds)
	return r
}

// profileSeconds is how long a CPU profile of a run with n measured pods
// lasts: KUBESCHED_BENCH_PROFILE_SECONDS, or n/1500 s within 2 to 30.
func profileSeconds(n int) int {
	if v, err := strconv.Atoi(os.Getenv("KUBESCHED_BENCH_PROFILE_SECONDS")); err == nil && v > 0 {
		return v
	}
	return max(2, min(30, n/1500))
}

// profileFile is where the profile of what (a process) during workload w goes.
func profileFile(dir string, w perfgen.Workload, what string) string {
	return dir + "/" + strings.NewReplacer("/", "_").Replace(w.FullName()) + "-" + what + ".pprof"
}

// measuredPrefix is the name prefix perfgen gives the measured pods.
func measuredPrefix(w perfgen.Workload) string {
	if w.Name == "PreemptionBasic" {
		return "high-"
	}
	return "pod-"
}

// throughput is the average of 1-second samples of binds, from the first
// bind to the last (a last partial second counts pro rata).
func throughput(binds []time.Time) float64 {
	first, last := binds[0], binds[len(binds)-1]
	span := last.Sub(first).Seconds()
	if span < 1 {
		return float64(len(binds))
	}
	var samples []float64
	i := 0
	for t := first; t.Before(last); t = t.Add(time.Second) {
		end := t.Add(time.Second)
		n := 0
		for i < len(binds) && binds[i].Before(end) {
			n++
			i++
		}
		width := min(1, last.Sub(t).Seconds())
		if width < 1 {
			n += len(binds) - i // the last bind itself
			i = len(binds)
		}
		samples = append(samples, float64(n)/max(width, 0.001))
	}
	sum := 0.0
	for _, s := range samples {
		sum += s
	}
	return sum / float64(len(samples))
}

// createAll creates objects on 16 workers, in order per kind: namespaces
// and services first, then nodes (with their status), then pods.
func createAll(t *testing.T, c kubernetes.Interface, objs []runtime.Object, after ...func(runtime.Object)) {
	t.Helper()
	ctx := context.Background()
	var groups [3][]runtime.Object
	for _, o := range objs {
		switch o.(type) {
		case *v1.Namespace, *v1.Service:
			groups[0] = append(groups[0], o)
		case *v1.Node, *resourceapi.ResourceSlice, *resourceapi.DeviceClass, *resourceapi.ResourceClaimTemplate:
			groups[1] = append(groups[1], o)
		default:
			groups[2] = append(groups[2], o)
		}
	}
	for _, g := range groups {
		var mu sync.Mutex
		var firstErr error
		workqueue.ParallelizeUntil(ctx, 16, len(g), func(i int) {
			err := create(ctx, c, g[i])
			if err == nil {
				for _, f := range after {
					f(g[i])
				}
			}
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
		if firstErr != nil {
			t.Fatal(firstErr)
		}
	}
}

// churn is scheduler_perf's recreate churn: every period, each template's
// last object is deleted and a new one created, until stop is closed.
func churn(t *testing.T, c kubernetes.Interface, ch *perfgen.Churn, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	ctx := context.Background()
	last := make([]runtime.Object, len(ch.Templates))
	tick := time.NewTicker(ch.Interval)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		for i, tmpl := range ch.Templates {
			if prev := last[i]; prev != nil {
				if err := remove(ctx, c, prev); err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("churn: deleting: %v", err)
				}
			}
			o := tmpl.DeepCopyObject()
			m := o.(metav1.Object)
			m.SetName(fmt.Sprintf("churn-%d-%d", i, n))
			if err := create(ctx, c, o); err != nil {
				t.Errorf("churn: creating %s: %v", m.GetName(), err)
				continue
			}
			last[i] = o
		}
	}
}

func remove(ctx context.Context, c kubernetes.Interface, o runtime.Object) error {
	m := o.(metav1.Object)
	switch o.(type) {
	case *v1.Node:
		return c.CoreV1().Nodes().Delete(ctx, m.GetName(), metav1.DeleteOptions{})
	case *v1.Pod:
		return c.CoreV1().Pods(m.GetNamespace()).Delete(ctx, m.GetName(), metav1.DeleteOptions{})
	case *v1.Service:
		return c.CoreV1().Services(m.GetNamespace()).Delete(ctx, m.GetName(), metav1.DeleteOptions{})
	}
	return fmt.Errorf("benchmark: cannot delete a %T", o)
}

func create(ctx context.Context, c kubernetes.Interface, o runtime.Object) error {
	switch x := o.(type) {
	case *v1.Namespace:
		_, err := c.CoreV1().Namespaces().Create(ctx, x, metav1.CreateOptions{})
		return err
	case *v1.Service:
		_, err := c.CoreV1().Services(x.Namespace).Create(ctx, x, metav1.CreateOptions{})
		return err
	case *v1.Node:
		n, err := c.CoreV1().Nodes().Create(ctx, x, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		n.Status = x.Status
		_, err = c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	case *v1.Pod:
		_, err := c.CoreV1().Pods(x.Namespace).Create(ctx, x, metav1.CreateOptions{})
		return err
	case *resourceapi.ResourceSlice:
		_, err := c.ResourceV1().ResourceSlices().Create(ctx, x, metav1.CreateOptions{})
		return err
	case *resourceapi.DeviceClass:
		_, err := c.ResourceV1().DeviceClasses().Create(ctx, x, metav1.CreateOptions{})
		return err
	case *resourceapi.ResourceClaimTemplate:
		_, err := c.ResourceV1().ResourceClaimTemplates(x.Namespace).Create(ctx, x, metav1.CreateOptions{})
		return err
	}
	return fmt.Errorf("benchmark: cannot create a %T", o)
}

// waitForClaims waits until the resourceclaim controller has made n
// claims (one per measured pod), so that the schedulers are timed on the
// backlog, not on the controller.
func waitForClaims(t *testing.T, c kubernetes.Interface, n int) {
	t.Helper()
	fw.Eventually(t, 10*time.Minute, fmt.Sprintf("the resourceclaim controller makes %d claims", n), func() (bool, error) {
		list, err := c.ResourceV1().ResourceClaims("").List(context.Background(), metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return false, err
		}
		return len(list.Items) >= n, nil
	})
}

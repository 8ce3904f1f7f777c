package volumebinding

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/internal/cache"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

// fakeAPI is the API server and its informers for PreBind: it takes the
// plugin's writes, may play the PV controller, and serves the listers.
// A test changes it while PreBind waits, under its lock.
type fakeAPI struct {
	st.FakeHandle
	mu      sync.Mutex
	objs    map[string]interface{} // kind/namespace/name -> object
	version int
	// controller completes a binding as it is written (the simulator's
	// store); otherwise the test does.
	controller bool
	// stale: the listers do not see the plugin's writes (a slow informer).
	stale   bool
	podGone bool
}

func objKey(obj interface{}) string {
	switch o := obj.(type) {
	case *v1.PersistentVolume:
		return "pv//" + o.Name
	case *v1.PersistentVolumeClaim:
		return "pvc/" + o.Namespace + "/" + o.Name
	case *v1.Node:
		return "node//" + o.Name
	}
	m := obj.(metav1.Object)
	return "other/" + m.GetNamespace() + "/" + m.GetName()
}

func newFakeAPI(objs ...interface{}) *fakeAPI {
	a := &fakeAPI{objs: map[string]interface{}{}}
	for _, o := range objs {
		a.putLocked(o.(metav1.Object))
	}
	return a
}

// putLocked stores an object with the next resource version.
func (a *fakeAPI) putLocked(obj metav1.Object) {
	a.version++
	obj.SetResourceVersion(strconv.Itoa(a.version))
	a.objs[objKey(obj)] = obj
}

func (a *fakeAPI) pv(name string) *v1.PersistentVolume {
	return a.objs["pv//"+name].(*v1.PersistentVolume).DeepCopy()
}

func (a *fakeAPI) pvc(name string) *v1.PersistentVolumeClaim {
	return a.objs["pvc/default/"+name].(*v1.PersistentVolumeClaim).DeepCopy()
}

// bindLocked completes the binding of claim to volume, as the PV
// controller does.
func (a *fakeAPI) bindLocked(claim, volume string) {
	pvc := a.pvc(claim)
	pvc.Spec.VolumeName = volume
	metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, annBindCompleted, "yes")
	a.putLocked(pvc)
}

func (a *fakeAPI) Listers() framework.Listers {
	a.mu.Lock()
	defer a.mu.Unlock()
	objs := make([]interface{}, 0, len(a.objs))
	for _, o := range a.objs {
		objs = append(objs, o)
	}
	l, err := framework.StaticListers(objs...)
	if err != nil {
		panic(err)
	}
	return l
}

func (a *fakeAPI) GetPod(namespace, name string) (*v1.Pod, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}, !a.podGone
}

// GetNode is the informer's node lister: the nodes among the objects.
func (a *fakeAPI) GetNode(name string) (*v1.Node, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n, ok := a.objs["node//"+name].(*v1.Node)
	return n, ok
}

func (a *fakeAPI) VolumeWriter() framework.VolumeWriter { return a }

func (a *fakeAPI) UpdatePersistentVolume(_ context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	pv = pv.DeepCopy()
	if a.stale {
		a.version++
		pv.ResourceVersion = strconv.Itoa(a.version)
		return pv, nil
	}
	a.putLocked(pv)
	if a.controller {
		a.bindLocked(pv.Spec.ClaimRef.Name, pv.Name)
	}
	return pv, nil
}

func (a *fakeAPI) UpdatePersistentVolumeClaim(_ context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	pvc = pvc.DeepCopy()
	a.putLocked(pvc)
	if a.controller {
		a.putLocked(st.MakePV("pvc-"+string(pvc.UID), "1Gi", "csi").Obj())
		a.bindLocked(pvc.Name, "pvc-"+string(pvc.UID))
	}
	return pvc, nil
}

// reserveOn runs PreFilter over nodes, Filter on node and Reserve there:
// the state PreBind starts from.
func reserveOn(t *testing.T, vb *VolumeBinding, pod *v1.Pod, nodes []*framework.NodeInfo, node *framework.NodeInfo) *framework.CycleState {
	t.Helper()
	ctx, state := context.Background(), framework.NewCycleState()
	if _, s := vb.PreFilter(ctx, state, pod, nodes); !s.IsSuccess() {
		t.Fatal(s)
	}
	if s := vb.Filter(ctx, state, pod, node); !s.IsSuccess() {
		t.Fatal(s)
	}
	if s := vb.Reserve(ctx, state, pod, node.NodeName()); !s.IsSuccess() {
		t.Fatal(s)
	}
	return state
}

func TestPreBindWaitsForThePVController(t *testing.T) {
	static := func() []interface{} {
		pvc := st.MakePVC("data", "1Gi").Class("local").Obj()
		pvc.UID = "uid-data"
		return []interface{}{pvc, st.StorageClass("local", wffc, ""), st.MakePV("pv-a", "1Gi", "local").NodeAffinityIn(zone, "a").Obj()}
	}
	provisioned := func() []interface{} {
		pvc := st.MakePVC("data", "1Gi").Class("csi").Obj()
		pvc.UID = "uid-data"
		return []interface{}{pvc, st.StorageClass("csi", wffc, "csi.example.com")}
	}
	tests := []struct {
		name       string
		objs       []interface{}
		controller bool
		stale      bool
		// then plays the cluster while PreBind waits, before the clock
		// moves by step; nil when PreBind must not wait.
		then    func(a *fakeAPI, cancel context.CancelFunc)
		step    time.Duration
		wantErr string
	}{
		{
			name:       "a binding the PV controller completes as it is written needs no wait",
			objs:       static(),
			controller: true,
		},
		{
			name:       "a claim provisioned as its selected node is written needs no wait",
			objs:       provisioned(),
			controller: true,
		},
		{
			name: "the PV controller binding the claim a second later ends the wait",
			objs: static(),
			then: func(a *fakeAPI, _ context.CancelFunc) { a.bindLocked("data", "pv-a") },
			step: time.Second,
		},
		{
			name:  "a volume the informer has not seen written yet is waited for, not taken for a reset claimRef",
			objs:  static(),
			stale: true,
			then: func(a *fakeAPI, _ context.CancelFunc) {
				pv := a.pv("pv-a")
				pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "default", Name: "data", UID: "uid-data"}
				a.version += 5
				a.putLocked(pv)
				a.bindLocked("data", "pv-a")
			},
			step: time.Second,
		},
		{
			name:    "a binding nobody completes fails after bindTimeoutSeconds",
			objs:    static(),
			then:    func(*fakeAPI, context.CancelFunc) {},
			step:    30 * time.Second,
			wantErr: "binding volumes: context deadline exceeded",
		},
		{
			name: "a volume whose claimRef the PV controller resets fails PreBind",
			objs: static(),
			then: func(a *fakeAPI, _ context.CancelFunc) {
				pv := a.pv("pv-a")
				pv.Spec.ClaimRef = nil
				a.putLocked(pv)
			},
			step:    time.Second,
			wantErr: "binding volumes: ClaimRef got reset for pv \"pv-a\"",
		},
		{
			name:    "a claim deleted while PreBind waits fails it",
			objs:    static(),
			then:    func(a *fakeAPI, _ context.CancelFunc) { delete(a.objs, "pvc/default/data") },
			step:    time.Second,
			wantErr: "binding volumes: failed to check binding: persistentvolumeclaims \"default/data\" not found",
		},
		{
			name:    "a volume deleted while PreBind waits fails it",
			objs:    static(),
			then:    func(a *fakeAPI, _ context.CancelFunc) { delete(a.objs, "pv//pv-a") },
			step:    time.Second,
			wantErr: "binding volumes: failed to check binding: persistentvolumes \"pv-a\" not found",
		},
		{
			name: "a provisioner that removes the selected node fails PreBind",
			objs: provisioned(),
			then: func(a *fakeAPI, _ context.CancelFunc) {
				pvc := a.pvc("data")
				delete(pvc.Annotations, annSelectedNode)
				a.putLocked(pvc)
			},
			step:    time.Second,
			wantErr: "binding volumes: provisioning failed for PVC \"data\"",
		},
		{
			name: "a claim whose annotations are all gone fails PreBind",
			objs: provisioned(),
			then: func(a *fakeAPI, _ context.CancelFunc) {
				pvc := a.pvc("data")
				pvc.Annotations = nil
				a.putLocked(pvc)
			},
			step:    time.Second,
			wantErr: "binding volumes: selectedNode annotation reset for PVC \"data\"",
		},
		{
			name:    "the pod deleted while PreBind waits fails it at the next look",
			objs:    static(),
			then:    func(a *fakeAPI, _ context.CancelFunc) { a.podGone = true },
			step:    time.Second,
			wantErr: "binding volumes: pod does not exist any more: pods \"p\" not found",
		},
		{
			name:    "the node deleted while PreBind waits fails it at the next look",
			objs:    static(),
			then:    func(a *fakeAPI, _ context.CancelFunc) { delete(a.objs, "node//a1") },
			step:    time.Second,
			wantErr: "binding volumes: failed to get node \"a1\": node \"a1\" not found",
		},
		{
			name:    "the binding cycle cancelled (the pod's delete event) ends the wait at once",
			objs:    static(),
			then:    func(_ *fakeAPI, cancel context.CancelFunc) { cancel() },
			wantErr: "binding volumes: context canceled",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nis := st.NodeInfos(nodes(), nil)
			clk := testingclock.NewFakeClock(time.Unix(0, 0))
			objs := append([]interface{}{}, tt.objs...)
			for _, n := range nodes() {
				objs = append(objs, n)
			}
			a := newFakeAPI(objs...)
			a.controller, a.stale = tt.controller, tt.stale
			a.Lister, a.Clk = cache.NewSnapshot(nis...), clk
			pl, err := New(context.Background(), &configv1.VolumeBindingArgs{BindTimeoutSeconds: ptr.To[int64](30)}, a)
			if err != nil {
				t.Fatal(err)
			}
			vb := pl.(*VolumeBinding)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pod := st.MakePod().Name("p").UID("uid-p").Volume("data").Obj()
			state := reserveOn(t, vb, pod, nis, nis[0])
			done := make(chan *framework.Status, 1)
			go func() { done <- vb.PreBind(ctx, state, pod, "a1") }()
			var got *framework.Status
			for waited := false; ; runtime.Gosched() {
				select {
				case got = <-done:
				default:
					// PreBind waits on two: its timeout and its ticker.
					// Stepping the clock between the two would leave the
					// ticker, made after the step, waiting for ever.
					if !waited && clk.Waiters() >= 2 {
						if tt.then == nil {
							t.Fatal("PreBind waits, want it done at once")
						}
						a.mu.Lock()
						tt.then(a, cancel)
						a.mu.Unlock()
						clk.Step(tt.step)
						waited = true
					}
					continue
				}
				break
			}
			gotErr := ""
			if !got.IsSuccess() {
				gotErr = got.Message()
			}
			if gotErr != tt.wantErr {
				t.Errorf("PreBind = %v, want error %q", got, tt.wantErr)
			}
		})
	}
}

// TestPreBindReadsNodesFromTheWorldWhileTheNextCycleRewritesTheSnapshot:
// PreBind runs on the binding cycle's goroutine and waits, polling every
// second, while the scheduling goroutine goes on updating the snapshot
// (nodes added and removed: the snapshot's map and list rewritten). A
// read of the snapshot from PreBind is a data race (go test -race fails
// this test) and, in production, Go's fatal "concurrent map read and map
// write"; PreBind reads the node from the world (the informer) instead.
func TestPreBindReadsNodesFromTheWorldWhileTheNextCycleRewritesTheSnapshot(t *testing.T) {
	c := cache.New(klog.Background())
	for _, n := range nodes() {
		c.AddNode(n)
	}
	snap := cache.NewEmptySnapshot()
	c.UpdateSnapshot(snap)
	clk := testingclock.NewFakeClock(time.Unix(0, 0))
	pvc := st.MakePVC("data", "1Gi").Class("local").Obj()
	pvc.UID = "uid-data"
	objs := []interface{}{pvc, st.StorageClass("local", wffc, ""), st.MakePV("pv-a", "1Gi", "local").NodeAffinityIn(zone, "a").Obj()}
	for _, n := range nodes() {
		objs = append(objs, n)
	}
	a := newFakeAPI(objs...)
	a.Lister, a.Clk = snap, clk
	pl, err := New(context.Background(), &configv1.VolumeBindingArgs{BindTimeoutSeconds: ptr.To[int64](600)}, a)
	if err != nil {
		t.Fatal(err)
	}
	vb := pl.(*VolumeBinding)
	ctx := context.Background()
	pod := st.MakePod().Name("p").UID("uid-p").Volume("data").Obj()
	nis, _ := snap.List()
	a1, _ := snap.Get("a1")
	state := reserveOn(t, vb, pod, nis, a1)
	done := make(chan *framework.Status, 1)
	go func() { done <- vb.PreBind(ctx, state, pod, "a1") }()
	// The scheduling goroutine: a node added and removed per round, the
	// snapshot brought up to date each time, the clock stepped so that
	// PreBind looks again; the PV controller binds after 20 rounds.
	var got *framework.Status
	for round, finished := 0, false; !finished; round++ {
		extra := st.MakeNode().Name(fmt.Sprintf("churn-%d", round)).Label(zone, "a").Obj()
		c.AddNode(extra)
		c.UpdateSnapshot(snap)
		if err := c.RemoveNode(extra); err != nil {
			t.Fatal(err)
		}
		c.UpdateSnapshot(snap)
		if round == 20 {
			a.mu.Lock()
			a.bindLocked("data", "pv-a")
			a.mu.Unlock()
		}
		if clk.Waiters() >= 2 {
			clk.Step(time.Second)
		}
		select {
		case got = <-done:
			finished = true
		default:
			runtime.Gosched()
		}
	}
	if !got.IsSuccess() {
		t.Errorf("PreBind = %v, want success once the PV controller bound the claim", got)
	}
}

package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	ptrs "k8s.io/utils/ptr"
)

// ---- actors ----

func (s *soak) startActors() {
	churnCtx, churnStop := context.WithCancel(s.ctx)
	s.churnStop = churnStop
	s.churnDone = make(chan struct{})
	for _, actor := range []func(){s.provisioner, s.driver, s.checker} {
		s.actors.Add(1)
		go func() {
			defer s.actors.Done()
			actor()
		}()
	}
	go func() {
		defer close(s.churnDone)
		s.churn(churnCtx)
	}()
}

func (s *soak) stopChurn() {
	if s.churnStop != nil {
		s.churnStop()
		<-s.churnDone
	}
}

func (s *soak) stopActors() {
	s.stopChurn()
	s.cancel()
	s.actors.Wait()
	s.gangWaiter.Wait()
}

func (s *soak) every(ctx context.Context, d time.Duration, f func()) {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			f()
		}
	}
}

// churn adds a node and removes another, in turn, every 5 s (each node
// lives about a minute and a half at the default size), keeping the
// count within one of the start's; and sweeps.
func (s *soak) churn(ctx context.Context) {
	i := 0
	s.every(ctx, 5*time.Second, func() {
		i++
		nodes := s.nodeList()
		if i%2 == 1 || len(nodes) < s.nodesStart {
			if err := s.addNode(); err != nil {
				s.errorf("adding a node: %v", err)
			}
		} else {
			if err := s.removeNode(nodes[int(s.draw("remove", i)*float64(len(nodes)))]); err != nil {
				s.errorf("removing a node: %v", err)
			}
		}
		s.sweep()
	})
}

// sweep is the pod garbage collector's part: pods bound to a node that
// is gone, and pending pods whose provisioned volume is on a node that is
// gone, are deleted and created again (a network volume is on none).
func (s *soak) sweep() {
	ctx := context.Background()
	pods, err := s.c.CoreV1().Pods(soakNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	nodes := map[string]bool{}
	for _, n := range s.nodeList() {
		nodes[n] = true
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && !nodes[p.Spec.NodeName] {
			if s.recreate(p.Name, p.UID) {
				s.fault("nodes", "pods bound to a removed node")
			}
			continue
		}
		if p.Spec.NodeName != "" || len(p.Spec.Volumes) == 0 || p.Spec.Volumes[0].PersistentVolumeClaim == nil {
			continue
		}
		pvc, err := s.c.CoreV1().PersistentVolumeClaims(soakNS).Get(ctx, p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName, metav1.GetOptions{})
		if err != nil || pvc.Spec.VolumeName == "" {
			continue
		}
		pv, err := s.c.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			continue
		}
		if node := pvNode(pv); node != "" && !nodes[node] {
			if s.recreate(p.Name, p.UID) {
				s.fault("nodes", "pending pods whose volume's node was removed")
			}
		}
	}
}

func pvNode(pv *v1.PersistentVolume) string {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return ""
	}
	for _, term := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, e := range term.MatchExpressions {
			if e.Key == v1.LabelHostname && len(e.Values) == 1 {
				return e.Values[0]
			}
		}
	}
	return ""
}

// provisioner plays an external provisioner and the PV controller: for
// each claim with a selected node, a seeded choice per attempt. A volume
// pod's claim (soakClass): provision at once (55%), after 1-3 s (20%),
// or give up (25%: the annotation removed); a claim's third attempt
// always succeeds, and a selected node that is gone is given up at once.
// A gang member's claim (soakNetClass, network storage): provisioned, at
// once (40%) or after 0.5-2 s (60%), never given up, whatever the node
// (see soakNetClass). Each is counted under its pod's path.
func (s *soak) provisioner() {
	type attempt struct {
		node   string
		action string
		due    time.Time
	}
	current := map[types.UID]*attempt{}
	tries := map[types.UID]int{}
	s.every(s.ctx, 200*time.Millisecond, func() {
		list, err := s.c.CoreV1().PersistentVolumeClaims(soakNS).List(s.ctx, metav1.ListOptions{})
		if err != nil {
			return
		}
		nodes := map[string]bool{}
		for _, n := range s.nodeList() {
			nodes[n] = true
		}
		now := time.Now()
		for i := range list.Items {
			pvc := &list.Items[i]
			node := pvc.Annotations["volume.kubernetes.io/selected-node"]
			if pvc.Spec.VolumeName != "" || node == "" || pvc.DeletionTimestamp != nil {
				continue
			}
			a := current[pvc.UID]
			if a == nil || a.node != node {
				tries[pvc.UID]++
				a = &attempt{node: node, action: "provisioned", due: now}
				r := s.draw("provision", pvc.Name, tries[pvc.UID])
				network := ptrs.Deref(pvc.Spec.StorageClassName, "") == soakNetClass
				switch {
				case network:
					if r >= 0.4 {
						a.action, a.due = "provisioning delayed", now.Add(time.Duration(500+(r-0.4)/0.6*1500)*time.Millisecond)
					}
				case isWarm(pvc.Name) || tries[pvc.UID] >= 3:
				case r < 0.55:
				case r < 0.75:
					a.action, a.due = "provisioning delayed", now.Add(time.Duration(1000+r*2000)*time.Millisecond)
				default:
					a.action = "provisioning failed"
				}
				if !nodes[node] && !network {
					a.action = "selected node gone"
				}
				current[pvc.UID] = a
				s.fault(pathOf(pvc.Name), a.action)
			}
			if now.Before(a.due) {
				continue
			}
			switch a.action {
			case "provisioning failed", "selected node gone":
				delete(current, pvc.UID)
				s.unselect(pvc)
			default:
				// A conflict (the scheduler wrote the claim meanwhile) is
				// tried again at the next look, as the PV controller would.
				if err := s.provision(pvc, node); err != nil && s.ctx.Err() == nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
					s.t.Logf("provisioning %s: %v (tried again)", pvc.Name, err)
				}
			}
		}
	})
}

// unselect removes the selected-node annotation (a provisioner giving up).
func (s *soak) unselect(pvc *v1.PersistentVolumeClaim) {
	patch := []byte(`{"metadata":{"annotations":{"volume.kubernetes.io/selected-node":null}}}`)
	if _, err := s.c.CoreV1().PersistentVolumeClaims(soakNS).Patch(s.ctx, pvc.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
		s.t.Logf("removing %s's selected node: %v", pvc.Name, err)
	}
}

// provision creates the claim's volume, on node (soakClass) or on none
// (soakNetClass: network storage, no node affinity), and binds both as
// the PV controller does.
func (s *soak) provision(pvc *v1.PersistentVolumeClaim, node string) error {
	ctx := s.ctx
	class, driver := soakClass, soakCSIDriver
	if ptrs.Deref(pvc.Spec.StorageClassName, "") == soakNetClass {
		class, driver = soakNetClass, soakNetDriver
	}
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-" + string(pvc.UID), Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": driver}},
		Spec: v1.PersistentVolumeSpec{
			StorageClassName: class,
			Capacity:         v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			ClaimRef: &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: pvc.Namespace, Name: pvc.Name,
				UID: pvc.UID},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
			PersistentVolumeSource:        v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: "vol-" + string(pvc.UID)}},
		},
	}
	if class == soakClass {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{node}}}}}}}
	}
	created, err := s.c.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = s.c.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
	}
	if err != nil {
		return err
	}
	if created.Status.Phase != v1.VolumeBound {
		created.Status.Phase = v1.VolumeBound
		if _, err := s.c.CoreV1().PersistentVolumes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	cur, err := s.c.CoreV1().PersistentVolumeClaims(soakNS).Get(ctx, pvc.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if cur.UID != pvc.UID || cur.Annotations["volume.kubernetes.io/selected-node"] != node {
		return nil // deleted, or another attempt
	}
	cur.Spec.VolumeName = pv.Name
	metav1.SetMetaDataAnnotation(&cur.ObjectMeta, "pv.kubernetes.io/bind-completed", "yes")
	metav1.SetMetaDataAnnotation(&cur.ObjectMeta, "pv.kubernetes.io/bound-by-controller", "yes")
	updated, err := s.c.CoreV1().PersistentVolumeClaims(soakNS).Update(ctx, cur, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	updated.Status.Phase = v1.ClaimBound
	updated.Status.AccessModes = pv.Spec.AccessModes
	updated.Status.Capacity = pv.Spec.Capacity
	_, err = s.c.CoreV1().PersistentVolumeClaims(soakNS).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	return err
}

// driver plays the DRA driver: for each allocation of a device with
// binding conditions, a seeded choice per attempt: the condition met
// (after up to 1.5 s, 55%), failed (AttachFailed, 25%), or never set
// (20%: the scheduler's bindingTimeout expires); a claim's third
// allocation always attaches.
func (s *soak) driver() {
	decided := map[string]bool{}
	written := map[string]bool{}
	type pendingWrite struct {
		due       time.Time
		condition string
	}
	pending := map[string]pendingWrite{}
	tries := map[types.UID]int{}
	s.every(s.ctx, 200*time.Millisecond, func() {
		list, err := s.c.ResourceV1().ResourceClaims(soakNS).List(s.ctx, metav1.ListOptions{})
		if err != nil {
			return
		}
		now := time.Now()
		for i := range list.Items {
			claim := &list.Items[i]
			a := claim.Status.Allocation
			if a == nil || len(a.Devices.Results) == 0 || len(a.Devices.Results[0].BindingConditions) == 0 {
				continue
			}
			// An allocation is its claim and timestamp (to the second, as
			// the API keeps it): a claim deallocated after a failed
			// condition and allocated again within the second has the
			// same, but no device status (deallocation clears it) after
			// this driver wrote one.
			key := string(claim.UID) + "/"
			if a.AllocationTimestamp != nil {
				key += a.AllocationTimestamp.UTC().Format(time.RFC3339)
			}
			if written[key] && len(claim.Status.Devices) == 0 {
				delete(decided, key)
				delete(written, key)
			}
			owner := ""
			if len(claim.OwnerReferences) > 0 {
				owner = claim.OwnerReferences[0].Name
			}
			if !decided[key] {
				decided[key] = true
				tries[claim.UID]++
				r := s.draw("attach", owner, claim.Name, tries[claim.UID])
				w := pendingWrite{due: now.Add(time.Duration(r*1500) * time.Millisecond), condition: "Attached"}
				kind := "binding condition met"
				switch {
				case isWarm(owner) || tries[claim.UID] >= 3:
				case r < 0.55:
				case r < 0.80:
					w, kind = pendingWrite{due: now, condition: "AttachFailed"}, "binding condition failed"
				default:
					w.condition, kind = "", "binding condition never set (timeout)"
				}
				s.fault("dra", kind)
				if w.condition != "" {
					pending[key] = w
				}
			}
			if w, ok := pending[key]; ok && !now.Before(w.due) {
				err := s.setCondition(claim, w.condition)
				switch {
				case err == nil:
					delete(pending, key)
					written[key] = true
				case apierrors.IsNotFound(err):
					delete(pending, key)
				case s.ctx.Err() == nil && !apierrors.IsConflict(err):
					s.t.Logf("setting %s on claim %s: %v (tried again)", w.condition, claim.Name, err)
				}
			}
		}
	})
}

func (s *soak) setCondition(claim *resourceapi.ResourceClaim, condition string) error {
	c := claim.DeepCopy()
	c.Status.Devices = nil
	for _, r := range c.Status.Allocation.Devices.Results {
		c.Status.Devices = append(c.Status.Devices, resourceapi.AllocatedDeviceStatus{Driver: r.Driver, Pool: r.Pool, Device: r.Device,
			Conditions: []metav1.Condition{{Type: condition, Status: metav1.ConditionTrue, Reason: condition, Message: "by the soak's driver", LastTransitionTime: metav1.Now()}}})
	}
	_, err := s.c.ResourceV1().ResourceClaims(soakNS).UpdateStatus(s.ctx, c, metav1.UpdateOptions{})
	return err
}

// ---- the extender ----

// startExtender serves an ignorable extender's filter and prioritize
// verbs; each call, by a seeded choice per pod, verb and call: answers
// (60%), sleeps past httpTimeout (20%), or answers 500 (20%). Its
// answers leave out one node (when there are two or more) and score the
// others.
func (s *soak) startExtender(httpTimeout time.Duration) string {
	var mu sync.Mutex
	calls := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		verb := strings.TrimPrefix(r.URL.Path, "/")
		var a extenderv1.ExtenderArgs
		if err := json.NewDecoder(r.Body).Decode(&a); err != nil || a.Pod == nil || a.Nodes == nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		n := calls[a.Pod.Name+"/"+verb]
		calls[a.Pod.Name+"/"+verb]++
		mu.Unlock()
		s.mu.Lock()
		hold := s.holds[a.Pod.Name]
		if verb == "filter" {
			delete(s.holds, a.Pod.Name)
		}
		s.mu.Unlock()
		kind := "answered"
		if hold != nil && verb == "filter" {
			// A gang's cycle held here (within httpTimeout) while the
			// test deletes a member, and for kubesched to see it.
			hold()
			time.Sleep(soakHoldAfterDelete)
			kind = "held for a deletion"
		} else if d := s.draw("extender", a.Pod.Name, verb, n); !isWarm(a.Pod.Name) && d < 0.2 {
			kind = "timed out"
		} else if !isWarm(a.Pod.Name) && d < 0.4 {
			kind = "500"
		}
		s.fault("extender", verb+" "+kind)
		switch kind {
		case "timed out":
			select {
			case <-time.After(httpTimeout + 300*time.Millisecond):
			case <-r.Context().Done():
			}
			http.Error(w, "too late", http.StatusGatewayTimeout)
			return
		case "500":
			http.Error(w, "injected by the soak's extender", http.StatusInternalServerError)
			return
		}
		var out any
		switch verb {
		case "filter":
			res := extenderv1.ExtenderFilterResult{Nodes: &v1.NodeList{}, FailedNodes: extenderv1.FailedNodesMap{}}
			skip := -1
			if len(a.Nodes.Items) > 1 {
				skip = int(s.draw("extender skip", a.Pod.Name, n) * float64(len(a.Nodes.Items)))
			}
			for i, node := range a.Nodes.Items {
				if i == skip {
					res.FailedNodes[node.Name] = "the soak's extender leaves this node out"
				} else {
					res.Nodes.Items = append(res.Nodes.Items, node)
				}
			}
			out = res
		case "prioritize":
			var res extenderv1.HostPriorityList
			for _, node := range a.Nodes.Items {
				res = append(res, extenderv1.HostPriority{Host: node.Name, Score: int64(s.draw("extender score", a.Pod.Name, node.Name) * 10)})
			}
			out = res
		default:
			http.Error(w, "unknown verb", http.StatusNotFound)
			return
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	s.t.Cleanup(srv.Close)
	return srv.URL
}

package integration

import (
	"context"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ptrs "k8s.io/utils/ptr"
)

// ---- gangs ----

// The gangs' plans: how the test disturbs each one.
var gangPlans = []string{
	"none",
	"recreate during the cycle",
	"recreate during the cycle",
	"recreate in PreBind",
	"recreate in PreBind",
	"delete before complete, recreate late",
	"delete while placed, recreate late",
	"delete while placed, recreate late",
	"group after members",
	"unsatisfiable",
}

// runGang creates a PodGroup (minCount 3) and its three members and
// applies the plan.
func (s *soak) runGang(name, plan string) {
	ctx := context.Background()
	s.mu.Lock()
	s.gangs[name] = plan
	s.mu.Unlock()
	if plan != "none" {
		s.fault("gang", plan)
	}
	group := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: soakNS, Name: name},
		Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: soakGangMin}}}}
	createGroup := func() {
		if _, err := s.c.SchedulingV1beta1().PodGroups(soakNS).Create(ctx, group, metav1.CreateOptions{}); err != nil {
			s.errorf("creating pod group %s: %v", name, err)
		}
	}
	if plan != "group after members" {
		createGroup()
	}
	members := make([]string, soakGangMin)
	for i := range members {
		members[i] = fmt.Sprintf("%s-m%d", name, i)
	}
	// The victim is one of the first members (created before the last).
	victim := members[int(s.draw("victim", name)*(soakGangMin-1))]
	var held chan struct{}
	var heldFor time.Duration
	if plan == "delete while placed, recreate late" {
		// The members ask for the extender's resource: when the extender
		// is asked to filter the last member, the group's cycle has
		// begun, the victim is (or is about to be) placed in it; the
		// extender holds the call while the victim is deleted.
		held = make(chan struct{})
		last := members[soakGangMin-1]
		s.mu.Lock()
		s.holds[last] = func() {
			// Not under opMu: the call must end within httpTimeout, or
			// kubesched goes on without the extender and the deletion may
			// come after the group passed Permit (then two bound is no
			// fault). heldFor tells.
			defer close(held)
			start := time.Now()
			defer func() { heldFor = time.Since(start) }()
			p, ok := s.current(victim)
			if !ok {
				return
			}
			if s.deleteLocked(&p, p.uid) {
				s.mu.Lock()
				s.pods[victim].gen++
				s.mu.Unlock()
			}
		}
		s.mu.Unlock()
	}
	for i, m := range members {
		// "recreate in PreBind": the members' claims are network storage
		// (soakNetClass), which never pins a member that fails after
		// Permit to a node.
		p := &soakPod{name: m, path: "gang", group: name, pvc: plan == "recreate in PreBind", huge: plan == "unsatisfiable" && i == soakGangMin-1,
			ext: plan == "delete while placed, recreate late"}
		if plan == "delete before complete, recreate late" && i == soakGangMin-1 {
			// The victim goes before the last member comes: the group
			// never has minCount members until it is created again.
			s.deleteLater(victim)
		}
		s.createPod(p)
	}
	switch plan {
	case "delete while placed, recreate late":
		select {
		case <-held:
		case <-time.After(60 * time.Second):
			s.mu.Lock()
			_, waiting := s.holds[members[soakGangMin-1]]
			delete(s.holds, members[soakGangMin-1])
			s.mu.Unlock()
			if waiting {
				s.fault("gang", plan+": the extender was not asked about the last member")
				return
			}
			<-held // running now
		}
		time.Sleep(time.Duration(1000+s.draw("late", name)*1000) * time.Millisecond)
		s.opMu.Lock()
		defer s.opMu.Unlock()
		// The group has had two members of three since the victim went:
		// none may be bound (they wait at Permit for the third).
		if heldFor > soakExtenderTimeout-soakHoldAfterDelete-100*time.Millisecond {
			s.fault("gang", plan+": the deletion took too long to hold the cycle")
		} else if bound := s.boundMembers(name); len(bound) > 0 {
			s.recordViolation("gang partial: "+name, fmt.Sprintf("gang %s bound %v while %s was deleted (during the group's cycle) and not yet created again", name, bound, victim))
		}
		s.mu.Lock()
		cur := s.pods[victim]
		s.mu.Unlock()
		if !cur.gone {
			s.createLocked(cur)
		}
	case "group after members":
		createGroup()
	case "recreate during the cycle":
		time.Sleep(time.Duration(s.draw("delay", name)*50) * time.Millisecond)
		s.recreateNamed(victim)
	case "recreate in PreBind":
		// The members wait in PreBind for their volumes: the first one
		// whose claim has a selected node (its binding cycle runs) and
		// that is not bound yet is created again.
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) && s.ctx.Err() == nil {
			if m := s.memberInPreBind(members); m != "" {
				s.recreateNamed(m)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		s.fault("gang", "recreate in PreBind: no member seen in PreBind")
	case "unsatisfiable":
		// Members that fit come and go while the group cannot be placed.
		for i := 0; i < 2; i++ {
			time.Sleep(time.Duration(200+s.draw("delay", name, i)*800) * time.Millisecond)
			s.recreateNamed(members[i])
		}
	}
}

// deleteLater is the first half of "delete before complete, recreate
// late": victim (already created) is deleted now and created again after
// 1-2 s; meanwhile no member of its gang may bind.
func (s *soak) deleteLater(victim string) {
	p, ok := s.current(victim)
	if !ok {
		return
	}
	s.opMu.Lock()
	deleted := s.deleteLocked(&p, p.uid)
	s.opMu.Unlock()
	if !deleted {
		return
	}
	s.gangWaiter.Add(1)
	go func() {
		defer s.gangWaiter.Done()
		time.Sleep(time.Duration(1000+s.draw("late", victim)*1000) * time.Millisecond)
		s.opMu.Lock()
		defer s.opMu.Unlock()
		s.mu.Lock()
		cur := s.pods[victim]
		if cur.gone {
			s.mu.Unlock()
			return
		}
		cur.gen++
		group := cur.group
		s.mu.Unlock()
		// Before it comes back, the group had two members of three: none
		// may be bound.
		if bound := s.boundMembers(group); len(bound) > 0 {
			s.recordViolation("gang partial: "+group, fmt.Sprintf("gang %s bound %v while it had %d of %d members", group, bound, soakGangMin-1, soakGangMin))
		}
		s.createLocked(cur)
	}()
}

func (s *soak) recreateNamed(name string) {
	if p, ok := s.current(name); ok {
		s.recreate(name, p.uid)
	}
}

// memberInPreBind returns a member whose claim has a selected node and
// that is not bound.
func (s *soak) memberInPreBind(members []string) string {
	for _, m := range members {
		p, ok := s.current(m)
		if !ok || p.uid == "" {
			continue
		}
		pvc, err := s.c.CoreV1().PersistentVolumeClaims(soakNS).Get(context.Background(), p.pvcName(), metav1.GetOptions{})
		if err != nil || pvc.Annotations["volume.kubernetes.io/selected-node"] == "" {
			continue
		}
		pod, err := s.c.CoreV1().Pods(soakNS).Get(context.Background(), m, metav1.GetOptions{})
		if err == nil && pod.UID == p.uid && pod.Spec.NodeName == "" {
			return m
		}
	}
	return ""
}

func (s *soak) boundMembers(group string) []string {
	pods, err := s.c.CoreV1().Pods(soakNS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && p.Spec.SchedulingGroup != nil && ptrs.Deref(p.Spec.SchedulingGroup.PodGroupName, "") == group {
			out = append(out, p.Name)
		}
	}
	return out
}

// partialGangs lists the gangs with some but fewer than minCount members
// bound.
func (s *soak) partialGangs(pods []v1.Pod) []string {
	bound, all := map[string][]string{}, map[string]int{}
	for _, p := range pods {
		if p.Spec.SchedulingGroup == nil {
			continue
		}
		g := ptrs.Deref(p.Spec.SchedulingGroup.PodGroupName, "")
		all[g]++
		if p.Spec.NodeName != "" {
			bound[g] = append(bound[g], p.Name)
		}
	}
	var out []string
	for g, b := range bound {
		if len(b) < soakGangMin {
			s.mu.Lock()
			plan := s.gangs[g]
			s.mu.Unlock()
			out = append(out, fmt.Sprintf("%s (%s): %d of %d members bound (%v), minCount %d", g, plan, len(b), all[g], b, soakGangMin))
		}
	}
	sort.Strings(out)
	return out
}

package cluster

import (
	"fmt"
	"maps"
	"strings"
	"time"
	_ "time/tzdata" // spec.timeZone: the same zones on every machine

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The CronJob controller, as kube-controller-manager v1.37.2's
// (pkg/controller/cronjob, syncCronJob), on the simulation's clock. How a
// CronJob runs depends on the world (Hooks.CronJobs):
//
//   - in a timeline (simulate replaying a Scenario), each CronJob creates
//     its Job at each time of its schedule (cron syntax, @hourly and the
//     like, in spec.timeZone, UTC by default) after it was created (the
//     start for those of the files), up to the time of the Scenario's last
//     step; a Job whose pods finish (the duration annotation) completes.
//     spec.suspend: no Job. concurrencyPolicy Allow: Jobs may overlap;
//     Forbid: a time that comes while a Job of it runs waits, and its Job
//     starts when that Job completes, unless startingDeadlineSeconds has
//     passed since the time (then that run is missed; only the latest
//     time missed is run, as the controller does); Replace: the Jobs
//     running are deleted, with their pods, and the new one created.
//     successfulJobsHistoryLimit and failedJobsHistoryLimit delete only
//     finished Jobs, which hold no pod here: nothing to do.
//   - otherwise (simulate without a Scenario, capacity, consolidate): a
//     CronJob is counted at its peak, one Job running from the start: the
//     Job of its next time after the start, unless suspended.
//
// Its Jobs are named <cronjob>-<scheduled time in minutes since the Unix
// epoch> and their pods are counted under the CronJob.

// Epoch is the virtual time a simulation starts at (simulator.Epoch), so
// output never depends on the wall clock.
var Epoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

type cronMode int

const (
	// cronIdle: the world has not started; no Job is created.
	cronIdle cronMode = iota
	// cronPeak: one Job per CronJob, once.
	cronPeak
	// cronScheduled: Jobs at the schedule's times, up to until.
	cronScheduled
)

// cronJobs are the CronJobs' controllers.
type cronJobs struct {
	mode  cronMode
	until time.Time
	byKey map[string]*cronJob
	list  []*cronJob
}

// cronJob is a CronJob's controller state.
type cronJob struct {
	cj     *batchv1.CronJob
	source string
	sched  cron.Schedule // nil: the schedule is invalid (reported)
	// created is when it was created; last, the time of the last Job it
	// created (zero: none); checked, when it last looked for a time due.
	created, last, checked time.Time
	// active are its Jobs not finished, as indexes of c.workloads.
	active  []int
	peaked  bool
	deleted bool
}

// clock is the world's time, the start before the world runs.
func (e *controllers) clock() time.Time {
	if e.now != nil {
		return e.now()
	}
	return Epoch
}

// cronJob runs a CronJob's controller once: it creates the Job due, if
// any.
func (e *controllers) cronJob(cj *batchv1.CronJob, source string) {
	e.workload("CronJob", &cj.ObjectMeta, source)
	st := e.cronState(cj, source)
	if st.sched == nil {
		return
	}
	e.pruneActive(st)
	now := e.clock()
	suspended := cj.Spec.Suspend != nil && *cj.Spec.Suspend
	switch e.crons.mode {
	case cronPeak:
		if !st.peaked && !suspended {
			st.peaked = true
			e.startJob(st, st.sched.Next(st.created))
		}
	case cronScheduled:
		defer func() { st.checked = now }()
		if suspended {
			return
		}
		t, ok := st.mostRecent(now)
		if !ok || t.After(e.crons.until) || (!st.last.IsZero() && !t.After(st.last)) {
			return
		}
		if d := cj.Spec.StartingDeadlineSeconds; d != nil && t.Add(time.Duration(*d)*time.Second).Before(now) {
			return // missed
		}
		switch cj.Spec.ConcurrencyPolicy {
		case batchv1.ForbidConcurrent:
			if len(st.active) > 0 {
				return // waits for the Job running to complete
			}
		case batchv1.ReplaceConcurrent:
			for _, i := range st.active {
				e.deleteJob(i, fmt.Sprintf("deleted with its Job: CronJob %s/%s replaced it at %s", cj.Namespace, cj.Name, t.UTC().Format(time.RFC3339)))
			}
			st.active = nil
		}
		e.startJob(st, t)
	}
}

// cronState is the CronJob's controller state, made (its schedule
// checked as the API server validates it) the first time.
func (e *controllers) cronState(cj *batchv1.CronJob, source string) *cronJob {
	k := ownerKey("CronJob", cj.Namespace, cj.Name)
	if st := e.crons.byKey[k]; st != nil && st.cj == cj {
		return st
	}
	if e.crons.byKey == nil {
		e.crons.byKey = map[string]*cronJob{}
	}
	st := &cronJob{cj: cj, source: source, created: e.clock()}
	e.crons.byKey[k] = st
	e.crons.list = append(e.crons.list, st)
	sched, err := parseSchedule(cj)
	if err != nil {
		where := fmt.Sprintf("CronJob %s/%s", cj.Namespace, cj.Name)
		if source != "" {
			where = source + " (" + where + ")"
		}
		e.c.ControllerErrors = append(e.c.ControllerErrors, fmt.Errorf("%s: %w", where, err))
		return st
	}
	st.sched = sched
	return st
}

// parseSchedule parses spec.schedule in spec.timeZone as
// kube-controller-manager does (cron.ParseStandard of "TZ=<zone>
// <schedule>"), refusing what the API server's validation refuses.
func parseSchedule(cj *batchv1.CronJob) (cron.Schedule, error) {
	spec := cj.Spec.Schedule
	if spec == "" {
		return nil, fmt.Errorf("spec.schedule: Required value")
	}
	if tz := cj.Spec.TimeZone; tz != nil {
		if strings.Contains(spec, "TZ") {
			return nil, fmt.Errorf("spec.schedule: Invalid value: %q: cannot use both timeZone field and TZ or CRON_TZ in schedule", spec)
		}
		if _, err := time.LoadLocation(*tz); err != nil || *tz == "" || strings.EqualFold(*tz, "local") {
			return nil, fmt.Errorf("spec.timeZone: Invalid value: %q: unknown time zone %s", *tz, *tz)
		}
		spec = "TZ=" + *tz + " " + spec
	}
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("spec.schedule: Invalid value: %q: %v", cj.Spec.Schedule, err)
	}
	return s, nil
}

// mostRecent is the latest time of the schedule not run yet, at or before
// now: after the last Job's time (or the creation), and no earlier than
// startingDeadlineSeconds before now (mostRecentScheduleTime).
func (st *cronJob) mostRecent(now time.Time) (time.Time, bool) {
	earliest := st.created
	if !st.last.IsZero() {
		earliest = st.last
	}
	if d := st.cj.Spec.StartingDeadlineSeconds; d != nil {
		if dl := now.Add(-time.Duration(*d) * time.Second); dl.After(earliest) {
			earliest = dl
		}
	}
	var most time.Time
	for t := st.sched.Next(earliest); !t.IsZero() && !t.After(now); t = st.sched.Next(t) {
		most = t
	}
	return most, !most.IsZero()
}

// next is when the CronJob's controller has a time due next: zero when
// it never has (suspended, deleted, invalid, or its next time is after
// until).
func (st *cronJob) next(until time.Time) time.Time {
	if st.deleted || st.sched == nil || (st.cj.Spec.Suspend != nil && *st.cj.Spec.Suspend) {
		return time.Time{}
	}
	from := st.created
	for _, t := range []time.Time{st.last, st.checked} {
		if t.After(from) {
			from = t
		}
	}
	t := st.sched.Next(from)
	if t.IsZero() || t.After(until) {
		return time.Time{}
	}
	return t
}

// startJob creates the CronJob's Job of time t (getJobFromTemplate2): the
// template's labels, annotations (and the scheduled time's, in the
// CronJob's time zone) and spec, owned by the CronJob.
func (e *controllers) startJob(st *cronJob, t time.Time) {
	cj := st.cj
	st.last = t
	name := fmt.Sprintf("%s-%d", cj.Name, t.Unix()/60)
	if e.c.WorkloadIndex("Job", cj.Namespace, name) >= 0 {
		return // created already (the API server answers: already exists)
	}
	loc := time.UTC
	if tz := cj.Spec.TimeZone; tz != nil {
		loc, _ = time.LoadLocation(*tz)
	}
	annotations := maps.Clone(cj.Spec.JobTemplate.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[batchv1.CronJobScheduledTimestampAnnotation] = t.In(loc).Format(time.RFC3339)
	j := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: cj.Namespace,
			Labels: maps.Clone(cj.Spec.JobTemplate.Labels), Annotations: annotations,
			CreationTimestamp: metav1.NewTime(t),
			OwnerReferences:   []metav1.OwnerReference{*metav1.NewControllerRef(cj, batchv1.SchemeGroupVersion.WithKind("CronJob"))},
		},
		Spec: *cj.Spec.JobTemplate.Spec.DeepCopy(),
	}
	e.c.Add(st.source, j)
	in := &e.c.workloads[len(e.c.workloads)-1]
	in.source = st.source
	defaultWorkload(j)
	st.active = append(st.active, len(e.c.workloads)-1)
}

// pruneActive drops the CronJob's Jobs that completed or were deleted.
func (e *controllers) pruneActive(st *cronJob) {
	kept := st.active[:0]
	for _, i := range st.active {
		in := e.c.workloads[i]
		if !in.deleted && !e.jobFinished(in.obj.(*batchv1.Job)) {
			kept = append(kept, i)
		}
	}
	st.active = kept
}

// jobFinished: the Job completed (its pods finish in the simulation, they
// never fail): its completions succeeded, or, without completions, a pod
// succeeded and none runs.
func (e *controllers) jobFinished(j *batchv1.Job) bool {
	if j.Spec.Completions != nil {
		return j.Status.Succeeded >= *j.Spec.Completions
	}
	if j.Status.Succeeded == 0 {
		return false
	}
	_, active := e.counts(ownerKey("Job", j.Namespace, j.Name))
	return active == 0
}

// deleteJob deletes workload i, a Job, and its pods (the garbage
// collector's work, in the background propagation the CronJob controller
// asks for).
func (e *controllers) deleteJob(i int, why string) {
	in := &e.c.workloads[i]
	in.deleted = true
	j := in.obj.(*batchv1.Job)
	if e.remove == nil || e.live == nil {
		return
	}
	for _, p := range e.owned[ownerKey("Job", j.Namespace, j.Name)] {
		if p = e.live(p); p != nil {
			e.remove(p, why)
		}
	}
}

// cronJobWorkload is the workload a Job's pods count under: its
// CronJob's, when a CronJob of the cluster controls it; -1 otherwise.
func (e *controllers) cronJobWorkload(j *batchv1.Job) int {
	ref := metav1.GetControllerOf(j)
	if ref == nil || ref.Kind != "CronJob" {
		return -1
	}
	st := e.crons.byKey[ownerKey("CronJob", j.Namespace, ref.Name)]
	if st == nil {
		return -1
	}
	return e.workload("CronJob", &st.cj.ObjectMeta, st.source)
}

// jobsOf are the indexes in c.workloads of the Jobs CronJob ns/name
// controls.
func (c *Cluster) jobsOf(ns, name string) []int {
	var out []int
	for i, in := range c.workloads {
		if j, ok := in.obj.(*batchv1.Job); ok && j.Namespace == ns {
			if ref := metav1.GetControllerOf(j); ref != nil && ref.Kind == "CronJob" && ref.Name == name {
				out = append(out, i)
			}
		}
	}
	return out
}

// NextCronJob is the next time a CronJob has a Job to create (in a
// timeline); false when none has.
func (c *Cluster) NextCronJob() (time.Time, bool) {
	if c.controllers == nil || c.controllers.crons.mode != cronScheduled {
		return time.Time{}, false
	}
	var next time.Time
	for _, st := range c.controllers.crons.list {
		if t := st.next(c.controllers.crons.until); !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next, !next.IsZero()
}

// cronJobInputs lists the CronJobs of the files as workloads, once.
func (c *Cluster) cronJobInputs() {
	listed := map[*batchv1.CronJob]bool{}
	for _, in := range c.workloads {
		if cj, ok := in.obj.(*batchv1.CronJob); ok {
			listed[cj] = true
		}
	}
	for _, cj := range c.CronJobs {
		if !listed[cj] {
			c.workloads = append(c.workloads, workloadInput{obj: cj})
		}
	}
}

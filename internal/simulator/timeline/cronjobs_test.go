package timeline_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"github.com/kubesched/kubesched/internal/simulator/timeline"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/plugins"
)

// backup is a CronJob "backup" of one pod of 1 cpu that runs for d (no
// duration: it never finishes), changed by the options.
func backup(schedule string, d time.Duration, opts ...func(*batchv1.CronJob)) *batchv1.CronJob {
	pod := st.MakePod().Label("app", "backup").Req(cpu("1"))
	if d > 0 {
		pod = pod.Annotation(cluster.DurationAnnotation, d.String())
	}
	cj := &batchv1.CronJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"},
		ObjectMeta: metav1.ObjectMeta{Name: "backup", Namespace: v1.NamespaceDefault},
		Spec: batchv1.CronJobSpec{Schedule: schedule, JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: pod.Labels, Annotations: pod.Annotations}, Spec: pod.Spec}}}},
	}
	cj.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = v1.RestartPolicyNever
	for _, o := range opts {
		o(cj)
	}
	return cj
}

func policy(p batchv1.ConcurrencyPolicy) func(*batchv1.CronJob) {
	return func(cj *batchv1.CronJob) { cj.Spec.ConcurrencyPolicy = p }
}

// jobAt is the name of the CronJob backup's Job of a time after the
// start: the time in minutes since the Unix epoch.
func jobAt(after time.Duration) string {
	return fmt.Sprintf("backup-%d", simulator.Epoch.Add(after).Unix()/60)
}

// backupRuns are the trace's bindings of the backup pods: "T job", the
// pod's name without its generated suffix.
func backupRuns(trace []report.TraceLine) []string {
	var out []string
	for _, l := range trace {
		if l.Result == report.TraceScheduled && strings.HasPrefix(l.Pod, "default/backup-") {
			job := strings.TrimPrefix(l.Pod, "default/")
			job = job[:strings.LastIndex(job, "-")]
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(l.T, "2026-01-01T"), ":00Z")+" "+job)
		}
	}
	return out
}

// backupStatuses are the backup pods' statuses in the report, by Job.
func backupStatuses(r *report.Report) map[string]string {
	out := map[string]string{}
	for _, p := range r.Pods {
		if strings.HasPrefix(p.Name, "backup-") {
			out[p.Name[:strings.LastIndex(p.Name, "-")]] = p.Status
		}
	}
	return out
}

func TestACronJobInATimelineCreatesItsJobsAtItsScheduleTimes(t *testing.T) {
	end := func(at time.Duration) cluster.Step { return cluster.Step{At: at, Name: "end"} }
	tests := []struct {
		name  string
		objs  []runtime.Object
		steps []cluster.Step
		// runs are the backup pods' bindings ("HH:MM job"); statuses
		// their end, by Job.
		runs     []string
		statuses map[string]string
	}{
		{
			name:  "every ten minutes up to the last step, each Job's pod running its duration",
			objs:  []runtime.Object{backup("*/10 * * * *", 3*time.Minute)},
			steps: []cluster.Step{end(35 * time.Minute)},
			runs:  []string{"00:10 " + jobAt(10*time.Minute), "00:20 " + jobAt(20*time.Minute), "00:30 " + jobAt(30*time.Minute)},
		},
		{
			name: "@hourly in spec.timeZone: on the hour there, on the half hour in UTC",
			objs: []runtime.Object{backup("@hourly", time.Minute, func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("Asia/Kolkata") })},
			// @hourly is "0 * * * *": India is UTC+5:30.
			steps: []cluster.Step{end(2 * time.Hour)},
			runs:  []string{"00:30 " + jobAt(30*time.Minute), "01:30 " + jobAt(90*time.Minute)},
		},
		{
			name:  "a suspended CronJob creates no Job",
			objs:  []runtime.Object{backup("*/10 * * * *", time.Minute, func(cj *batchv1.CronJob) { cj.Spec.Suspend = ptr.To(true) })},
			steps: []cluster.Step{end(time.Hour)},
		},
		{
			name:  "Allow: a time that comes while a Job runs starts another beside it",
			objs:  []runtime.Object{backup("*/10 * * * *", 15*time.Minute, policy(batchv1.AllowConcurrent))},
			steps: []cluster.Step{end(25 * time.Minute)},
			runs:  []string{"00:10 " + jobAt(10*time.Minute), "00:20 " + jobAt(20*time.Minute)},
			statuses: map[string]string{jobAt(10 * time.Minute): report.StatusFinished,
				jobAt(20 * time.Minute): report.StatusFinished},
		},
		{
			name:  "Forbid: a time that comes while a Job runs waits, and its Job starts when the running one completes",
			objs:  []runtime.Object{backup("*/10 * * * *", 15*time.Minute, policy(batchv1.ForbidConcurrent))},
			steps: []cluster.Step{end(35 * time.Minute)},
			// 00:20's Job starts at 00:25, when 00:10's completes; 00:30's
			// waits for it, past the last step: not run.
			runs: []string{"00:10 " + jobAt(10*time.Minute), "00:25 " + jobAt(20*time.Minute)},
		},
		{
			name: "Forbid with startingDeadlineSeconds: a time that waited past its deadline is missed",
			objs: []runtime.Object{backup("*/10 * * * *", 15*time.Minute, policy(batchv1.ForbidConcurrent),
				func(cj *batchv1.CronJob) { cj.Spec.StartingDeadlineSeconds = ptr.To(int64(60)) })},
			steps: []cluster.Step{end(35 * time.Minute)},
			// 00:20's is 5 minutes late at 00:25: missed; 00:30's runs.
			runs: []string{"00:10 " + jobAt(10*time.Minute), "00:30 " + jobAt(30*time.Minute)},
		},
		{
			name:  "Replace: the Job running is deleted with its pods and the new one starts",
			objs:  []runtime.Object{backup("*/10 * * * *", 15*time.Minute, policy(batchv1.ReplaceConcurrent))},
			steps: []cluster.Step{end(25 * time.Minute)},
			runs:  []string{"00:10 " + jobAt(10*time.Minute), "00:20 " + jobAt(20*time.Minute)},
			statuses: map[string]string{jobAt(10 * time.Minute): report.StatusDeleted,
				jobAt(20 * time.Minute): report.StatusFinished},
		},
		{
			name:  "a CronJob a step creates runs from its creation on",
			steps: []cluster.Step{{At: 15 * time.Minute, Name: "create", Create: []runtime.Object{backup("*/10 * * * *", time.Minute)}}, end(35 * time.Minute)},
			runs:  []string{"00:20 " + jobAt(20*time.Minute), "00:30 " + jobAt(30*time.Minute)},
		},
		{
			name: "a CronJob deleted by a step takes its Jobs and their pods with it and creates no more",
			objs: []runtime.Object{backup("*/10 * * * *", 0)},
			steps: []cluster.Step{{At: 25 * time.Minute, Name: "delete", Delete: []cluster.ObjectRef{{Kind: "CronJob", Name: "backup"}}},
				end(time.Hour)},
			runs: []string{"00:10 " + jobAt(10*time.Minute), "00:20 " + jobAt(20*time.Minute)},
			statuses: map[string]string{jobAt(10 * time.Minute): report.StatusDeleted,
				jobAt(20 * time.Minute): report.StatusDeleted},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, r, trace := replay(t, append([]runtime.Object{simtest.Node("a")}, tt.objs...), tt.steps...)
			if diff := cmp.Diff(tt.runs, backupRuns(trace)); diff != "" {
				t.Errorf("backup runs (-want,+got):\n%s", diff)
			}
			if tt.statuses != nil {
				if diff := cmp.Diff(tt.statuses, backupStatuses(r)); diff != "" {
					t.Errorf("backup pods (-want,+got):\n%s", diff)
				}
			}
			var row *report.WorkloadResult
			for i, wl := range r.Workloads {
				if wl.Kind == "CronJob" && wl.Name == "backup" {
					row = &r.Workloads[i]
				}
				if wl.Kind == "Job" {
					t.Errorf("workload %+v listed, want the CronJob's Jobs' pods under the CronJob", wl)
				}
			}
			if row == nil {
				t.Errorf("workloads %+v, want CronJob default/backup", r.Workloads)
			}
		})
	}
}

func TestWithoutATimelineACronJobCountsAtItsPeak(t *testing.T) {
	tests := []struct {
		name string
		cj   *batchv1.CronJob
		// job is the Job expected ("" none); its pods run from the start.
		job string
	}{
		{name: "one Job, of its next time after the start, its pod running from the start under the CronJob",
			cj: backup("30 2 * * *", 0), job: jobAt(2*time.Hour + 30*time.Minute)},
		{name: "in its time zone", cj: backup("30 2 * * *", 0, func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("America/New_York") }),
			job: jobAt(7*time.Hour + 30*time.Minute)},
		{name: "a suspended CronJob has none", cj: backup("30 2 * * *", 0, func(cj *batchv1.CronJob) { cj.Spec.Suspend = ptr.To(true) })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := simtest.LoadObjects(t, []runtime.Object{simtest.Node("a"), tt.cj})
			w, r := simtest.Simulate(t, c, 1)
			got := backupStatuses(r)
			var row report.WorkloadResult
			for _, wl := range r.Workloads {
				if wl.Kind == "CronJob" && wl.Name == "backup" {
					row = wl
				}
			}
			if tt.job == "" {
				if len(got) != 0 || row.Pods != 0 {
					t.Errorf("pods %v, CronJob %+v: want none", got, row)
				}
				return
			}
			if diff := cmp.Diff(map[string]string{tt.job: report.StatusScheduled}, got); diff != "" {
				t.Errorf("backup pods (-want,+got):\n%s", diff)
			}
			if row.Pods != 1 || row.Scheduled != 1 {
				t.Errorf("CronJob %+v, want its Job's pod counted under it", row)
			}
			for _, p := range w.Store.Pods() {
				if strings.HasPrefix(p.Name, tt.job+"-") && !strings.HasSuffix(w.Cluster.Sources[cluster.PodKey(p)], "CronJob default/backup") {
					t.Errorf("pod %s source %q, want its CronJob named", p.Name, w.Cluster.Sources[cluster.PodKey(p)])
				}
			}
		})
	}
}

func TestACronJobWithABadScheduleIsRefusedNamingTheField(t *testing.T) {
	tests := []struct {
		name string
		cj   *batchv1.CronJob
		want string
	}{
		{name: "a schedule that is not cron", cj: backup("every day", 0), want: `spec.schedule: Invalid value: "every day"`},
		{name: "an unknown time zone", cj: backup("@daily", 0, func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("Mars/Olympus") }),
			want: `spec.timeZone: Invalid value: "Mars/Olympus"`},
		{name: "a time zone both in the field and in the schedule", cj: backup("TZ=UTC @daily", 0, func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("UTC") }),
			want: "cannot use both timeZone field and TZ or CRON_TZ in schedule"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loading.Load([]string{simtest.WriteFile(t, "cron.yaml", simtest.Manifest(t, simtest.Node("a"), tt.cj))})
			if err == nil || !strings.Contains(err.Error(), "CronJob default/backup") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to name the CronJob and %q", err, tt.want)
			}
		})
	}
}

// A Scenario document read from a file deletes a CronJob as a step built
// in code does: the loader takes CronJob as a kind a step deletes, and
// the CronJob's pods name the file it was read from.
func TestAScenarioFileDeletesACronJob(t *testing.T) {
	manifest := simtest.Manifest(t, simtest.Node("a"), backup("*/10 * * * *", 0)) +
		"---\n" + scenarioHead + "  - at: 25m\n    delete: [{kind: CronJob, name: backup}]\n  - at: 1h\n"
	path := simtest.WriteFile(t, "c.yaml", manifest)
	c, err := loading.Load([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	w, err := simulator.NewWorld(context.Background(), c, simtest.DefaultConfig(t), plugins.NewInTreeRegistry(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := timeline.Run(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	statuses := backupStatuses(w.Report())
	want := map[string]string{jobAt(10 * time.Minute): report.StatusDeleted, jobAt(20 * time.Minute): report.StatusDeleted}
	if diff := cmp.Diff(want, statuses); diff != "" {
		t.Errorf("backup pods (-want,+got):\n%s", diff)
	}
	for k, src := range c.Sources {
		if strings.HasPrefix(k, "default/backup-") && !strings.HasPrefix(src, path+": document 2") {
			t.Errorf("pod %s's source %q, want the CronJob's file and document", k, src)
		}
	}
}

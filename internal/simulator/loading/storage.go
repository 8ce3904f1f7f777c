package loading

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/internal/cluster/memory"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
)

// defaultStorage does for the claims read, and those the StatefulSets'
// controllers made of their volumeClaimTemplates, what the API server's
// DefaultStorageClass admission plugin does when they are created: a
// claim that asks for no class (storageClassName absent; "" asks for no
// class) gets the default class, the newest of those annotated
// storageclass.kubernetes.io/is-default-class: "true" (then the first by
// name). A claim already bound is left as it is: it was admitted when it
// was created.
//
// --default-storage-class NAME (flag) names the default class when the
// input marks none: the input's class NAME, or, when the input has none
// of that name, a class NAME that stands in for the cluster's, as the
// managed clouds' default classes are (gp3, standard-rwo, managed-csi): a
// zonal disk (memory.SimulatedProvisioner), WaitForFirstConsumer, Delete.
// A class of the input marked the default stays the default: the flag
// then only stands the class in for the claims that name it.
//
// The claims that stay pending for want of a class get a warning naming
// them, and what to do: those without a class when there is no default
// class (no static PersistentVolume without a class matches them either),
// and those naming a class the input does not hold.
func defaultStorage(c *cluster.Cluster, flag string) {
	var classes []*storagev1.StorageClass
	var pvcs []*v1.PersistentVolumeClaim
	var pvs []*v1.PersistentVolume
	for _, o := range c.Others {
		switch o := o.(type) {
		case *storagev1.StorageClass:
			classes = append(classes, o)
		case *v1.PersistentVolumeClaim:
			pvcs = append(pvcs, o)
		case *v1.PersistentVolume:
			pvs = append(pvs, o)
		}
	}
	named := func(name string) *storagev1.StorageClass {
		i := slices.IndexFunc(classes, func(sc *storagev1.StorageClass) bool { return sc.Name == name })
		if i < 0 {
			return nil
		}
		return classes[i]
	}
	inputDefault := memory.DefaultStorageClass(classes)
	if flag != "" {
		sc := named(flag)
		if sc == nil {
			sc = standInStorageClass(flag)
			c.Add("--default-storage-class", sc)
			classes = append(classes, sc)
		}
		if inputDefault == nil {
			metav1.SetMetaDataAnnotation(&sc.ObjectMeta, memory.IsDefaultClassAnnotation, "true")
		} else if inputDefault.Name != flag {
			c.Warnings = append(c.Warnings, fmt.Sprintf("--default-storage-class %s: not the default class: the input marks StorageClass %s the default (%s: \"true\"), which claims without a class get",
				flag, inputDefault.Name, memory.IsDefaultClassAnnotation))
		}
	}
	def := memory.DefaultStorageClass(classes)
	for _, pvc := range pvcs {
		if def != nil && !metav1.HasAnnotation(pvc.ObjectMeta, storagehelpers.AnnBindCompleted) && !storagehelpers.PersistentVolumeClaimHasClass(pvc) {
			pvc.Spec.StorageClassName = ptr.To(def.Name)
		}
	}
	warnPendingClaims(c, pvcs, pvs, func(name string) bool { return named(name) != nil }, def != nil)
}

// standInStorageClass is the class --default-storage-class NAME stands
// in when the input has none of that name: a zonal disk,
// WaitForFirstConsumer, reclaimed on deletion, expandable.
func standInStorageClass(name string) *storagev1.StorageClass {
	return &storagev1.StorageClass{
		TypeMeta: metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
			memory.VolumeTopologyAnnotation: "zone",
		}},
		Provisioner:          memory.SimulatedProvisioner,
		ReclaimPolicy:        ptr.To(v1.PersistentVolumeReclaimDelete),
		VolumeBindingMode:    ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
		AllowVolumeExpansion: ptr.To(true),
	}
}

// warnPendingClaims warns of the claims a pod uses that are not bound and
// that no volume will come to: without a class when there is no default
// class, or naming a class the input does not hold (known says which it
// holds), and that no static PersistentVolume matches. A StatefulSet's
// claims are named by its templates, with those it has not made yet. A
// claim no pod uses keeps no pod pending: it goes unsaid.
func warnPendingClaims(c *cluster.Cluster, pvcs []*v1.PersistentVolumeClaim, pvs []*v1.PersistentVolume, known func(string) bool, hasDefault bool) {
	used := map[string]bool{}
	pods := c.Pods[:len(c.Pods):len(c.Pods)]
	for _, o := range c.Ordered {
		pods = append(pods, o.Waiting...)
	}
	for _, p := range pods {
		for _, vol := range p.Spec.Volumes {
			if vol.PersistentVolumeClaim != nil {
				used[namespaceOr(p.Namespace)+"/"+vol.PersistentVolumeClaim.ClaimName] = true
			}
		}
	}
	available := make([]*v1.PersistentVolume, len(pvs))
	for i, pv := range pvs {
		available[i] = pv
		if (pv.Status.Phase == "" || pv.Status.Phase == v1.VolumePending) && (pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID == "") {
			cp := *pv // the PV controller makes it Available
			cp.Status.Phase = v1.VolumeAvailable
			available[i] = &cp
		}
	}
	// problem is why a claim waits for ever: "" (it does not), "class"
	// (none, no default), or the missing class's name.
	problem := func(pvc *v1.PersistentVolumeClaim, matchVolumes bool) string {
		if pvc.Spec.VolumeName != "" {
			return ""
		}
		var why string
		switch name := storagehelpers.GetPersistentVolumeClaimClass(pvc); {
		case !storagehelpers.PersistentVolumeClaimHasClass(pvc) && !hasDefault:
			why = "class"
		case name != "" && !known(name):
			why = name
		default:
			return ""
		}
		if matchVolumes && memory.FindBestMatch(pvc, available, false) != nil {
			return ""
		}
		return why
	}
	subjects := map[string][]string{} // problem -> subjects
	fromSet := map[string]bool{}      // claims a StatefulSet's template makes
	for _, s := range c.StatefulSets {
		for _, t := range s.Spec.VolumeClaimTemplates {
			re := regexp.MustCompile("^" + regexp.QuoteMeta(t.Name+"-"+s.Name+"-") + "[0-9]+$")
			why, made := "", false
			for _, pvc := range pvcs {
				if pvc.Namespace != s.Namespace || !re.MatchString(pvc.Name) {
					continue
				}
				made, fromSet[namespaceOr(pvc.Namespace)+"/"+pvc.Name] = true, true
				if metav1.HasAnnotation(pvc.ObjectMeta, storagehelpers.AnnBindCompleted) {
					continue
				}
				if w := problem(pvc, true); w != "" {
					why = w
				}
			}
			if !made {
				why = problem(&v1.PersistentVolumeClaim{ObjectMeta: t.ObjectMeta, Spec: t.Spec}, false)
			}
			if why != "" {
				subjects[why] = appendTemplate(subjects[why], s, t.Name)
			}
		}
	}
	for _, pvc := range pvcs {
		k := namespaceOr(pvc.Namespace) + "/" + pvc.Name
		if fromSet[k] || !used[k] || metav1.HasAnnotation(pvc.ObjectMeta, storagehelpers.AnnBindCompleted) {
			continue
		}
		if why := problem(pvc, true); why != "" {
			subjects[why] = append(subjects[why], "PersistentVolumeClaim "+k)
		}
	}
	if s := subjects["class"]; len(s) > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%s: no storageClassName, and the input has no default StorageClass: pending, "+
			"as in a cluster without a default class; pass --default-storage-class NAME (a WaitForFirstConsumer zonal class of that name, unless the input has one), "+
			"or annotate a StorageClass of the input %s: \"true\"", listSubjects(s), memory.IsDefaultClassAnnotation))
	}
	var missing []string
	for why := range subjects {
		if why != "class" {
			missing = append(missing, why)
		}
	}
	slices.Sort(missing)
	for _, name := range missing {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%s: StorageClass %q is not in the input: pending, as the PV controller cannot provision without it; "+
			"add the StorageClass to the input, or pass --default-storage-class %s to stand in a WaitForFirstConsumer zonal class of that name",
			listSubjects(subjects[name]), name, name))
	}
}

// appendTemplate adds a StatefulSet's template to subjects: "StatefulSet
// ns/name's volumeClaimTemplates a, b".
func appendTemplate(subjects []string, s *appsv1.StatefulSet, template string) []string {
	head := "StatefulSet " + s.Namespace + "/" + s.Name + "'s volumeClaimTemplates "
	for i, sub := range subjects {
		if strings.HasPrefix(sub, head) {
			subjects[i] += ", " + template
			return subjects
		}
	}
	return append(subjects, head+template)
}

// listSubjects joins the subjects, the first five and how many more.
func listSubjects(s []string) string {
	const shown = 5
	if len(s) <= shown {
		return strings.Join(s, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(s[:shown], "; "), len(s)-shown)
}

// namespaceOr is ns, default when empty.
func namespaceOr(ns string) string {
	if ns == "" {
		return v1.NamespaceDefault
	}
	return ns
}

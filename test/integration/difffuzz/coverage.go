package difffuzz

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Coverage counts the field paths drawn in admitted objects (as stored,
// JSON names, "[]" for list elements, map keys kept for labels and
// resource names) and corner values: =nil is not recorded (absence),
// ={} an empty object, =[] an empty list, =0 a zero number or quantity,
// ="" an empty string, =max the largest quantities drawn.
type Coverage struct {
	Paths map[string]int
}

// NewCoverage returns an empty coverage.
func NewCoverage() *Coverage { return &Coverage{Paths: map[string]int{}} }

// Record adds an object's field paths, prefixed by its kind.
func (c *Coverage) Record(o runtime.Object) {
	kind := strings.TrimPrefix(fmt.Sprintf("%T", o), "*")
	kind = kind[strings.LastIndex(kind, ".")+1:]
	switch o.(type) {
	case *v1.Pod:
		kind = "Pod"
	case *v1.Node:
		kind = "Node"
	case *v1.Namespace:
		kind = "Namespace"
	case *v1.Service:
		kind = "Service"
	}
	data, err := json.Marshal(o)
	if err != nil {
		return
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return
	}
	c.walk(kind, v)
}

// keyed are the maps whose keys are part of the path.
var keyed = map[string]bool{"requests": true, "limits": true, "allocatable": true, "capacity": true, "overhead": true}

func (c *Coverage) walk(path string, v any) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			c.Paths[path+"={}"]++
			return
		}
		c.Paths[path]++
		last := path[strings.LastIndex(path, ".")+1:]
		for k, e := range x {
			if k == "managedFields" || k == "creationTimestamp" {
				continue
			}
			if last == "labels" || last == "matchLabels" || last == "nodeSelector" || last == "selector" {
				k = "*"
			}
			if keyed[last] {
				if s, ok := e.(string); ok {
					c.Paths[path+"."+k]++
					c.corner(path+"."+k, s)
					continue
				}
			}
			c.walk(path+"."+k, e)
		}
	case []any:
		if len(x) == 0 {
			c.Paths[path+"=[]"]++
			return
		}
		c.Paths[path]++
		for _, e := range x {
			c.walk(path+"[]", e)
		}
	case string:
		c.Paths[path]++
		c.corner(path, x)
	case float64:
		c.Paths[path]++
		if x == 0 {
			c.Paths[path+"=0"]++
		}
	case bool:
		c.Paths[path]++
		c.Paths[fmt.Sprintf("%s=%v", path, x)]++
	}
}

// corner records a string's corner value: empty, zero quantity, the
// largest quantities, and the enumerations the plugins branch on.
func (c *Coverage) corner(path, s string) {
	switch {
	case s == "":
		c.Paths[path+`=""`]++
	case s == "0":
		c.Paths[path+"=0"]++
	case s == "7Ei" || s == "8Pi" || s == "1M":
		c.Paths[path+"=max"]++
	}
	last := path[strings.LastIndex(path, ".")+1:]
	switch last {
	case "operator", "effect", "whenUnsatisfiable", "nodeAffinityPolicy", "nodeTaintsPolicy", "protocol", "restartPolicy", "hostIP", "topologyKey", "key":
		c.Paths[path+"="+s]++
	}
}

// PluginFields are the Pod and Node field paths the default profile's
// plugins read (from upstream v1.37.2's pkg/scheduler/framework/plugins and
// the component-helpers they call), in Coverage's notation, with the
// fields of the storage, DRA and workload objects they read. (An empty
// nodeSelector and a zero image size cannot be told from absent ones: the
// API omits them.) NotDrawable are those no valid object can carry.
var PluginFields = []string{
	// NodeResourcesFit, BalancedAllocation: requests, limits, pod-level
	// resources, overhead, init containers and sidecars.
	"Pod.spec.containers[].resources.requests.cpu", "Pod.spec.containers[].resources.requests.memory",
	"Pod.spec.containers[].resources.requests.ephemeral-storage", "Pod.spec.containers[].resources.requests.hugepages-2Mi",
	"Pod.spec.containers[].resources.requests.example.com/foo", "Pod.spec.containers[].resources.limits.cpu",
	"Pod.spec.containers[].resources.limits.memory", "Pod.spec.containers[].resources={}",
	"Pod.spec.initContainers[].resources.requests.cpu", "Pod.spec.initContainers[].restartPolicy",
	"Pod.spec.resources.requests.cpu", "Pod.spec.resources.requests.memory", "Pod.spec.resources.limits.cpu", "Pod.spec.resources.limits.memory",
	"Pod.spec.overhead.cpu", "Pod.spec.overhead.memory",
	"Pod.spec.containers[].resources.requests.cpu=0", "Pod.spec.containers[].resources.requests.memory=max",
	// NodePorts
	"Pod.spec.containers[].ports[].hostPort", "Pod.spec.containers[].ports[].hostIP", "Pod.spec.containers[].ports[].protocol=UDP",
	"Pod.spec.containers[].ports[].protocol=SCTP", "Pod.spec.hostNetwork=true", "Pod.spec.initContainers[].ports[].hostPort",
	// NodeName, NodeAffinity, NodeUnschedulable, TaintToleration
	"Pod.spec.nodeName", "Pod.spec.nodeSelector.*",
	"Pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[].matchExpressions[].operator=Gt",
	"Pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[].matchExpressions[].operator=Lt",
	"Pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[].matchExpressions[].operator=DoesNotExist",
	"Pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[].matchFields[].key",
	"Pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[]={}",
	"Pod.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[].weight",
	"Pod.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[].preference.matchFields[].key",
	"Pod.spec.tolerations[].operator=Exists", "Pod.spec.tolerations[].effect=PreferNoSchedule", "Pod.spec.tolerations[].tolerationSeconds",
	"Pod.spec.tolerations[].key", "Pod.spec.tolerations[].operator=Gt", "Pod.spec.tolerations[].key=node.kubernetes.io/unschedulable",
	// InterPodAffinity
	"Pod.spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[].labelSelector={}",
	"Pod.spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[].labelSelector.matchExpressions[].operator",
	"Pod.spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[].namespaceSelector={}",
	"Pod.spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[].namespaceSelector.matchLabels.*",
	"Pod.spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[].namespaces[]",
	"Pod.spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[].matchLabelKeys[]",
	"Pod.spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[].podAffinityTerm.labelSelector={}",
	"Pod.spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[].podAffinityTerm.matchLabelKeys[]",
	"Pod.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[].labelSelector={}",
	"Pod.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[].mismatchLabelKeys[]",
	"Pod.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[].podAffinityTerm.mismatchLabelKeys[]",
	"Pod.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[].podAffinityTerm.namespaceSelector={}",
	// PodTopologySpread (and system default spreading through Services)
	"Pod.spec.topologySpreadConstraints[].labelSelector={}", "Pod.spec.topologySpreadConstraints[].minDomains",
	"Pod.spec.topologySpreadConstraints[].nodeAffinityPolicy=Ignore", "Pod.spec.topologySpreadConstraints[].nodeTaintsPolicy=Honor",
	"Pod.spec.topologySpreadConstraints[].matchLabelKeys[]", "Pod.spec.topologySpreadConstraints[].whenUnsatisfiable=ScheduleAnyway",
	"Pod.spec.topologySpreadConstraints[].topologyKey=rack", "Service.spec.selector.*",
	// ImageLocality, volumes, gates, features
	"Pod.spec.containers[].image", "Pod.spec.initContainers[].image", "Pod.spec.volumes[].image.reference",
	"Pod.spec.volumes[].persistentVolumeClaim.claimName", "Pod.spec.volumes[].ephemeral.volumeClaimTemplate.spec.accessModes[]",
	"Pod.spec.volumes[].hostPath.path", "Pod.spec.schedulingGates[].name", "Pod.spec.priority", "Pod.spec.hostUsers=false",
	"Pod.spec.resourceClaims[].name", "Pod.status.phase", "Pod.spec.priorityClassName", "Pod.spec.preemptionPolicy",
	"Pod.metadata.ownerReferences[].kind", "ReplicaSet.spec.selector.*.app", "StatefulSet.spec.selector.*.app",
	"PriorityClass.value",
	// NodeDeclaredFeatures: the features inferred from the pod.
	"Pod.spec.containers[].volumeMounts[].bindMountOptions[]", "Pod.spec.containers[].restartPolicyRules[].action",
	// VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone
	"Pod.spec.volumes[].persistentVolumeClaim.readOnly=true", "Pod.spec.volumes[].ephemeral.volumeClaimTemplate.spec.storageClassName",
	"Pod.spec.volumes[].awsElasticBlockStore.volumeID", "Pod.spec.volumes[].awsElasticBlockStore.readOnly=true",
	"Pod.spec.volumes[].gcePersistentDisk.pdName", "Pod.spec.volumes[].gcePersistentDisk.readOnly=true",
	"Pod.spec.volumes[].iscsi.iqn", "Pod.spec.volumes[].iscsi.lun", "Pod.spec.volumes[].iscsi.readOnly=true", "Pod.spec.volumes[].csi.driver",
	"StorageClass.volumeBindingMode", "StorageClass.allowedTopologies[].matchLabelExpressions[].values[]", "StorageClass.provisioner",
	"CSIDriver.spec.storageCapacity=true", "CSIDriver.spec.attachRequired=true", "CSINode.spec.drivers[].allocatable.count",
	"CSINode.spec.drivers[].allocatable.count=0", "CSIStorageCapacity.capacity", "CSIStorageCapacity.maximumVolumeSize",
	"CSIStorageCapacity.nodeTopology.matchLabels.*", "PersistentVolume.spec.nodeAffinity.required.nodeSelectorTerms[].matchExpressions[].key=kubernetes.io/hostname",
	"PersistentVolume.spec.nodeAffinity.required.nodeSelectorTerms[].matchExpressions[].key=topology.kubernetes.io/zone",
	"PersistentVolume.metadata.labels.*", "PersistentVolume.spec.local.path", "PersistentVolume.spec.csi.driver", "PersistentVolume.spec.claimRef.name",
	"PersistentVolume.status.phase", "PersistentVolume.spec.capacity.storage", "PersistentVolumeClaim.spec.volumeName",
	"PersistentVolumeClaim.metadata.annotations.pv.kubernetes.io/bind-completed", "PersistentVolumeClaim.metadata.annotations.volume.kubernetes.io/selected-node",
	"PersistentVolumeClaim.spec.accessModes[]", "PersistentVolumeClaim.spec.storageClassName", "PersistentVolumeClaim.metadata.ownerReferences[].uid",
	"VolumeAttachment.spec.nodeName", "VolumeAttachment.spec.source.persistentVolumeName",
	// DynamicResources
	"Pod.spec.resourceClaims[].resourceClaimName", "Pod.spec.resourceClaims[].resourceClaimTemplateName",
	"Pod.status.resourceClaimStatuses[].resourceClaimName", "Pod.spec.containers[].resources.claims[].name",
	"Pod.spec.containers[].resources.requests.example.com/gpu", "Node.status.allocatable.example.com/gpu",
	"DeviceClass.spec.selectors[].cel.expression", "DeviceClass.spec.extendedResourceName",
	"ResourceSlice.spec.devices[].attributes.model.string", "ResourceSlice.spec.devices[].capacity.memory.value", "ResourceSlice.spec.nodeName",
	"ResourceClaim.spec.devices.requests[].exactly.allocationMode", "ResourceClaim.spec.devices.requests[].exactly.count",
	"ResourceClaim.spec.devices.requests[].exactly.selectors[].cel.expression", "ResourceClaim.spec.devices.requests[].firstAvailable[].deviceClassName",
	"ResourceClaim.spec.devices.constraints[].matchAttribute", "ResourceClaim.status.allocation.devices.results[].device",
	"ResourceClaim.status.allocation.nodeSelector.*[].matchFields[].key", "ResourceClaim.status.reservedFor[].uid",
	"ResourceClaim.metadata.ownerReferences[].uid", "ResourceClaimTemplate.spec.spec.devices.requests[].name",
	// Node
	"Node.metadata.labels.*", "Node.spec.taints[].effect=NoSchedule", "Node.spec.taints[].effect=PreferNoSchedule", "Node.spec.taints[].effect=NoExecute",
	"Node.spec.unschedulable=true", "Node.status.allocatable.cpu", "Node.status.allocatable.memory=max", "Node.status.allocatable.pods",
	"Node.status.allocatable.pods=0", "Node.status.allocatable.example.com/foo", "Node.status.allocatable.hugepages-2Mi",
	"Node.status.allocatable.ephemeral-storage", "Node.status.images[].names[]", "Node.status.declaredFeatures[]",
	"Namespace.metadata.labels.*",
}

// NotDrawable are plugin-read fields no valid object carries under
// v1.37's default feature gates, with the reason (validation refuses them,
// or the API server drops them on create); they are drawn, and the
// rejections and drops show in the run's figures.
var NotDrawable = map[string]string{
	"Pod.spec.tolerations[].operator=Gt":                      "refused by validation (spec.tolerations[].operator: Unsupported value) while TaintTolerationComparisonOperators (alpha) is off",
	"Pod.spec.containers[].volumeMounts[].bindMountOptions[]": "dropped on create (dropDisabledFields) while VolumeBindMountOptions (alpha in v1.37) is off",
	"Pod.spec.tolerations[].operator=Lt":                      "refused by validation while TaintTolerationComparisonOperators (alpha) is off",
}

// Report renders the coverage: every path drawn with its count, the
// plugin-read fields that cannot be drawn valid and why, then the
// plugin-read fields never drawn.
func (c *Coverage) Report() string {
	var b strings.Builder
	b.WriteString("field paths drawn (count):\n")
	for _, p := range slices.Sorted(maps.Keys(c.Paths)) {
		fmt.Fprintf(&b, "  %7d  %s\n", c.Paths[p], p)
	}
	drawn, blocked, missing := c.Summary()
	fmt.Fprintf(&b, "plugin-read fields: %d, drawn %d, not drawable %d, never drawn %d\n", len(PluginFields), drawn, len(blocked), len(missing))
	for _, p := range blocked {
		fmt.Fprintf(&b, "  not drawable: %s: %s\n", p, NotDrawable[p])
	}
	for _, p := range missing {
		b.WriteString("  " + p + "\n")
	}
	return b.String()
}

// Summary counts the PluginFields drawn and lists those not drawable
// (NotDrawable, and not drawn) and those missing (never drawn).
func (c *Coverage) Summary() (drawn int, blocked, missing []string) {
	for _, p := range PluginFields {
		switch {
		case c.Paths[p] > 0:
			drawn++
		case NotDrawable[p] != "":
			blocked = append(blocked, p)
		default:
			missing = append(missing, p)
		}
	}
	return drawn, blocked, missing
}

// Missing lists PluginFields never drawn that could be.
func (c *Coverage) Missing() []string {
	_, _, m := c.Summary()
	return m
}

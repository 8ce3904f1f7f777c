package framework

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
)

// IsDRAExtendedResourceName reports whether a resource may be backed by a
// DeviceClass (DRAExtendedResource): an extended resource name, or the
// implicit deviceclass.resource.kubernetes.io/<class> (upstream's
// IsDRAExtendedResourceName).
func IsDRAExtendedResourceName(name v1.ResourceName) bool {
	return IsExtendedResourceName(name) || strings.HasPrefix(string(name), resourceapi.ResourceDeviceClassPrefix)
}

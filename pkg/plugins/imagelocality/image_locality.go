// Package imagelocality holds ImageLocality: nodes that already have the
// pod's images score higher, scaled by how widely each image is spread.
package imagelocality

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Name of the plugin.
const Name = "ImageLocality"

// Upstream's thresholds: below 23 MiB an image is not worth a preference;
// 1000 MiB per container is the most that counts.
const (
	mb                    int64 = 1024 * 1024
	minThreshold          int64 = 23 * mb
	maxContainerThreshold int64 = 1000 * mb
)

const preScoreStateKey framework.StateKey = "PreScore" + Name

// ImageLocality is a Score plugin. Its PreScore only normalizes image
// names once per cycle and never skips, so scores match upstream's
// (which has no PreScore) while Score stays allocation-free.
type ImageLocality struct {
	handle framework.Handle
}

var (
	_ framework.PreScorePlugin = &ImageLocality{}
	_ framework.ScorePlugin    = &ImageLocality{}
)

// New builds the plugin.
func New(_ context.Context, _ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	return &ImageLocality{handle: h}, nil
}

// Name implements framework.Plugin.
func (*ImageLocality) Name() string { return Name }

type preScoreState struct {
	images     []string
	totalNodes int
}

func (s *preScoreState) Clone() framework.StateData { return s }

// NormalizedImageName appends ":latest" to an untagged image, as the node
// reports it; other names match literally.
func NormalizedImageName(name string) string {
	if strings.LastIndex(name, ":") <= strings.LastIndex(name, "/") {
		name += ":latest"
	}
	return name
}

func (pl *ImageLocality) compute(pod *v1.Pod) (*preScoreState, error) {
	s := &preScoreState{}
	for _, c := range pod.Spec.InitContainers {
		s.images = append(s.images, NormalizedImageName(c.Image))
	}
	for _, c := range pod.Spec.Containers {
		s.images = append(s.images, NormalizedImageName(c.Image))
	}
	// Image volumes count as images too: in the sum and in the count.
	for i := range pod.Spec.Volumes {
		if img := pod.Spec.Volumes[i].Image; img != nil {
			s.images = append(s.images, NormalizedImageName(img.Reference))
		}
	}
	nodes, err := pl.handle.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return nil, err
	}
	s.totalNodes = len(nodes)
	return s, nil
}

// PreScore implements framework.PreScorePlugin.
func (pl *ImageLocality) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	s, err := pl.compute(pod)
	if err != nil {
		return framework.AsStatus(err)
	}
	state.Write(preScoreStateKey, s)
	return nil
}

// Score implements framework.ScorePlugin.
func (pl *ImageLocality) Score(_ context.Context, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	var s *preScoreState
	if d, err := state.Read(preScoreStateKey); err == nil {
		s = d.(*preScoreState)
	} else if s, err = pl.compute(pod); err != nil {
		return 0, framework.AsStatus(fmt.Errorf("listing nodes: %w", err))
	}
	var sum int64
	for _, img := range s.images {
		if st, ok := ni.ImageStates()[img]; ok && s.totalNodes > 0 {
			sum += int64(float64(st.Size) * float64(st.NumNodes) / float64(s.totalNodes))
		}
	}
	return calculatePriority(sum, len(s.images)), nil
}

// ScoreExtensions implements framework.ScorePlugin.
func (*ImageLocality) ScoreExtensions() framework.ScoreExtensions { return nil }

func calculatePriority(sum int64, numContainers int) int64 {
	maxThreshold := maxContainerThreshold * int64(numContainers)
	if sum < minThreshold {
		sum = minThreshold
	} else if sum > maxThreshold {
		sum = maxThreshold
	}
	if maxThreshold == minThreshold {
		return 0
	}
	return framework.MaxNodeScore * (sum - minThreshold) / (maxThreshold - minThreshold)
}

// AppendPodSignature implements framework.EquivalencePlugin: Score reads
// the pod's images, the node's image states and the number of nodes (in
// the signature too: it is the same for every node of a cycle).
func (pl *ImageLocality) AppendPodSignature(b []byte, pi *framework.PodInfo) ([]byte, bool) {
	pod := pi.Pod
	s, err := pl.compute(pod)
	if err != nil {
		return b, false
	}
	b = framework.AppendSigInt(b, int64(s.totalNodes))
	b = framework.AppendSigInt(b, int64(len(s.images)))
	for _, img := range s.images {
		b = framework.AppendSigString(b, img)
	}
	return b, true
}

package difffuzz

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install" // v1 defaulting and conversion in legacyscheme
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	noderegistry "k8s.io/kubernetes/pkg/registry/core/node"
	podregistry "k8s.io/kubernetes/pkg/registry/core/pod"
)

// PendingAnnotation marks a scenario's pending pod.
const PendingAnnotation = "kubesched.io/pending"

// DecodeScenario reads a multi-document scenario YAML into objects, with
// upstream's API defaulting applied (as the API server stores them) and
// UIDs set where missing (the scheduler's cache keys pods by UID).
func DecodeScenario(data []byte) ([]runtime.Object, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	dec := scheme.Codecs.UniversalDeserializer()
	var out []runtime.Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, _, err := dec.Decode(doc, nil, nil)
		if err != nil {
			return nil, err
		}
		Default(obj)
		out = append(out, obj)
	}
	return out, nil
}

// stripComments drops whole-line YAML comments (a scenario's header).
func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] == '#' {
			continue
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Default applies upstream's API defaulting (k8s.io/kubernetes/pkg/apis/*/v1
// defaulters registered in legacyscheme) to an object in place, then sets a
// missing pod namespace and node or pod UID as the simulator does.
func Default(obj runtime.Object) {
	legacyscheme.Scheme.Default(obj)
	switch o := obj.(type) {
	case *v1.Pod:
		if o.Namespace == "" {
			o.Namespace = v1.NamespaceDefault
		}
		if o.UID == "" {
			o.UID = types.UID("pod-" + o.Namespace + "-" + o.Name)
		}
	case *v1.Node:
		if o.UID == "" {
			o.UID = types.UID("node-" + o.Name)
		}
	}
}

// Validate runs upstream's API validation of a create (the registry
// strategies' Validate: ValidatePodCreate with the options the pod strategy
// derives, ValidateNode, ValidateNamespace, ValidateServiceCreate) on the
// object converted to the internal type. Kinds it does not know pass.
func Validate(obj runtime.Object) field.ErrorList {
	switch o := obj.(type) {
	case *v1.Pod:
		var p core.Pod
		if err := legacyscheme.Scheme.Convert(o, &p, nil); err != nil {
			return field.ErrorList{field.InternalError(nil, err)}
		}
		opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&p.Spec, nil, &p.ObjectMeta, nil)
		opts.ResourceIsPod = true
		return corevalidation.ValidatePodCreate(&p, opts)
	case *v1.Node:
		var n core.Node
		if err := legacyscheme.Scheme.Convert(o, &n, nil); err != nil {
			return field.ErrorList{field.InternalError(nil, err)}
		}
		return corevalidation.ValidateNode(&n)
	case *v1.Namespace:
		var n core.Namespace
		if err := legacyscheme.Scheme.Convert(o, &n, nil); err != nil {
			return field.ErrorList{field.InternalError(nil, err)}
		}
		return corevalidation.ValidateNamespace(&n)
	case *v1.Service:
		var s core.Service
		if err := legacyscheme.Scheme.Convert(o, &s, nil); err != nil {
			return field.ErrorList{field.InternalError(nil, err)}
		}
		return corevalidation.ValidateServiceCreate(&s)
	}
	errs, _ := validateExtra(obj)
	return errs
}

// pendingOf splits a scenario's objects into the pending pod (annotated
// kubesched.io/pending: "true", else the single pod without nodeName) and
// the rest.
func pendingOf(objs []runtime.Object) (*v1.Pod, []runtime.Object, error) {
	var annotated, unassigned []int
	for i, o := range objs {
		if p, ok := o.(*v1.Pod); ok {
			if p.Annotations[PendingAnnotation] == "true" {
				annotated = append(annotated, i)
			}
			if p.Spec.NodeName == "" {
				unassigned = append(unassigned, i)
			}
		}
	}
	pick := annotated
	if len(pick) == 0 {
		pick = unassigned
	}
	if len(pick) != 1 {
		return nil, nil, fmt.Errorf("want one pending pod, found %d", len(pick))
	}
	rest := append(append([]runtime.Object{}, objs[:pick[0]]...), objs[pick[0]+1:]...)
	return objs[pick[0]].(*v1.Pod), rest, nil
}

// Admit does to a drawn object what kube-apiserver does to a create: API
// defaulting, the registry strategy's PrepareForCreate (for a pod: status
// reset, matchLabelKeys merged into pod (anti-)affinity selectors, pod-level
// resources defaulting, QoS class; for a node: disabled fields dropped) on
// the internal type, and validation. It returns the object as stored, or
// the validation errors.
func Admit(obj runtime.Object) (runtime.Object, field.ErrorList) {
	Default(obj)
	ctx := context.Background()
	switch o := obj.(type) {
	case *v1.Pod:
		var p core.Pod
		if err := legacyscheme.Scheme.Convert(o, &p, nil); err != nil {
			return nil, field.ErrorList{field.InternalError(nil, err)}
		}
		podregistry.Strategy.PrepareForCreate(ctx, &p)
		opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&p.Spec, nil, &p.ObjectMeta, nil)
		opts.ResourceIsPod = true
		if errs := corevalidation.ValidatePodCreate(&p, opts); len(errs) > 0 {
			return nil, errs
		}
		out := &v1.Pod{}
		if err := legacyscheme.Scheme.Convert(&p, out, nil); err != nil {
			return nil, field.ErrorList{field.InternalError(nil, err)}
		}
		out.TypeMeta = o.TypeMeta
		return out, nil
	case *v1.Node:
		var n core.Node
		if err := legacyscheme.Scheme.Convert(o, &n, nil); err != nil {
			return nil, field.ErrorList{field.InternalError(nil, err)}
		}
		noderegistry.Strategy.PrepareForCreate(ctx, &n)
		if errs := corevalidation.ValidateNode(&n); len(errs) > 0 {
			return nil, errs
		}
		out := &v1.Node{}
		if err := legacyscheme.Scheme.Convert(&n, out, nil); err != nil {
			return nil, field.ErrorList{field.InternalError(nil, err)}
		}
		out.TypeMeta = o.TypeMeta
		return out, nil
	}
	if errs := Validate(obj); len(errs) > 0 {
		return nil, errs
	}
	return obj, nil
}

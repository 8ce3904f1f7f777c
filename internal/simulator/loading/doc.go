// Package loading reads Kubernetes manifests (YAML or JSON files,
// folders, kubectl's Lists, standard input) into a cluster.Cluster.
//
// It owns decoding (strict, as the API server's field validation, with
// errors in one format that name the file, the document, the object and
// the field: LoadError, SourceError), the API server's validation of the
// fields the simulator reads (workloads' counts, selectors and pod
// templates, a pod's containers), the refusal of input with nothing to
// simulate, the warnings about input taken as it is (a Node without
// capacity; a pod bound to a missing node, left out), the defaults
// the API server and the admission plugins apply that scheduling reads
// (pods, nodes, ResourceClaims and their templates: one path for each,
// which the world and the timeline also use for the objects they create),
// the quantity bounds the API server enforces, the sharing of equal specs
// and resource lists between loaded objects, and the Scenario document's
// decoding.
//
// It imports the cluster package only (and runs the workloads'
// controllers once, at the end of a load); the World (package simulator),
// the timeline, the questions and cmd/ import it.
package loading

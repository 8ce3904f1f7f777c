// Package loading reads Kubernetes manifests (YAML or JSON files,
// folders, kubectl's Lists, standard input) into a cluster.Cluster.
//
// It owns decoding (strict, as the API server's field validation, with
// errors that name the file, the document and the field), the defaults
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

// Package report is what a simulation answers and how it is written.
//
// It owns the documents (Report with its pods, nodes, workloads and
// summary; TimelineReport with its steps and samples; ExplainReport; the
// trace's TraceLine) and their renderings: the table (summary first, as
// much of the pods and nodes as Show asks), JSON (written
// byte-for-byte as json.MarshalIndent would, faster), YAML, the
// self-contained HTML page, and the percentages they show.
//
// It imports no other package of the simulator (pkg/framework for the
// resource arithmetic only). The World (package simulator) fills a
// Report; the timeline fills a TimelineReport; the questions fill
// ExplainReports and read Reports; cmd/ writes them.
package report

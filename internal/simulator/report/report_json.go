package report

import (
	"encoding/json"
	"io"
	"slices"
	"strconv"

	"github.com/kubesched/kubesched/internal/jsonstr"
)

// writeReportJSON writes r exactly as writeJSON (json.MarshalIndent, two
// spaces) would: the pods and nodes, which are nearly all of a large
// report, are written here without reflection or re-indenting; the rest
// by MarshalIndent. TestReportJSONIsMarshalIndents holds it to
// MarshalIndent.
func writeReportJSON(out io.Writer, r *Report) error {
	rest, err := json.MarshalIndent(struct {
		Workloads []WorkloadResult `json:"workloads,omitempty"`
		PodGroups []PodGroupResult `json:"podGroups,omitempty"`
		Summary   Summary          `json:"summary"`
		Timeline  *TimelineReport  `json:"timeline,omitempty"`
	}{r.Workloads, r.PodGroups, r.Summary, r.Timeline}, "", "  ")
	if err != nil {
		return err
	}
	b := make([]byte, 0, 200*len(r.Pods)+260*len(r.Nodes)+len(rest)+64)
	b = append(b, "{\n  \"pods\": "...)
	if r.Pods == nil {
		b = append(b, "null"...)
	} else if len(r.Pods) == 0 {
		b = append(b, "[]"...)
	} else {
		b = append(b, '[')
		for i := range r.Pods {
			p := &r.Pods[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n    {\n      \"namespace\": "...)
			b = jsonstr.Append(b, p.Namespace)
			b = append(b, ",\n      \"name\": "...)
			b = jsonstr.Append(b, p.Name)
			b = append(b, ",\n      \"node\": "...)
			b = jsonstr.Append(b, p.Node)
			b = append(b, ",\n      \"status\": "...)
			b = jsonstr.Append(b, p.Status)
			b = append(b, ",\n      \"message\": "...)
			b = jsonstr.Append(b, p.Message)
			if len(p.Devices) > 0 {
				b = append(b, ",\n      \"devices\": ["...)
				for j, d := range p.Devices {
					if j > 0 {
						b = append(b, ',')
					}
					b = append(b, "\n        "...)
					b = jsonstr.Append(b, d)
				}
				b = append(b, "\n      ]"...)
			}
			b = append(b, "\n    }"...)
		}
		b = append(b, "\n  ]"...)
	}
	b = append(b, ",\n  \"nodes\": "...)
	if r.Nodes == nil {
		b = append(b, "null"...)
	} else if len(r.Nodes) == 0 {
		b = append(b, "[]"...)
	} else {
		b = append(b, '[')
		for i := range r.Nodes {
			n := &r.Nodes[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n    {\n      \"name\": "...)
			b = jsonstr.Append(b, n.Name)
			b = append(b, ",\n      \"pods\": "...)
			b = strconv.AppendInt(b, int64(n.Pods), 10)
			b = append(b, ",\n      \"requested\": "...)
			b = appendStringMap(b, n.Requested)
			b = append(b, ",\n      \"allocatable\": "...)
			b = appendStringMap(b, n.Allocatable)
			b = append(b, "\n    }"...)
		}
		b = append(b, "\n  ]"...)
	}
	// rest is "{\n  ...\n}": its members follow the nodes.
	b = append(b, ',', '\n')
	b = append(b, rest[2:]...)
	b = append(b, '\n')
	_, err = out.Write(b)
	return err
}

// appendStringMap writes a map[string]string member's value at depth 3,
// keys sorted, as MarshalIndent does.
func appendStringMap(b []byte, m map[string]string) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	if len(m) == 0 {
		return append(b, "{}"...)
	}
	var keysBuf [8]string
	keys := keysBuf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n        "...)
		b = jsonstr.Append(b, k)
		b = append(b, ": "...)
		b = jsonstr.Append(b, m[k])
	}
	return append(b, "\n      }"...)
}

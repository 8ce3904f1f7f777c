package report

const htmlSource = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>kubesched simulation</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; }
table { border-collapse: collapse; } td, th { padding: 3px 8px; border-bottom: 1px solid #ddd; text-align: left; vertical-align: top; }
.summary span { display: inline-block; margin-right: 18px; font-weight: 600; }
.Unschedulable, .NotCreated, .OtherScheduler { color: #a93226; } .Scheduled { color: #1e8449; } .Preempted, .Deleted, .Finished { color: #7d6608; }
svg text { font: 12px system-ui, sans-serif; }
details { margin: 2px 0; } details table { font-size: 12px; }
#search { width: 360px; padding: 4px; }
</style>
</head>
<body>
<h1>kubesched simulation</h1>
<p class="summary">
<span>{{.R.Summary.Scheduled}} scheduled</span>
<span>{{.R.Summary.Unschedulable}} unschedulable</span>
<span>{{.R.Summary.Preempted}} preempted</span>
{{if .R.Summary.NotCreated}}<span>{{.R.Summary.NotCreated}} not created</span>{{end}}{{if .R.Summary.OtherScheduler}}<span>{{.R.Summary.OtherScheduler}} for other schedulers</span>{{end}}
{{if .R.Summary.Finished}}<span>{{.R.Summary.Finished}} finished</span>{{end}}
{{if .R.Summary.Deleted}}<span>{{.R.Summary.Deleted}} deleted</span>{{end}}
<span>{{.R.Summary.Running}} already running</span>
<span>{{plural .R.Summary.Nodes "node"}}</span>
</p>

<h2>Nodes: CPU requested, by zone and pool</h2>
{{if .Aggregated}}<p>{{plural .R.Summary.Nodes "node"}}: a cell per pool in each zone, its nodes' requests over their allocatable.</p>{{end}}
<svg id="heatmap" width="1000" height="{{.HeatHeight}}" role="img" aria-label="node CPU heat map">
{{range .Zones}}<text x="0" y="{{add .Y 15}}">{{.Name}}</text>
{{range .Cells}}<rect class="{{if $.Aggregated}}pool-cell{{else}}node-cell{{end}}" x="{{.X}}" y="{{.Y}}" width="22" height="22" fill="{{.Color}}"><title>{{.Title}}</title></rect>
{{end}}{{end}}</svg>

<h2>Pending pods by reason</h2>
{{if .Bars}}<svg id="reasons" width="1000" height="{{.BarsHeight}}" role="img" aria-label="pending pods by reason">
{{range .Bars}}<rect class="reason-bar" x="0" y="{{.Y}}" width="{{.Width}}" height="22" fill="#c0392b"><title>{{plural .Pods "pod"}}: {{.Message}}</title></rect>
<text x="{{add .Width 6}}" y="{{add .Y 16}}">reason {{.N}}: {{plural .Pods "pod"}}</text>
{{end}}</svg>
<ol>{{range .Bars}}<li>{{.Message}} ({{plural .Pods "pod"}})</li>{{end}}</ol>
<table id="pending-groups"><tr><th>pending</th><th>reason</th><th>pods</th></tr>
{{range .Groups}}<tr><td>{{.Group}}</td><td>{{.Reason}}</td><td>{{.Pods}}</td></tr>
{{end}}</table>
{{else}}<p>No pod is pending.</p>{{end}}

{{with .R.Timeline}}<h2>Timeline: {{.Scenario}}</h2>
<svg id="timeline" width="1000" height="240" role="img" aria-label="timeline">
<line x1="60" y1="210" x2="900" y2="210" stroke="#999"/>
{{range $.CurveLabels}}<line class="step-line" x1="{{.X}}" y1="10" x2="{{.X}}" y2="210" stroke="#bbb" stroke-dasharray="4 3"><title>{{.Title}}</title></line>
{{end}}{{range $.Curves}}<polyline class="curve" fill="none" stroke="{{.Color}}" stroke-width="2" points="{{.Points}}"><title>{{.Name}}</title></polyline>
{{range .Marks}}<circle class="sample" cx="{{.X}}" cy="{{.Y}}" r="3" fill="#555"><title>{{.Title}}</title></circle>
{{end}}{{end}}<text x="60" y="232">red: pending pods (scaled to the most), blue: CPU requested (% of allocatable); dashed: steps</text>
</svg>
<table><tr><th>step</th><th>at</th><th>created</th><th>deleted</th><th>then scheduled</th><th>preempted</th><th>pending</th></tr>
{{range .Steps}}<tr><td>{{.Name}}</td><td>{{.At}}</td><td>{{.Created}}</td><td>{{.Deleted}}</td><td>{{.Scheduled}}</td><td>{{.Preempted}}</td><td>{{.Pending}}</td></tr>
{{end}}</table>
{{if .QueueingDelay.P50}}<p>Queueing delay p50 {{.QueueingDelay.P50}}, p99 {{.QueueingDelay.P99}}.</p>{{end}}
{{end}}

{{if .R.Workloads}}<h2>Workloads</h2>
<table id="workloads"><tr><th>workload</th><th>pods</th><th>scheduled</th><th>pending</th>{{if $.Jobs}}<th>completions</th>{{end}}<th>why pending</th></tr>
{{range .R.Workloads}}<tr><td>{{.Kind}} {{.Namespace}}/{{.Name}}</td><td>{{.Pods}}</td><td>{{.Scheduled}}</td><td>{{.Pending}}</td>{{if $.Jobs}}<td>{{or .Completions "-"}}</td>{{end}}<td>{{range .Reasons}}{{.Pods}}: {{.Message}}<br>{{end}}</td></tr>
{{end}}</table>{{end}}
{{if .R.PodGroups}}<h2>Pod groups</h2>
<table id="podgroups"><tr><th>pod group</th><th>policy</th><th>pods</th><th>scheduled</th><th>pending</th><th>domain</th><th>state</th></tr>
{{range .R.PodGroups}}<tr><td>{{.Namespace}}/{{.Name}}</td><td>{{if .MinCount}}gang of {{.MinCount}}{{else}}{{.Policy}}{{end}}</td><td>{{.Pods}}</td><td>{{.Scheduled}}</td><td>{{.Pending}}</td><td>{{if .Domain}}{{.Topology}}={{.Domain}}{{else if .Topology}}one {{.Topology}}{{else}}-{{end}}</td><td>{{if eq .Condition "True"}}placed{{else if eq .Condition "False"}}{{.Reason}}: {{.Message}}{{else}}not tried{{end}}</td></tr>
{{end}}</table>{{end}}

<h2>Pods</h2>
<p><input id="search" type="search" placeholder="filter pods by name, node, status or message"> <span id="shown"></span>
<button id="prev" type="button">previous</button> <button id="next" type="button">next</button></p>
<table id="pods"><thead><tr><th>pod</th><th>node</th><th>status</th><th>message</th></tr></thead><tbody>
{{range .Pods}}<tr class="pod-row"><td>{{.Namespace}}/{{.Name}}</td><td>{{.Node}}</td><td class="{{.Status}}">{{.Status}}</td><td>{{if .Reason}}reason {{.Reason}}: {{end}}{{.Message}}{{with .Explain}}
<details><summary>explain: {{.Feasible}}/{{plural .Total "node"}} feasible</summary>
<table><tr><th>nodes</th><th>fits</th><th>rejected by</th><th>reasons</th></tr>
{{range .Groups}}<tr><td>{{.Names}}</td><td>{{if .Feasible}}yes{{else}}no{{end}}</td><td>{{.Plugin}}</td><td>{{range .Reasons}}{{.}} {{end}}</td></tr>
{{end}}</table></details>{{end}}</td></tr>
{{end}}</tbody></table>
<p>Explanations are given for the first {{.ExplainLimit}} pending pods, against the cluster at the end of the simulation.</p>
<script>
(function () {
  var rows = Array.prototype.slice.call(document.querySelectorAll("#pods .pod-row"));
  var text = rows.map(function (r) { return r.textContent.toLowerCase(); });
  var input = document.getElementById("search"), shown = document.getElementById("shown");
  var size = {{.PageSize}}, page = 0, hits = 0;
  // The matching rows are shown a page at a time.
  function show() {
    var q = input.value.toLowerCase(), n = 0, from = page * size;
    rows.forEach(function (r, i) {
      var hit = text[i].indexOf(q) >= 0;
      r.style.display = hit && n >= from && n < from + size ? "" : "none";
      if (hit) n++;
    });
    hits = n;
    var last = Math.min(n, from + size);
    shown.textContent = n > size ? (from + 1) + "-" + last + " of " + n + " matching, " + rows.length + " pods"
      : n + " of " + rows.length + (rows.length === 1 ? " pod" : " pods");
  }
  input.addEventListener("input", function () { page = 0; show(); });
  document.getElementById("prev").addEventListener("click", function () { if (page > 0) { page--; show(); } });
  document.getElementById("next").addEventListener("click", function () { if ((page + 1) * size < hits) { page++; show(); } });
  show();
  document.body.setAttribute("data-pools", document.querySelectorAll(".pool-cell").length);
  document.body.setAttribute("data-shown", rows.filter(function (r) { return r.style.display !== "none"; }).length + " " + shown.textContent);
  document.body.setAttribute("data-rendered", [
    document.querySelectorAll(".node-cell").length,
    document.querySelectorAll(".reason-bar").length,
    document.querySelectorAll(".sample").length,
    rows.length
  ].join(","));
})();
</script>
</body>
</html>
`

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// processCPU is this process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// command is a finished kubesched run.
type command struct {
	Stdout    []byte
	Stderr    string
	Wall, CPU time.Duration
	Err       error
}

// runKubesched runs bin/kubesched with args, under a timeout.
func runKubesched(bin string, timeout time.Duration, args ...string) command {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	c := command{Stdout: out.Bytes(), Stderr: errb.String(), Wall: time.Since(start), Err: err}
	if cmd.ProcessState != nil {
		c.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if ctx.Err() != nil {
		c.Err = fmt.Errorf("stopped after %s", timeout)
	} else if err != nil {
		c.Err = fmt.Errorf("%w: %s", err, lastLine(c.Stderr))
	}
	return c
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// capacityAnswer is the part of capacity --node-types -o json read here.
type capacityAnswer struct {
	Add []struct {
		Type       string  `json:"type"`
		Zone       string  `json:"zone"`
		Count      int     `json:"count"`
		HourlyCost float64 `json:"hourlyCost"`
		Pods       int     `json:"pods"`
	} `json:"add"`
	HourlyCost float64 `json:"hourlyCost"`
	Scheduled  int     `json:"scheduled"`
	Pending    []struct {
		Pod    string `json:"pod"`
		Reason string `json:"reason"`
	} `json:"pending"`
}

// runCapacity asks kubesched capacity --node-types for the input's plan,
// runs times (the median run's times kept).
func runCapacity(bin string, in *input, runs int, timeout time.Duration, extra []string) *plan {
	tool := "kubesched"
	if len(extra) > 0 {
		tool += " " + strings.Join(extra, " ")
	}
	p := &plan{Tool: tool}
	var cmds []command
	for range max(runs, 1) {
		args := append([]string{"capacity", "-f", in.ClusterFile, "--node-types", in.TypesFile, "-o", "json"}, extra...)
		c := runKubesched(bin, timeout, args...)
		cmds = append(cmds, c)
		if c.Err != nil {
			break
		}
	}
	// The median by wall time.
	for i := range cmds {
		for j := i + 1; j < len(cmds); j++ {
			if cmds[j].Wall < cmds[i].Wall {
				cmds[i], cmds[j] = cmds[j], cmds[i]
			}
		}
	}
	c := cmds[len(cmds)/2]
	p.Wall, p.CPU, p.Runs = c.Wall, c.CPU, len(cmds)
	p.WallMin, p.WallMax = cmds[0].Wall, cmds[len(cmds)-1].Wall
	for _, c := range cmds {
		if c.Err != nil {
			p.Err = c.Err.Error()
			return p
		}
	}
	var a capacityAnswer
	if err := json.Unmarshal(c.Stdout, &a); err != nil {
		p.Err = fmt.Sprintf("reading its JSON: %v", err)
		return p
	}
	price := map[string]float64{}
	for _, t := range in.Types {
		price[t.Name] = t.Price
	}
	for _, add := range a.Add {
		for k := range add.Count {
			// The pods per node are not in the answer: spread the
			// entry's pods over its nodes for the record.
			pods := add.Pods / add.Count
			if k < add.Pods%add.Count {
				pods++
			}
			p.Nodes = append(p.Nodes, planNode{Type: add.Type, Zone: add.Zone, Price: price[add.Type], Pods: pods})
		}
	}
	if d := cost(p.Nodes) - a.HourlyCost; d > 1e-6 || d < -1e-6 {
		p.Notes = append(p.Notes, fmt.Sprintf("its hourlyCost %.3f differs from its nodes' list prices %.3f", a.HourlyCost, cost(p.Nodes)))
	}
	if len(a.Pending) > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("it answers %d pods no type can run (first: %s: %s)", len(a.Pending), a.Pending[0].Pod, a.Pending[0].Reason))
	}
	return p
}

// simulateReport is the part of simulate -o json read here.
type simulateReport struct {
	Pods []struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		Node      string `json:"node"`
		Status    string `json:"status"`
	} `json:"pods"`
}

// placement is what simulate made of a plan's nodes: pods in all
// (DaemonSet pods included) and scheduled, the DaemonSet pods among them,
// and the nodes no workload pod landed on.
type placement struct {
	Total, Placed             int
	DaemonTotal, DaemonPlaced int
	EmptyNodes                int
}

// verify places the input's pods on the plan's nodes with kubesched
// simulate (kube-scheduler's rules); for Karpenter, each run's plan (they
// can differ in zones), the median run's kept and the range noted.
func verify(bin, work string, in *input, p *plan, timeout time.Duration) {
	if p.Err != "" {
		return
	}
	prefix := strings.ToLower(strings.Fields(p.Tool)[0])
	pl, err := place(bin, work, prefix, in, p.Nodes, timeout)
	if err != nil {
		p.VerifyErr = err.Error()
		return
	}
	p.placement = pl
	seen := map[string]bool{fmt.Sprint(p.Nodes): true}
	lo, hi := pl.Placed, pl.Placed
	for _, v := range p.Variants {
		if seen[fmt.Sprint(v)] {
			continue
		}
		seen[fmt.Sprint(v)] = true
		vp, err := place(bin, work, prefix, in, v, timeout)
		if err != nil {
			p.VerifyErr = err.Error()
			return
		}
		lo, hi = min(lo, vp.Placed), max(hi, vp.Placed)
	}
	if lo != hi {
		p.Notes = append(p.Notes, fmt.Sprintf("its %d runs' plans place %d to %d pods", len(p.Variants), lo, hi))
	}
}

// place writes nodes as Node manifests and runs simulate on them.
func place(bin, work, prefix string, in *input, nodes []planNode, timeout time.Duration) (placement, error) {
	var pl placement
	manifests, err := in.nodeManifests(prefix, nodes)
	if err != nil {
		return pl, err
	}
	nodesFile := filepath.Join(work, prefix+"-nodes.yaml")
	if err := os.WriteFile(nodesFile, manifests, 0o644); err != nil {
		return pl, err
	}
	c := runKubesched(bin, timeout, "simulate", "-f", in.ClusterFile, "-f", nodesFile, "-o", "json")
	var r simulateReport
	if c.Err == nil {
		c.Err = json.Unmarshal(c.Stdout, &r)
	}
	if c.Err != nil {
		var ee *exec.ExitError
		// simulate may exit non-zero when pods stay pending: its
		// report is still the answer.
		if !errors.As(c.Err, &ee) || len(c.Stdout) == 0 || json.Unmarshal(c.Stdout, &r) != nil {
			return pl, fmt.Errorf("simulate: %w", c.Err)
		}
	}
	used := map[string]bool{}
	for _, pod := range r.Pods {
		pl.Total++
		daemon := pod.Namespace == "kube-system"
		if daemon {
			pl.DaemonTotal++
		}
		if pod.Status == "Scheduled" {
			pl.Placed++
			if daemon {
				pl.DaemonPlaced++
			} else {
				used[pod.Node] = true
			}
		}
	}
	pl.EmptyNodes = len(nodes) - len(used)
	return pl, nil
}

package main

import "math"

// boundType is a type's price and the room it offers pods, in millicores
// and bytes.
type boundType struct {
	Name     string
	Price    float64
	CPU, Mem float64
}

// fractionalBound is the least cost of fractional nodes whose room
// covers cpu and mem: min Σ price_t x_t, Σ cpu_t x_t ≥ cpu, Σ mem_t x_t ≥
// mem, x ≥ 0. With two constraints a basic optimum has at most two
// types, so it is the least over each type alone and each pair with both
// constraints tight. It returns the cost and the mix (type -> nodes).
func fractionalBound(types []boundType, cpu, mem float64) (float64, map[string]float64) {
	best := math.Inf(1)
	var mix map[string]float64
	for _, t := range types {
		if t.CPU <= 0 || t.Mem <= 0 {
			continue
		}
		x := max(cpu/t.CPU, mem/t.Mem)
		if c := t.Price * x; c < best {
			best, mix = c, map[string]float64{t.Name: x}
		}
	}
	for i, s := range types {
		for _, t := range types[i+1:] {
			det := s.CPU*t.Mem - t.CPU*s.Mem
			if det == 0 {
				continue
			}
			x := (cpu*t.Mem - t.CPU*mem) / det
			y := (s.CPU*mem - cpu*s.Mem) / det
			if x < 0 || y < 0 {
				continue
			}
			if c := s.Price*x + t.Price*y; c < best {
				best, mix = c, map[string]float64{s.Name: x, t.Name: y}
			}
		}
	}
	return best, mix
}

// bound is the input's fractional lower bound: the Deployments' pods'
// requests against the types' allocatable less, on every node, the
// DaemonSets' pods' requests.
func (in *input) bound() (float64, map[string]float64) {
	var dsCPU, dsMem int64
	for _, ds := range in.DaemonSets {
		c, m := podRequests(&ds.Spec.Template.Spec)
		dsCPU += c
		dsMem += m
	}
	var cpu, mem float64
	for _, d := range in.Deployments {
		c, m := podRequests(&d.Spec.Template.Spec)
		cpu += float64(c) * float64(replicas(d))
		mem += float64(m) * float64(replicas(d))
	}
	var types []boundType
	for _, t := range in.Types {
		a := t.Node.Status.Allocatable
		types = append(types, boundType{Name: t.Name, Price: t.Price,
			CPU: float64(a.Cpu().MilliValue() - dsCPU), Mem: float64(a.Memory().Value() - dsMem)})
	}
	return fractionalBound(types, cpu, mem)
}

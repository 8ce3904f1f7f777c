package questions

import (
	"math"
	"strconv"
	"strings"
)

// fractionalPlan is the optimum of the packing's linear relaxation: nodes
// may be bought in fractions and a pod split over them. Cost is its cost
// (a lower bound of any answer's, for the pods it was given), Nodes the
// fractional count per candidate.
type fractionalPlan struct {
	Cost  float64
	Nodes []float64
	// Prefer says, per item, on which candidates the optimum puts some of
	// the item's group.
	Prefer [][]bool
}

// fractional solves the relaxation for items: the pods are grouped by the
// candidates they could run on, each group's requests summed; it is
//
//	min Σ cost_i·x_i  subject to  Σ_i y_gi = 1 for each group g,
//	                               Σ_g y_gi·demand_gr ≤ x_i·room_ir for each i, r,
//	                               x_i ≤ left_i (roomLeft: the nodes of i its
//	                               limit still allows; nil: unbounded),
//
// solved through its dual, whose origin is feasible (max Σ u_g − Σ left_i·v_i
// subject to Σ_r room_ir·w_ir − v_i ≤ cost_i and u_g ≤ Σ_r demand_gr·w_ir,
// u, v, w ≥ 0; unbounded when the limits cannot hold the pods): the
// primal optimum is read off the dual's final tableau. perNode is added
// to each node's price in the objective (not in plan.Cost): where
// candidates cost the same per unit of room, the optimum then takes the
// larger nodes, which hold larger pods and leave the scheduler fewer
// fragments. ok is false when
// some pod has no candidate or the simplex did not converge.
func (s *packSpace) fractional(items []*packItem, perNode float64, roomLeft []int) (plan fractionalPlan, ok bool) {
	type group struct {
		cands  []bool
		demand []float64
		at     int
	}
	var groups []*group
	byKey := map[string]*group{}
	var key strings.Builder
	groupOf := make([]int, len(items))
	for n, it := range items {
		c, d := it.cands, it.demand
		key.Reset()
		any := false
		for i, b := range c {
			if b {
				key.WriteString(strconv.Itoa(i))
				key.WriteByte(',')
				any = true
			}
		}
		if !any {
			return plan, false
		}
		g, found := byKey[key.String()]
		if !found {
			g = &group{cands: c, at: len(groups)}
			byKey[key.String()] = g
			groups = append(groups, g)
		}
		groupOf[n] = g.at
		for len(g.demand) < len(d) {
			g.demand = append(g.demand, 0)
		}
		for j, v := range d {
			g.demand[j] += float64(v)
		}
	}
	nr := len(s.res)
	var usable []int
	for i := range s.types {
		if s.room[i] != nil {
			usable = append(usable, i)
		}
	}
	// Scale each resource to the largest room of it, for the simplex's
	// numbers.
	scale := make([]float64, nr)
	for j := range scale {
		scale[j] = 1
		for _, i := range usable {
			if j < len(s.room[i]) && s.room[i][j] < 1<<61 {
				scale[j] = math.Max(scale[j], float64(s.room[i][j]))
			}
		}
	}
	room := func(i, j int) float64 {
		if j >= len(s.room[i]) || s.room[i][j] >= 1<<61 {
			return math.Inf(1)
		}
		return math.Max(0, float64(s.room[i][j])) / scale[j]
	}
	// Dual variables: u_g, then w_ir for each usable i and resource r.
	nu := len(groups)
	nw := nu + len(usable)*nr
	nv := nw + len(usable)
	wAt := func(k, j int) int { return nu + k*nr + j }
	var rows [][]float64
	var rhs []float64
	var rowType []int // -1-k: type usable[k]; else the pair's index
	type pair struct{ g, k int }
	var pairs []pair
	for k, i := range usable {
		row := make([]float64, nv)
		for j := range nr {
			if r := room(i, j); !math.IsInf(r, 1) {
				row[wAt(k, j)] = r
			}
		}
		if roomLeft != nil {
			row[nw+k] = -1 // the limit's dual
		}
		rows = append(rows, row)
		rhs = append(rhs, s.types[i].Cost+perNode)
		rowType = append(rowType, -1-k)
	}
	for g, gr := range groups {
		for k, i := range usable {
			if !gr.cands[i] {
				continue
			}
			row := make([]float64, nv)
			row[g] = 1
			for j := range nr {
				if j < len(gr.demand) && !math.IsInf(room(i, j), 1) {
					row[wAt(k, j)] = -gr.demand[j] / scale[j]
				}
			}
			rows = append(rows, row)
			rhs = append(rhs, 0)
			rowType = append(rowType, len(pairs))
			pairs = append(pairs, pair{g, k})
		}
	}
	obj := make([]float64, nv)
	for g := range groups {
		obj[g] = 1
	}
	for k, i := range usable {
		if roomLeft != nil {
			obj[nw+k] = -float64(max(0, roomLeft[i]))
		}
	}
	value, duals, converged := simplexMax(rows, rhs, obj)
	if !converged {
		return plan, false
	}
	plan.Cost = value
	if perNode != 0 {
		plan.Cost = 0
		for r, t := range rowType {
			if t < 0 {
				plan.Cost += duals[r] * s.types[usable[-1-t]].Cost
			}
		}
	}
	plan.Nodes = make([]float64, len(s.types))
	prefer := make([][]bool, len(groups))
	for g := range prefer {
		prefer[g] = make([]bool, len(s.types))
	}
	for r, t := range rowType {
		if t < 0 {
			plan.Nodes[usable[-1-t]] = duals[r]
		} else if duals[r] > 1e-7 {
			prefer[pairs[t].g][usable[pairs[t].k]] = true
		}
	}
	plan.Prefer = make([][]bool, len(items))
	for n := range items {
		plan.Prefer[n] = prefer[groupOf[n]]
	}
	return plan, true
}

// simplexMax maximizes obj·x subject to rows·x ≤ rhs, x ≥ 0, with rhs ≥ 0
// (the origin feasible), by the tableau simplex with Bland's rule. It
// returns the optimum, each row's dual value (the shadow price of its
// constraint) and whether it converged (false: unbounded or too many
// pivots).
func simplexMax(rows [][]float64, rhs, obj []float64) (float64, []float64, bool) {
	m, n := len(rows), len(obj)
	width := n + m + 1
	t := make([][]float64, m+1)
	for r := range m {
		t[r] = make([]float64, width)
		copy(t[r], rows[r])
		t[r][n+r] = 1
		t[r][width-1] = rhs[r]
	}
	z := make([]float64, width)
	for j := range n {
		z[j] = -obj[j]
	}
	t[m] = z
	basis := make([]int, m)
	for r := range basis {
		basis[r] = n + r
	}
	const eps = 1e-9
	for range 50 * (m + n) {
		col := -1
		for j := range width - 1 {
			if t[m][j] < -eps {
				col = j
				break // Bland: the first improving column
			}
		}
		if col < 0 {
			duals := make([]float64, m)
			for r := range m {
				duals[r] = t[m][n+r]
			}
			return t[m][width-1], duals, true
		}
		row, best := -1, math.Inf(1)
		for r := range m {
			if a := t[r][col]; a > eps {
				ratio := t[r][width-1] / a
				if ratio < best-eps || (math.Abs(ratio-best) <= eps && basis[r] < basis[row]) {
					row, best = r, ratio
				}
			}
		}
		if row < 0 {
			return 0, nil, false
		}
		pivot(t, row, col)
		basis[row] = col
	}
	return 0, nil, false
}

func pivot(t [][]float64, row, col int) {
	p := t[row][col]
	for j := range t[row] {
		t[row][j] /= p
	}
	for r := range t {
		if r == row {
			continue
		}
		f := t[r][col]
		if f == 0 {
			continue
		}
		for j, v := range t[row] {
			if v != 0 {
				t[r][j] -= f * v
			}
		}
	}
}

// Package dag finds a cycle in a directed graph: the check of a turn's
// call dependencies, kept apart from the scheduler core so that it is read
// and tested alone.
package dag

// FindCycle returns one cycle of the graph of n nodes in which node i has
// deg(i) edges, its k-th to node edge(i, k), as the nodes of the cycle
// (first repeated last, each with an edge to the next), or nil when there
// is none. Iterative depth-first search, so deep chains cannot overflow
// the stack.
func FindCycle(n int, deg func(i int) int, edge func(i, k int) int) []int {
	const (
		white = iota
		grey
		black
	)
	color := make([]uint8, n)
	parent := make([]int, n)
	type frame struct{ node, next int }
	for root := range n {
		if color[root] != white {
			continue
		}
		stack := []frame{{root, 0}}
		color[root] = grey
		parent[root] = -1
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.next == deg(f.node) {
				color[f.node] = black
				stack = stack[:len(stack)-1]
				continue
			}
			d := edge(f.node, f.next)
			f.next++
			switch color[d] {
			case white:
				color[d] = grey
				parent[d] = f.node
				stack = append(stack, frame{d, 0})
			case grey:
				cycle := []int{d}
				for v := f.node; v != d; v = parent[v] {
					cycle = append(cycle, v)
				}
				cycle = append(cycle, d)
				// The walk went from dependents to dependencies; reverse it
				// so it reads "a needs b needs a".
				for i, j := 0, len(cycle)-1; i < j; i, j = i+1, j-1 {
					cycle[i], cycle[j] = cycle[j], cycle[i]
				}
				return cycle
			}
		}
	}
	return nil
}

package sched_test

import (
	"fmt"

	. "github.com/simbench/simbench/sched"
)

// calls returns n calls made by mk, each given the id c<i> unless mk set one.
func calls(n int, mk func(i int) Call) []Call {
	out := make([]Call, n)
	for i := range out {
		out[i] = mk(i)
		if out[i].ID == "" {
			out[i].ID = fmt.Sprintf("c%d", i)
		}
	}
	return out
}

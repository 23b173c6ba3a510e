module github.com/simbench/simbench/sched

go 1.26.0

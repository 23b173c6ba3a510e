package sim

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/simbench/simbench/results"
)

// runEngines runs the engines, at most par at a time, each on a goroutine
// of its own, and writes each one's figures into res.Strategies at its
// index; a nil engine (a run read from the cache) is complete already.
// It returns, per engine, whether it simulated to the end (false when ctx
// ended it first). progress gives the callback of a strategy's engine.
//
// This is the one place of the engine that starts goroutines: the
// engines share nothing, and each is a deterministic function of its
// strategy and seed, so running them side by side changes no figure, only
// the wall time. A panic in an engine is re-raised here, on the caller's
// goroutine, with the engine's stack.
func runEngines(ctx context.Context, engines []*engine, par int, res *results.Results, progress func(name string) func(time.Duration)) []bool {
	sem := make(chan struct{}, par)
	complete := make([]bool, len(engines))
	var (
		crashOnce  sync.Once
		crash      any
		crashStack []byte
	)
	var wg sync.WaitGroup
	for i, e := range engines {
		if e == nil {
			complete[i] = true // read from the cache
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			defer func() {
				// A panic in an engine would kill the process from a
				// goroutine nobody can recover: keep it for the caller.
				if r := recover(); r != nil {
					crashOnce.Do(func() { crash, crashStack = r, debug.Stack() })
				}
			}()
			complete[i] = e.Run(ctx, progress(e.st.Name))
			res.Strategies[i] = e.result()
		}()
	}
	wg.Wait()
	if crash != nil {
		panic(fmt.Sprintf("%v\n\nin a strategy's simulation:\n%s", crash, crashStack))
	}
	return complete
}

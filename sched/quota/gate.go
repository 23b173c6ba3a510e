package quota

import (
	"context"
	"fmt"
	"time"

	"github.com/simbench/simbench/sched"
)

// Gate puts a shared quota in front of a sched.Runner without touching the
// sans-IO core: Wrap returns an Executor that, before each attempt of a call
// to a service it knows, takes one unit from the service's request lease and
// Call.Tokens units from its token lease, waiting (polling the shared bucket
// at the wait it reports) until they are granted; after the attempt it
// settles the token lease against Outcome.Tokens. The Runner's own buckets
// still apply, as a per-process ceiling.
//
// The wait happens inside the attempt, so it holds an in-flight slot and
// counts against the attempt's timeout; a context cancelled while waiting
// ends the attempt as ClassTransient. A quota backend error (Failover under
// FailClosed while Redis is gone) ends it as ClassOverloaded, which the
// Runner retries with backoff. Calls of services with no lease run as they are.
//
// Shared with sched.WithQuota does the same inside the Runner's core, where
// waiting for the shared quota holds no slot: prefer it for a new Runner.
type Gate struct {
	Requests map[string]*Lease // by Call.Service: one unit per attempt
	Tokens   map[string]*Lease // by Call.Service: Call.Tokens units per attempt, settled on usage
}

// Wrap returns exec behind the gate.
func (g *Gate) Wrap(exec sched.Executor) sched.Executor {
	return func(ctx context.Context, call *sched.Call, attempt int) sched.Outcome {
		req, tok := g.Requests[call.Service], g.Tokens[call.Service]
		if req != nil {
			if err := await(ctx, req, 1); err != nil {
				return failed(ctx, call, err)
			}
		}
		est := float64(call.Tokens)
		if tok != nil && est > 0 {
			if err := await(ctx, tok, est); err != nil {
				if req != nil {
					req.Return(1)
				}
				return failed(ctx, call, err)
			}
		}
		out := exec(ctx, call, attempt)
		if tok != nil && out.HasUsage {
			switch d := float64(out.Tokens) - est; {
			case d < 0:
				tok.Return(-d)
			case d > 0:
				_ = tok.Charge(context.WithoutCancel(ctx), d) // a lost charge errs against the limit, by d tokens
			}
		}
		return out
	}
}

func failed(ctx context.Context, call *sched.Call, err error) sched.Outcome {
	err = fmt.Errorf("quota: call %q to %q: %w", call.ID, call.Service, err)
	if ctx.Err() != nil {
		return sched.Failed(sched.ClassTransient, err)
	}
	return sched.Failed(sched.ClassOverloaded, err)
}

// await takes n units from l, waiting as long as ctx allows.
func await(ctx context.Context, l *Lease, n float64) error {
	for {
		ok, wait, err := l.Take(ctx, n, 0)
		if err != nil || ok {
			return err
		}
		t := time.NewTimer(max(wait, time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

package sched_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/httptool"
)

// Run one turn of 8 tool calls against an HTTP endpoint that allows 5
// requests per second, and read the results in the order the model emitted
// the calls.
func ExampleRunner_Run() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"path":%q}`, r.URL.Path)
	}))
	defer srv.Close()

	tool := &httptool.Tool{Build: httptool.PostJSON(srv.URL+"/search", nil)}
	r, _ := sched.NewRunner(sched.Config{
		MaxInFlight: 4,
		Services:    map[string]sched.ServiceConfig{"search": {RequestsPerMinute: 300, RequestBurst: 5}},
		Retry:       sched.RetryPolicy{Backoff: sched.BackoffFullJitter, Base: time.Second, Cap: 30 * time.Second, MaxAttempts: 5},
	}, tool.Execute)
	defer r.Close()

	var turn sched.Turn
	for i := range 8 {
		turn.Calls = append(turn.Calls, sched.Call{ID: fmt.Sprint("call_", i), Service: "search", Payload: map[string]int{"q": i}})
	}
	results, err := r.Run(context.Background(), turn)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, res := range results {
		fmt.Println(res.ID, res.Class, res.Attempts, string(res.Value.([]byte)))
	}
	// Output:
	// call_0 success 1 {"path":"/search"}
	// call_1 success 1 {"path":"/search"}
	// call_2 success 1 {"path":"/search"}
	// call_3 success 1 {"path":"/search"}
	// call_4 success 1 {"path":"/search"}
	// call_5 success 1 {"path":"/search"}
	// call_6 success 1 {"path":"/search"}
	// call_7 success 1 {"path":"/search"}
}

// Stream yields each result as soon as it is decided.
func ExampleRunner_Stream() {
	r, _ := sched.NewRunner(sched.Config{MaxInFlight: 1}, func(ctx context.Context, call *sched.Call, attempt int) sched.Outcome {
		if call.ID == "b" {
			return sched.Failed(sched.ClassPermanent, fmt.Errorf("no such page"))
		}
		return sched.Succeeded(call.ID + "!")
	})
	defer r.Close()
	ch, _ := r.Stream(context.Background(), sched.Turn{Calls: []sched.Call{{ID: "a"}, {ID: "b"}, {ID: "c", After: []string{"b"}}}})
	for res := range ch {
		fmt.Println(res.ID, res.IsError(), res.State)
	}
	// Output:
	// a false completed
	// b true completed
	// c true not_started
}

// A driver of the sans-IO core: time goes in, actions come out. The
// simulator works this way in virtual time.
func ExampleCore() {
	core, _ := sched.New(sched.Config{Services: map[string]sched.ServiceConfig{
		"api": {RequestsPerMinute: 600, RequestBurst: 2}, // 10/s, burst 2
	}})
	core.Submit(0, sched.Turn{Calls: []sched.Call{{ID: "a", Service: "api"}, {ID: "b", Service: "api"}, {ID: "c", Service: "api"}}})
	for _, a := range core.Actions(nil) {
		switch a.Kind {
		case sched.ActStart:
			fmt.Println("start", a.Call.ID, "attempt", a.N, "id", a.Attempt)
		case sched.ActWake:
			fmt.Println("wake me at", a.At)
		}
	}
	core.Advance(100 * time.Millisecond)
	for _, a := range core.Actions(nil) {
		if a.Kind == sched.ActStart {
			fmt.Println("start", a.Call.ID, "at", core.Now())
		}
	}
	// Output:
	// start a attempt 1 id 1
	// start b attempt 1 id 2
	// wake me at 100ms
	// start c at 100ms
}

// A driver of the Core that reads each turn's results as they come in
// and needs them no longer gives them back: the next turn of as many calls
// is handed the same storage, so a long simulation allocates no results.
func ExampleCore_Recycle() {
	core, _ := sched.New(sched.Config{Services: map[string]sched.ServiceConfig{"api": {}}})
	var first *sched.TurnResult
	for turn := range 3 {
		core.Submit(core.Now(), sched.Turn{Calls: []sched.Call{{ID: "a", Service: "api"}, {ID: "b", Service: "api"}}})
		var done *sched.TurnResult
		for done == nil {
			for _, a := range core.Actions(nil) {
				switch a.Kind {
				case sched.ActStart:
					core.Complete(core.Now(), a.Attempt, sched.Outcome{Value: fmt.Sprint(a.Call.ID, turn)})
				case sched.ActTurnDone:
					done = a.Turn
				}
			}
		}
		if first == nil {
			first = done
		}
		fmt.Println(done.Results[0].Value, done.Results[1].Value, "same storage as the first turn:", done == first)
		core.Recycle(done) // done and its Results must not be read after this
	}
	// Output:
	// a0 b0 same storage as the first turn: true
	// a1 b1 same storage as the first turn: true
	// a2 b2 same storage as the first turn: true
}

// One agent turn: the model asked for three tool calls; the Runner runs
// them under the limits of their services and returns one result per call
// in the order the model emitted them, failures included, ready to go back
// to the model as tool results.
func Example() {
	r, err := sched.NewRunner(sched.Config{
		MaxInFlight: 4,
		Services: map[string]sched.ServiceConfig{
			"search":  {MaxInFlight: 2, RequestsPerMinute: 600},
			"weather": {RequestsPerMinute: 60},
		},
		Retry: sched.RetryPolicy{Backoff: sched.BackoffFullJitter, Base: 10 * time.Millisecond, Cap: time.Second, MaxAttempts: 3},
	}, func(ctx context.Context, call *sched.Call, attempt int) sched.Outcome {
		switch call.Tool {
		case "web_search":
			return sched.Succeeded(fmt.Sprintf("results for %v", call.Payload))
		case "get_weather":
			return sched.Succeeded("sunny in " + call.Payload.(string))
		}
		return sched.Failed(sched.ClassPermanent, fmt.Errorf("unknown tool %q", call.Tool))
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	turn := sched.Turn{Calls: []sched.Call{
		{ID: "toolu_01", Tool: "web_search", Service: "search", Payload: "rate limits"},
		{ID: "toolu_02", Tool: "get_weather", Service: "weather", Payload: "Lisbon"},
		{ID: "toolu_03", Tool: "send_email", Service: "search"},
	}}
	results, err := r.Run(context.Background(), turn)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, res := range results {
		if res.IsError() {
			fmt.Printf("%s: error: %v\n", res.ID, res.Err)
			continue
		}
		fmt.Printf("%s: %v\n", res.ID, res.Value)
	}
	// Output:
	// toolu_01: results for rate limits
	// toolu_02: sunny in Lisbon
	// toolu_03: error: unknown tool "send_email"
}

// Errors that callers branch on carry their numbers: errors.Is tells the
// kind, errors.As gives the figures.
func ExampleNeverFitsError() {
	core, _ := sched.New(sched.Config{Services: map[string]sched.ServiceConfig{"llm": {TokensPerMinute: 30_000}}})
	core.Submit(0, sched.Turn{Calls: []sched.Call{{ID: "summarize", Service: "llm", Tokens: 45_411}}})
	for _, a := range core.Actions(nil) {
		if a.Kind != sched.ActResult {
			continue
		}
		var nf *sched.NeverFitsError
		if errors.As(a.Result.Err, &nf) {
			fmt.Println(errors.Is(a.Result.Err, sched.ErrNeverFits), nf.Need, nf.Capacity)
			fmt.Println(a.Result.Err)
		}
	}
	// Output:
	// true 45411 30000
	// call "summarize" needs 45411 tokens but the bucket of service "llm" holds at most 30000: sched: call can never fit the bucket
}

// A call that gave up says how many attempts it made, and still matches
// the last attempt's error.
func ExampleRetriesExhaustedError() {
	busy := errors.New("upstream busy")
	r, _ := sched.NewRunner(sched.Config{Retry: sched.RetryPolicy{MaxAttempts: 3}}, func(context.Context, *sched.Call, int) sched.Outcome {
		return sched.Failed(sched.ClassOverloaded, busy)
	})
	defer r.Close()
	res, _ := r.Run(context.Background(), sched.Turn{Calls: []sched.Call{{ID: "a"}}})
	var ex *sched.RetriesExhaustedError
	if errors.As(res[0].Err, &ex) {
		fmt.Println(ex.Attempts, errors.Is(res[0].Err, sched.ErrRetriesExhausted), errors.Is(res[0].Err, busy))
	}
	// Output:
	// 3 true true
}

// A typo in a service name is refused, not run without limits.
func ExampleInvalidTurnError() {
	core, _ := sched.New(sched.Config{Services: map[string]sched.ServiceConfig{"search": {RequestsPerMinute: 60}}})
	_, err := core.Submit(0, sched.Turn{Calls: []sched.Call{{ID: "a", Service: "serach"}}})
	var inv *sched.InvalidTurnError
	fmt.Println(errors.As(err, &inv), inv.UnknownServices)
	fmt.Println(err)
	// Output:
	// true [serach]
	// sched: invalid turn: call "a" names service "serach", which Config.Services does not list (it lists "search")
}

// Stats and SetLimits change a running Runner: here a provider lowered its
// limit, and the new cap holds from the next admission.
func ExampleRunner_SetLimits() {
	r, _ := sched.NewRunner(sched.Config{Services: map[string]sched.ServiceConfig{"llm": {MaxInFlight: 8, RequestsPerMinute: 600}}},
		func(context.Context, *sched.Call, int) sched.Outcome { return sched.Succeeded(nil) })
	defer r.Close()
	if err := r.SetLimits("llm", sched.Limits{MaxInFlight: 2, RequestsPerMinute: 300}); err != nil {
		fmt.Println(err)
		return
	}
	s := r.Stats().Services[0]
	fmt.Println(s.Name, s.Limit, s.Limits.RequestsPerMinute)
	// Output:
	// llm 2 300
}

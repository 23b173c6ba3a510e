package sched_test

import (
	"context"
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
			fmt.Println("start", a.Call.ID, "attempt", a.Attempt)
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
	// start a attempt 1
	// start b attempt 2
	// wake me at 100ms
	// start c at 100ms
}

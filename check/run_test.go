package check

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// startTier3 serves tier3's services, logging every request to rec.
func startTier3(t *testing.T, rec *Recorder) (*scenarios.Scenario, *fakeapi.Server) {
	t.Helper()
	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		t.Fatal(err)
	}
	cfg := fakeapi.ServerConfig{Seed: sc.Seed, OnRequest: rec.Add}
	for i := range sc.Services {
		cfg.Services = append(cfg.Services, sim.ServeConfig(sc, &sc.Services[i]))
	}
	srv, err := fakeapi.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return sc, srv
}

func TestEnvironmentNamesEveryServiceAndTool(t *testing.T) {
	var rec Recorder
	sc, srv := startTier3(t, &rec)
	env := Environment(sc, srv)
	for _, want := range []string{
		"SIMBENCH_URL_OPENAI=" + srv.URL("openai"),
		"OPENAI_BASE_URL=" + srv.URL("openai") + "/v1",
		"OPENAI_API_KEY=sk-simbench",
		"SIMBENCH_TOOL_URL_LOOKUP=" + srv.URL("openai") + "/tools/lookup",
		"SIMBENCH_STATS_URL=" + srv.StatsURL(),
	} {
		if !slices.Contains(env, want) {
			t.Errorf("environment lacks %s: %q", want, env)
		}
	}
}

func TestRunCommandGivesTheClientItsEnvironment(t *testing.T) {
	var rec Recorder
	sc, srv := startTier3(t, &rec)
	var out bytes.Buffer
	if err := RunCommand(context.Background(), []string{"sh", "-c", `echo "$SIMBENCH_TOOL_URL_LOOKUP $OPENAI_API_KEY"`}, Environment(sc, srv), &out, &out); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if want := srv.URL("openai") + "/tools/lookup sk-simbench\n"; out.String() != want {
		t.Errorf("the client saw %q, want %q", out.String(), want)
	}
}

func TestRecorderNamesClientsByHeaderOrKey(t *testing.T) {
	var rec Recorder
	_, srv := startTier3(t, &rec)
	for _, h := range []http.Header{{"Authorization": {"Bearer sk-a"}}, {"X-Simbench-Client": {"agent-2"}}, {}} {
		req, err := http.NewRequest(http.MethodPost, srv.URL("openai")+"/tools/lookup", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = h
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	recs, dropped := rec.Records()
	if len(recs) != 3 || dropped != 0 {
		t.Fatalf("%d records, %d dropped; want 3", len(recs), dropped)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Client)
		if r.Status != http.StatusOK || r.Path != "/tools/lookup" || r.Answered < r.Arrived || !r.Admitted {
			t.Errorf("record %+v", r)
		}
	}
	if want := []string{"key:sk-a", "agent-2", "anonymous"}; !slices.Equal(got, want) {
		t.Errorf("clients %q, want %q", got, want)
	}
}

func TestRunCommandReportsAFailure(t *testing.T) {
	err := RunCommand(context.Background(), []string{"sh", "-c", "exit 3"}, nil, new(bytes.Buffer), new(bytes.Buffer))
	if !errors.Is(err, ErrCommand) || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("error %v, want ErrCommand with exit status 3", err)
	}
	if err := RunCommand(context.Background(), nil, nil, nil, nil); !errors.Is(err, ErrCommand) {
		t.Errorf("no command: %v", err)
	}
}

func TestRunCommandStopsWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := RunCommand(ctx, []string{"sleep", "60"}, nil, new(bytes.Buffer), new(bytes.Buffer)); err != nil {
		t.Errorf("a command stopped by its context: %v, want nil", err)
	}
}

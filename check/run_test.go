package check

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/scenarios"
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
		cfg.Services = append(cfg.Services, setup.ServeConfig(sc, &sc.Services[i]))
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

func TestBoundKeepsShortNamesAndCutsLongOnesApart(t *testing.T) {
	exact := strings.Repeat("a", MaxName)
	if Bound("agent-2") != "agent-2" || Bound(exact) != exact {
		t.Errorf("a name of at most MaxName bytes changed")
	}
	long := strings.Repeat("é", MaxName) // 2 bytes each: MaxName falls on a character's start
	odd := "x" + long                    // and here in the middle of one
	for _, s := range []string{long, odd, long + "b"} {
		b := Bound(s)
		if len(b) > MaxName+12 || !utf8.ValidString(b) || !strings.HasPrefix(s, strings.Split(b, "…")[0]) || !strings.Contains(b, "…#") {
			t.Errorf("Bound of %d bytes: %q (%d bytes), want at most MaxName+12 bytes of whole characters, a prefix of the name, an ellipsis and a hash", len(s), b, len(b))
		}
	}
	if Bound(long) == Bound(long+"b") {
		t.Errorf("two long names with one beginning were bounded to one: %q", Bound(long))
	}
}

func TestRecorderBoundsA500KiBClientName(t *testing.T) {
	var rec Recorder
	sc, srv := startTier3(t, &rec)
	long := strings.Repeat("c", 500<<10)
	for _, name := range []string{long, long + "2"} {
		req, err := http.NewRequest(http.MethodPost, srv.URL("openai")+"/tools/lookup", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(fakeapi.ClientHeader, name)
		req.Header.Set("Authorization", "Bearer sk-"+long)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	recs, _ := rec.Records()
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	if recs[0].Client == recs[1].Client {
		t.Errorf("two clients were kept as one: %.40q", recs[0].Client)
	}
	for _, r := range recs {
		if len(r.Client) > MaxName+12 || len(r.Key) > MaxName+12 {
			t.Errorf("kept a client name of %d bytes and a key of %d, want at most %d", len(r.Client), len(r.Key), MaxName+12)
		}
	}
	var out bytes.Buffer
	if err := Grade(sc.Name, recs, RulesFor(sc, nil)).WriteText(&out); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if len(line) > 2*MaxName+200 {
			t.Errorf("printed a line of %d bytes: %.80q…", len(line), line)
		}
	}
	if !strings.Contains(out.String(), strings.Repeat("c", MaxName)+"…#") {
		t.Errorf("the report does not name the client by its first MaxName bytes and an ellipsis:\n%.400s", out.String())
	}
}

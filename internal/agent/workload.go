package agent

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/satmath"
)

// Workload generates turns from a scenario's [workload]. Every draw for a
// turn comes from that turn's own stream, derived from the seed, the session
// (or the arrival) and the turn's number, so every strategy of a run faces
// the same turns whatever order its timing makes them happen in.
type Workload struct {
	sc       *scenarios.Scenario
	think    *setup.Sampler
	cancelAt *setup.Sampler
	groups   []group
	llm      *llmGen
	// modelOnly is the scenario's Workload.ModelOnly: its model calls
	// count as calls (callMeta.counted, agentPart.counted).
	modelOnly bool
	sub       *subGen
	toolIndex map[string]int
	tools     []toolGen
	ids       []string // "c0", "c1", … shared, so call ids cost no allocation
	// scratch for callsUpTo: each drawn call's tool and group
	toolBuf, groupOf []int
	// names holds the client names of the calls numbered from nameFirst,
	// one after another, each ending at its nameEnds entry (clientName).
	names     string
	nameFirst uint64
	nameEnds  []uint32
	nameBuf   []byte
}

type toolGen struct {
	name       string
	service    string
	svc        int
	tokens     *setup.Sampler
	write      bool
	resource   string
	idempotent bool
}

type group struct {
	tools   []int // tool indexes: one, or the mix
	weights []float64
	total   float64
	count   *setup.Sampler
	prob    float64
	after   []int // tool indexes this group waits for
}

type llmGen struct {
	service string
	svc     int
	tokens  *setup.Sampler
	output  *setup.Sampler // the zero Dist when output_tokens is unset: draws 0, touching no stream
	growth  int64          // tokens the prompt grows by each iteration
}

type subGen struct {
	count         *setup.Sampler
	maxIterations int
	budget        int64
	orchestrator  int64 // the whole turn's budget (0: none)
	finish        float64
	llm           *llmGen
	groups        []group
}

func newWorkload(sc *scenarios.Scenario) *Workload {
	w := &Workload{sc: sc, toolIndex: map[string]int{}}
	w.think = setup.NewSampler(sc.Workload.Think)
	w.cancelAt = setup.NewSampler(sc.Workload.Cancel.After)
	for i, t := range sc.Tools {
		w.toolIndex[t.Name] = i
		w.tools = append(w.tools, toolGen{
			name: t.Name, service: t.Service, svc: ServiceIndex(sc, t.Service), tokens: setup.NewSampler(t.Tokens),
			write: t.Kind == scenarios.KindWrite, resource: t.Resource, idempotent: t.Idempotent,
		})
	}
	w.groups = w.makeGroups(sc.Workload.Calls)
	w.modelOnly = sc.Workload.ModelOnly()
	w.llm = w.makeLLM(sc.Workload.LLM)
	if s := sc.Workload.Subagents; s != nil {
		w.sub = &subGen{
			count: setup.NewSampler(s.Count), maxIterations: s.MaxIterations,
			budget: s.TokenBudget, orchestrator: s.OrchestratorBudget, finish: s.FinishProbability,
			llm: w.makeLLM(s.LLM), groups: w.makeGroups(s.Calls),
		}
	}
	return w
}

func (w *Workload) makeLLM(l *scenarios.LLMCall) *llmGen {
	if l == nil {
		return nil
	}
	return &llmGen{service: l.Service, svc: ServiceIndex(w.sc, l.Service), tokens: setup.NewSampler(l.Tokens), output: setup.NewSampler(l.Output), growth: l.ContextGrowth}
}

func (w *Workload) makeGroups(gs []scenarios.CallGroup) []group {
	var out []group
	for _, g := range gs {
		gr := group{count: setup.NewSampler(g.Count), prob: g.Probability}
		if g.Tool != "" {
			gr.tools = []int{w.toolIndex[g.Tool]}
		}
		for _, m := range g.Mix {
			gr.tools = append(gr.tools, w.toolIndex[m.Tool])
			gr.weights = append(gr.weights, m.Weight)
			gr.total += m.Weight
		}
		for _, a := range g.After {
			gr.after = append(gr.after, w.toolIndex[a])
		}
		out = append(out, gr)
	}
	return out
}

func (w *Workload) id(i int) string {
	for len(w.ids) <= i {
		w.ids = append(w.ids, "c"+strconv.Itoa(len(w.ids)))
	}
	return w.ids[i]
}

// CallMeta travels with a sched.Call as its Payload: what the engine needs
// to build the request to the fake service.
type CallMeta struct {
	Tool  int32 // index of the call's tool, -1 for a model call
	Write bool  // a write at the service, serialized by sched or not
	// Counted marks a call that counts among the run's calls and its
	// attempts among their attempts: a tool call, or a model call of a
	// workload of model calls only (scenarios.Workload.ModelOnly).
	Counted bool
	// Slab is the engine's slab entries of the call's latest attempt and
	// of its latest hedge (engine.send), where engine.cancelAttempt looks
	// for an attempt the Core cancels: a table by attempt id would cost a
	// cold read and write for every attempt, for the few that are
	// cancelled. Client is the name the call's requests carry as their
	// client (ClientName of the call's number), to tell callers apart.
	Slab   [2]int32
	Svc    int // index of the call's service in the scenario
	Client string
	// Output is a model call's output tokens, a part of its sched.Call.Tokens
	// (0: all input, and for tool calls).
	Output int64
}

// callsUpTo generates one turn's (or one iteration's) tool calls, the
// groups drawn times over (a strategy's batch_turns: one wide turn of
// several turns' calls), or an error wrapping ErrTooLarge when the counts
// drawn pass limit calls. The calls and their metas take one allocation
// each (one between them for a single call, none when spare holds one: see
// callSlices), whatever their number; client names come from clientName.
func (w *Workload) callsUpTo(rng *rand.Rand, groups []group, times int, serializeWrites bool, serial *uint64, limit int, spare *CallSpare) ([]sched.Call, error) {
	tools, groupOf := w.toolBuf[:0], w.groupOf[:0]
	// The scratch goes back to w at each return, written out rather than
	// deferred: a deferred closure cost some 50 instructions a call.
	for k := range times * len(groups) {
		gi := k % len(groups)
		g := &groups[gi]
		if g.prob < 1 && rng.Float64() >= g.prob {
			continue
		}
		n := g.count.Count(rng)
		if n > limit-len(tools) {
			w.toolBuf, w.groupOf = tools[:0], groupOf[:0]
			return nil, tooManyInTurn("calls", satmath.Add(int64(n), int64(len(tools))), limit)
		}
		for range n {
			t := g.tools[0]
			if len(g.weights) > 0 {
				x := rng.Float64() * g.total
				for k, wt := range g.weights {
					if x < wt || k == len(g.weights)-1 {
						t = g.tools[k]
						break
					}
					x -= wt
				}
			}
			tools = append(tools, t)
			groupOf = append(groupOf, gi)
		}
	}
	calls, metas := CallSlices(len(tools), spare)
	for i, t := range tools {
		tg := &w.tools[t]
		*serial++
		metas[i] = CallMeta{Tool: int32(t), Svc: tg.svc, Write: tg.write, Counted: true, Client: w.ClientName(*serial)}
		calls[i] = sched.Call{
			ID: w.id(i), Tool: tg.name, Service: tg.service, Tokens: satmath.FromFloat[int64](tg.tokens.Draw(rng)),
			Write: tg.write && serializeWrites, Resource: tg.resource, Idempotent: tg.idempotent,
			Payload: &metas[i],
		}
		for _, dep := range groups[groupOf[i]].after {
			for j, u := range tools {
				if u == dep && j != i {
					// w.id(j), not calls[j].ID: a call drawn after this
					// one (a later batch's) is not written yet, and its
					// storage may hold an earlier turn's call.
					calls[i].After = append(calls[i].After, w.id(j))
				}
			}
		}
	}
	w.toolBuf, w.groupOf = tools[:0], groupOf[:0]
	return calls, nil
}

// OneCall holds a single call and its meta in one allocation.
type OneCall struct {
	// Calls is the call, as a one-element array a part's slice points into.
	Calls [1]sched.Call
	// Metas is the call's meta, at the same index as in Calls.
	Metas [1]CallMeta
}

// CallSpare is the storage a turn lends its parts' calls (callSlices):
// one for a one-call part and one for a part of several calls, each used
// once in the turn. The second outlives the turn: an agent loop reusing
// the turn (agentLoop.recycle) keeps it for the next, so that a run in
// steady state allocates no calls.
type CallSpare struct {
	One      *OneCall // nil: used, or none
	Many     *callBuf // kept from an earlier turn (its slices' capacity), or made for this one (nil: none yet)
	ManyUsed bool     // this turn used many
}

// callBuf is the storage of a part of several calls.
type callBuf struct {
	Calls []sched.Call
	metas []CallMeta
}

// MaxKeptCalls bounds the calls a turn keeps for the next (callSpare.many).
const MaxKeptCalls = 64

// CallSlices returns n calls and n metas to fill, from spare where it can
// (spare may be nil): a single call in spare.one, several in spare.many
// when it has room and this turn has not used it yet; else one allocation
// (two for several calls, which spare keeps when it has no storage yet
// and they are at most maxKeptCalls).
func CallSlices(n int, spare *CallSpare) ([]sched.Call, []CallMeta) {
	if n == 1 {
		var one *OneCall
		if spare != nil && spare.One != nil {
			one, spare.One = spare.One, nil
		} else {
			one = new(OneCall)
		}
		return one.Calls[:], one.Metas[:]
	}
	if spare == nil || spare.ManyUsed {
		return make([]sched.Call, n), make([]CallMeta, n)
	}
	if n > MaxKeptCalls && (spare.Many == nil || cap(spare.Many.Calls) < n) {
		return make([]sched.Call, n), make([]CallMeta, n)
	}
	if spare.Many == nil {
		spare.Many = new(callBuf)
	}
	b := spare.Many
	if cap(b.Calls) < n {
		b.Calls, b.metas = make([]sched.Call, n), make([]CallMeta, n)
	}
	spare.ManyUsed = true
	return b.Calls[:n], b.metas[:n]
}

// NameChunk is how many client names clientName makes at a time.
const NameChunk = 512

// ClientName returns the client name of call number serial (the number in
// base 36). Calls are numbered in order, so names are made nameChunk at a
// time into one string that they are cut from: a call's name costs no
// allocation of its own. (A name kept by a service pins its chunk, some
// 2 KB, until the service forgets the client.)
func (w *Workload) ClientName(serial uint64) string {
	if serial < w.nameFirst || serial-w.nameFirst >= uint64(len(w.nameEnds)) {
		w.makeNames(serial)
	}
	i := serial - w.nameFirst
	var from uint32
	if i > 0 {
		from = w.nameEnds[i-1]
	}
	return w.names[from:w.nameEnds[i]]
}

// makeNames makes the names of calls serial to serial+nameChunk-1: the
// first formatted, each next one its predecessor's digits counted up by one.
func (w *Workload) makeNames(serial uint64) {
	b, ends := w.nameBuf[:0], w.nameEnds[:0]
	var buf [14]byte // 13 base-36 digits hold any uint64, and a carry one more
	digits := strconv.AppendUint(buf[:0], serial, 36)
	for range NameChunk {
		b = append(b, digits...)
		ends = append(ends, uint32(len(b)))
		digits = base36Next(digits)
	}
	w.names, w.nameFirst, w.nameEnds, w.nameBuf = string(b), serial, ends, b
}

// base36Next counts the base-36 number in d (lower-case digits, as
// strconv writes them) up by one, in place where it can, and returns it.
func base36Next(d []byte) []byte {
	for i := len(d) - 1; i >= 0; i-- {
		switch c := d[i]; c {
		case '9':
			d[i] = 'a'
			return d
		case 'z':
			d[i] = '0' // and carry
		default:
			d[i] = c + 1
			return d
		}
	}
	return append([]byte{'1'}, d...)
}

// tooManyInTurn is the error of a turn that drew more calls or subagents
// than the engine's limit.
func tooManyInTurn(what string, n int64, limit int) error {
	return fmt.Errorf("a turn drew %d %s, more than the %d that fit the memory budget: %w", n, what, limit, ErrTooLarge)
}

// llmCall generates a model call as a one-call turn's call, in *spare
// when it is not nil (callSlices).
func (w *Workload) llmCall(rng *rand.Rand, l *llmGen, serial *uint64, spare *CallSpare) []sched.Call {
	*serial++
	tokens := satmath.FromFloat[int64](l.tokens.Draw(rng))
	calls, metas := CallSlices(1, spare)
	meta := &metas[0]
	*meta = CallMeta{Tool: -1, Svc: l.svc, Counted: w.modelOnly, Client: w.ClientName(*serial)}
	meta.Output = min(satmath.FromFloat[int64](l.output.Draw(rng)), tokens)
	calls[0] = sched.Call{ID: "llm", Tool: "llm", Service: l.service, Tokens: tokens, Payload: meta}
	return calls
}

// llmAgain makes a model call again: a copy of prev's one call under a
// new client name, drawing nothing; in *spare when it is not nil
// (callSlices).
func (w *Workload) llmAgain(prev []sched.Call, serial *uint64, spare *CallSpare) []sched.Call {
	*serial++
	calls, metas := CallSlices(1, spare)
	metas[0] = *prev[0].Payload.(*CallMeta)
	metas[0].Client = w.ClientName(*serial)
	calls[0] = prev[0]
	calls[0].Payload = &metas[0]
	return calls
}

// grow adds a model call's context growth at iteration i (from 1) to its
// tokens, all of it input: (i−1) × batch × growth more, an iteration
// returning batch turns' results.
func grow(calls []sched.Call, l *llmGen, i, batch int) {
	if l.growth > 0 && i > 1 {
		calls[0].Tokens = satmath.Add(calls[0].Tokens, satmath.Mul(l.growth, int64(i-1)*int64(batch)))
	}
}

// interarrival draws the gap to the next open-model arrival, saturated: a
// gap too long for a Duration is the longest one.
func (w *Workload) interarrival(rng *rand.Rand) time.Duration {
	rate := w.sc.Workload.ArrivalRate
	if w.sc.Workload.Arrival == scenarios.ArrivalConstant {
		return satmath.FromFloat[time.Duration](float64(time.Second) / rate)
	}
	return satmath.FromFloat[time.Duration](rng.ExpFloat64() / rate * float64(time.Second))
}

// ServiceIndex returns the position of the named service in the scenario,
// or for a route its first deployment's: where its calls are counted, for
// costs and estimates, though the engine sends each attempt to the
// deployment the scheduler picks (sched.Action.Deployment).
func ServiceIndex(sc *scenarios.Scenario, name string) int {
	if r := sc.Route(name); r != nil && len(r.Deployments) > 0 {
		name = r.Deployments[0]
	}
	for i := range sc.Services {
		if sc.Services[i].Name == name {
			return i
		}
	}
	return -1
}

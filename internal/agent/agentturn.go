package agent

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/simbench/simbench/sched"
)

// AgentTurn is one agent turn: an optional model call, then the tool
// calls, then (multi-agent) the subagents; it ends when its last part ends.
// A turn reused for a later one (recycle) gets its turnState afresh and
// keeps the rest, storage that each turn writes whole before it reads it:
// that spares some 95 instructions a turn against zeroing all 464 bytes
// (callgrind, M/M/20), and the pointers' write barriers while the
// collector marks.
type AgentTurn struct {
	TurnState
	pcg  rand.PCG  // the turn's own stream, kept here to save an allocation (seeded at the turn's start)
	rand rand.Rand // rng's Rand, kept here for the same reason
	rng  *rand.Rand
	one  [1]*AgentPart // active's first backing array
	// call holds the turn's first one-call part's call and meta, while
	// spare.one points to it (callSlices, whose callers write both
	// whole): one-call turns cost no allocation for their call either.
	call OneCall
}

// TurnState is what a turn starts afresh with.
type TurnState struct {
	// Proc is the index, from 0, of the workload process (and so of the
	// scheduler) the turn runs on; Start when the turn began, in run time.
	Proc    int
	Session int    // -1 in the open model
	No      uint64 // the turn's number in the run, from 1
	Start   time.Duration
	active  []*AgentPart // submitted and not yet finished
	// first is the turn's first part (unused while its turn is nil) and
	// agentTurn.one is active's first backing array: a turn of one part at
	// a time costs no allocation beyond the turn itself. Parts counts the
	// turn's parts submitted and not yet detached.
	first     AgentPart
	spare     CallSpare
	Parts     int
	cancelled bool
	failed    bool
	// DailyFailedFast marks a turn with a call that gave up at its first
	// daily-quota 429 (results.DailyQuota.FailedFastTurns). It sits in
	// the padding after failed: a turn costs no more memory for it.
	DailyFailedFast bool
	// Good counts the turn's tool calls that succeeded: the answered
	// goodput when the turn is answered in full.
	Good int
	// sessionTurn is the turn's number in its session, from 1 (1 in the
	// open model): the iteration its model call's context has grown to.
	sessionTurn int
	// spent is the tokens of every call the turn submitted, its subagents'
	// included; reserved the token budgets of the subagents it spawned
	// (orchestrator_budget).
	spent, reserved int64
	// model is the turn's own stream of model-success draws, seeded at
	// its first; tries counts its model turns made again; Abandoned marks
	// a turn whose task the model's failure abandoned.
	model       rand.PCG
	tries       int
	modelSeeded bool
	Abandoned   bool
	// Late counts the turn's parts that left it at their progressive join
	// and whose sched turns still run (fold) or are being cancelled
	// (drop): their calls and call metas are the turn's storage, and the
	// scheduler still answers them tagged with their part.
	Late int32
	// Ended and Held are the driver's: the turn's OpEnd was carried out,
	// and the references to it the driver still holds (pending cancels).
	// A driver releases an ended turn once neither it nor the scheduler
	// holds any reference to it (release).
	Ended bool
	Held  int32
}

// AgentPart is one sched turn of an agent turn: what to submit, and the
// driver's handle on it.
type AgentPart struct {
	// Turn is the agent turn the part belongs to.
	Turn *AgentTurn
	Kind uint8 // partLLM, partTools, partSubLLM, partSubTools
	// Joined marks a part its turn has moved on from at its progressive
	// join, whose late results are only billed; join is how many of a
	// tools part's calls must succeed before its turn moves on
	// (progressive_join; 0: all, and the part ends when its sched turn
	// does), answers how many have. counted marks a part whose calls
	// count among the run's calls (callMeta.counted). They fit in the
	// padding after kind: a part costs no more memory for them (a turn
	// has at most scenarios.MaxCallsPerTurn calls). Joined, Counted and
	// Join are exported for the drivers; answers is not.
	Joined  bool
	Counted bool
	Join    uint16
	answers uint16
	sub     *subagent
	At      time.Duration // when it was submitted
	Calls   []sched.Call
	Budget  int64 // the sched turn's token budget (0: none)
	// Id is the sched turn a virtual driver submitted it as.
	Id sched.TurnID
}

// The kinds of part.
const (
	partLLM uint8 = iota
	partTools
	partSubLLM
	PartSubTools
)

// SchedTurn is the part as a sched.Turn tagged tag.
func (p *AgentPart) SchedTurn(tag any) sched.Turn {
	return sched.Turn{Calls: p.Calls, TokenBudget: p.Budget, Tag: tag}
}

// subagent is one subagent of a multi-agent turn.
type subagent struct {
	iteration int
	spent     int64
}

// maxSpareTurns bounds the ended turns kept for reuse.
const maxSpareTurns = 256

// idle reports whether nothing of turn t can still run or be answered:
// its OpEnd was carried out, the driver holds no reference to it (no
// pending cancel) and every part's sched turn is done, the late ones of
// its progressive joins included.
func (t *AgentTurn) idle() bool {
	return t.Ended && t.Held == 0 && t.Late == 0 && t.Parts == 0
}

// Release gives turn t back for a later turn to reuse (recycle) once it is
// idle; a driver calls it whenever one of idle's conditions clears.
func (a *AgentLoop) Release(t *AgentTurn) {
	if t.idle() {
		a.Recycle(t)
	}
}

// Recycle takes back turn t, idle, for a later turn to reuse. Reusing a
// turn that can still run would hand its late results, its calls' metas
// and its first part to the next turn: that is a bug of the driver's, and
// recycle panics rather than let a run count one turn's answers as
// another's.
func (a *AgentLoop) Recycle(t *AgentTurn) {
	if !t.idle() {
		panic(fmt.Sprintf("sim: turn %d reused while it can still run (ended %v, %d cancels pending, %d parts running, %d late)",
			t.No, t.Ended, t.Held, t.Parts, t.Late))
	}
	t.Ended = false // a second recycle of t, before its reuse, panics too
	if len(a.SpareTurns) < maxSpareTurns {
		a.SpareTurns = append(a.SpareTurns, t)
	}
}

// Package agent is the one sans-IO agent state machine both engines drive
// (AgentLoop): sessions, turns, subagents, think times, budgets, the stop
// rules, joins and the cap on calls per turn. The driver hands it the
// time of each event and carries out the operations it returns (AgentOp:
// submit a call, wake at a time, cancel, end a turn); it reads no clock,
// does no I/O and starts no goroutine, so the virtual engine (sim) and the
// live runtime (live) run the same agents.
package agent

// Package live runs scenarios in real time: the same agent state machine
// (internal/agent) and sched core the simulator drives, here each part on
// a sched.Runner with real HTTP against fakeapi servers on 127.0.0.1
// (RunLive). It owns what the virtual engine may not do: goroutines,
// servers, OS processes (a fleet's members, started through
// LiveOptions.Worker, and RunMember, which a member runs), the rendezvous
// of a fleet's members on Redis, the production quota path on a real
// Redis, and the network delay slept rather than simulated. Its figures
// are the collectors' (internal/collect), from the configuration the
// simulator uses (internal/setup), so a live run and a virtual run of a
// scenario compare figure by figure; a live run compares itself with its
// virtual twin and says where they disagree. Under more load than the
// machine keeps, a run holds its calls in flight and its connections to
// what its memory budget allows (LiveInFlight), counts the calls it could
// not send, and stops once it is GiveUpBehind behind (liveload.go).
package live

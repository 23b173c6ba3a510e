// Package setup translates a scenario into the configurations the
// programs that run it are built from: the scheduler's (SchedConfig), the
// fake services' (ModelConfig, ServeConfig, ModelEvents, AgentConfig), a
// scenario played at another time scale (Scale), and the figures that
// describe it in results (LimitsOf, EventSpans, RetryText, Loads). The
// simulator, the live runtime, serve, check and decision all build theirs
// here, so they cannot drift apart. It runs nothing and reads no clock.
package setup

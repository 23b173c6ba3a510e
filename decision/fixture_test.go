package decision

import "time"

// tier3Service is the tier3 scenario's one service, as Recommend's input.
func tier3Service() Service {
	return Service{
		Name: "llm", RPM: 10000, TPM: 10_000_000, TokensPerCall: 1000,
		MeanLatency: 550 * time.Millisecond, CallsPerTurn: 8, Headroom: 0.7,
	}
}

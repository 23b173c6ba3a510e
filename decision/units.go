package decision

import (
	"github.com/simbench/simbench/internal/numfmt"
	"github.com/simbench/simbench/scenarios"
)

// PerSecond reports whether svc writes its binding request limit per
// second (key rps, with no lower rpm), so that rates about it are
// answered in requests/s, the unit the file used; nil is per minute.
func PerSecond(svc *scenarios.Service) bool {
	return svc != nil && svc.RequestsPerSecond > 0 && (svc.RequestsPerMinute == 0 || svc.RequestsPerSecond*60 <= svc.RequestsPerMinute)
}

// RateText writes a request rate of rpm requests per minute about svc in
// the unit svc's file used: "5 requests/s" for a service written rps = 5,
// else "300 requests/min".
func RateText(svc *scenarios.Service, rpm float64) string {
	return numfmt.Rates(rpm, 0, PerSecond(svc))
}

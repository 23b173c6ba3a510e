package fakeapi

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/simbench/simbench/spec"
)

// WriteRoute is a path within a service whose requests are writes, and
// where each request names the resource it writes: see spec.WriteRoute,
// its type and its one validator, and spec.ParseResourceFrom, the one
// parser of its ResourceFrom.
type WriteRoute = spec.WriteRoute

// writeRoute is a WriteRoute ready to match.
type writeRoute struct {
	path string
	from spec.ResourceFrom
}

// writeRoutes returns the routes of c.WriteRoutes, then those of
// c.WritePaths (with the default resource); c is valid.
func writeRoutes(c *ServiceConfig) []writeRoute {
	out := make([]writeRoute, 0, len(c.WriteRoutes)+len(c.WritePaths))
	for _, rt := range c.WriteRoutes {
		out = append(out, writeRoute{path: strings.TrimRight(rt.Path, "/"), from: rt.ResourceFrom})
	}
	for _, p := range c.WritePaths {
		out = append(out, writeRoute{path: strings.TrimRight(p, "/")})
	}
	return out
}

// matchRoute returns the first route path is on or below, or nil.
func matchRoute(routes []writeRoute, path string) *writeRoute {
	for i := range routes {
		p := routes[i].path
		if rest, ok := strings.CutPrefix(path, p); ok && (rest == "" || rest[0] == '/') {
			return &routes[i]
		}
	}
	return nil
}

// key returns the resource key the route takes from a request to path
// with body, or "" when the route declares none or the request lacks it.
func (rt *writeRoute) key(r *http.Request, path string, body []byte) string {
	switch rt.from.Kind {
	case spec.ResourcePath:
		segs := strings.Split(strings.Trim(strings.TrimPrefix(path, rt.path), "/"), "/")
		if rt.from.Segment <= len(segs) {
			return segs[rt.from.Segment-1]
		}
	case spec.ResourceHeader:
		return strings.TrimSpace(r.Header.Get(rt.from.Name))
	case spec.ResourceJSON:
		var fields map[string]json.RawMessage
		if json.Unmarshal(body, &fields) != nil {
			return ""
		}
		v, ok := fields[rt.from.Name]
		if !ok || string(v) == "null" {
			return ""
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
		return string(v)
	}
	return ""
}

package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// WriteRoute is a path within a service whose requests are writes, as a
// scenario's tool of kind write declares it, and where each request names
// the resource it writes.
type WriteRoute struct {
	// Path is the route within the service, such as "/tools/save".
	// Requests to it and to paths below it ("/tools/save/doc-1") are
	// writes.
	Path string
	// ResourceFrom says where a request's resource key comes from:
	//
	//   - "path:N": the Nth path segment after Path, from 1 ("path:1" of
	//     "/tools/save/doc-1" on route "/tools/save" is "doc-1");
	//   - "json:FIELD": the top-level field FIELD of the JSON body (a string
	//     as is, any other value as its JSON text);
	//   - "header:NAME": the request header NAME;
	//   - "": the X-Simbench-Write header's value, else the body's
	//     "resource" field, else the path.
	//
	// A request that lacks the declared key falls back to "".
	ResourceFrom string
}

// resourceSource is a parsed WriteRoute.ResourceFrom.
type resourceSource struct {
	kind string // "", "path", "json" or "header"
	name string // the field or header name
	seg  int    // the path segment, from 1
}

// parseResourceFrom parses a WriteRoute.ResourceFrom.
func parseResourceFrom(s string) (resourceSource, error) {
	if s == "" {
		return resourceSource{}, nil
	}
	kind, arg, ok := strings.Cut(s, ":")
	if !ok || arg == "" {
		return resourceSource{}, fmt.Errorf("resource_from %q is not path:N, json:FIELD or header:NAME", s)
	}
	switch kind {
	case "path":
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 {
			return resourceSource{}, fmt.Errorf("resource_from %q: the path segment must be a whole number from 1", s)
		}
		return resourceSource{kind: kind, seg: n}, nil
	case "json", "header":
		return resourceSource{kind: kind, name: arg}, nil
	}
	return resourceSource{}, fmt.Errorf("resource_from %q is not path:N, json:FIELD or header:NAME", s)
}

// validateRoutes reports bad write routes.
func (c ServiceConfig) validateRoutes() []error {
	var errs []error
	for i, rt := range c.WriteRoutes {
		if !strings.HasPrefix(rt.Path, "/") {
			errs = append(errs, fmt.Errorf("fakeapi: service %q: write_routes[%d]: path %q does not start with /", c.Name, i, rt.Path))
		}
		if _, err := parseResourceFrom(rt.ResourceFrom); err != nil {
			errs = append(errs, fmt.Errorf("fakeapi: service %q: write_routes[%d]: %w", c.Name, i, err))
		}
	}
	return errs
}

// writeRoute is a WriteRoute ready to match.
type writeRoute struct {
	path string
	from resourceSource
}

// writeRoutes returns the routes of c.WriteRoutes, then those of
// c.WritePaths (with the default resource); c is valid.
func writeRoutes(c *ServiceConfig) []writeRoute {
	out := make([]writeRoute, 0, len(c.WriteRoutes)+len(c.WritePaths))
	for _, rt := range c.WriteRoutes {
		from, _ := parseResourceFrom(rt.ResourceFrom)
		out = append(out, writeRoute{path: strings.TrimRight(rt.Path, "/"), from: from})
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
	switch rt.from.kind {
	case "path":
		segs := strings.Split(strings.Trim(strings.TrimPrefix(path, rt.path), "/"), "/")
		if rt.from.seg <= len(segs) {
			return segs[rt.from.seg-1]
		}
	case "header":
		return strings.TrimSpace(r.Header.Get(rt.from.name))
	case "json":
		var fields map[string]json.RawMessage
		if json.Unmarshal(body, &fields) != nil {
			return ""
		}
		v, ok := fields[rt.from.name]
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

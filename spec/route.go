package spec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/simbench/simbench/internal/names"
	"golang.org/x/net/http/httpguts"
)

// ResourceKind says where a served write request's resource key comes from.
type ResourceKind string

// The kinds of ResourceFrom, as written before the colon of a
// resource_from.
const (
	// ResourceDefault takes the X-Simbench-Write header's value, else the
	// body's "resource" field, else the path.
	ResourceDefault ResourceKind = ""
	// ResourcePath takes the Nth path segment after the route's path.
	ResourcePath ResourceKind = "path"
	// ResourceJSON takes a top-level field of the JSON body.
	ResourceJSON ResourceKind = "json"
	// ResourceHeader takes a request header.
	ResourceHeader ResourceKind = "header"
)

// ResourceFrom is a parsed resource_from: where a served write request's
// resource key comes from. The zero value is the server's default
// (ResourceDefault). ParseResourceFrom is the one parser, Problem the one
// validator; a value ParseResourceFrom returns has no Problem.
type ResourceFrom struct {
	// Kind says where the key comes from.
	Kind ResourceKind
	// Name is the JSON field (ResourceJSON) or the header
	// (ResourceHeader); empty for the other kinds.
	Name string
	// Segment is the path segment after the route's path, from 1
	// (ResourcePath; "path:1" of "/tools/save/doc-1" on the route
	// "/tools/save" is "doc-1"); 0 for the other kinds.
	Segment int
}

// ParseResourceFrom parses a resource_from as a scenario file writes it:
// "path:N" (N a whole number from 1), "json:FIELD" (FIELD free of control
// characters), "header:NAME" (NAME an HTTP header name) or "" (the
// default). The error says what is wrong with s, as a Problem's Msg does
// (without the key).
func ParseResourceFrom(s string) (ResourceFrom, error) {
	if s == "" {
		return ResourceFrom{}, nil
	}
	kind, arg, _ := strings.Cut(s, ":")
	r := ResourceFrom{Kind: ResourceKind(kind), Name: arg}
	switch r.Kind {
	case ResourceDefault: // ":" or ":x", not the empty default
		return ResourceFrom{}, fmt.Errorf("%q is not \"path:N\", \"json:FIELD\" or \"header:NAME\"", s)
	case ResourcePath:
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 {
			n = 0 // not a segment: problem says so
		}
		r = ResourceFrom{Kind: ResourcePath, Segment: n}
	}
	if msg := r.problem(s); msg != "" {
		return ResourceFrom{}, errors.New(msg)
	}
	return r, nil
}

// Problem says what is wrong with r, or "" (r written as its String, then
// what is wrong with it).
func (r ResourceFrom) Problem() string { return r.problem(r.String()) }

// problem says what is wrong with r, written as text in a file.
func (r ResourceFrom) problem(text string) string {
	notAForm := fmt.Sprintf("%q is not \"path:N\", \"json:FIELD\" or \"header:NAME\"", text)
	switch r.Kind {
	case ResourceDefault:
		if r.Name != "" || r.Segment != 0 {
			return notAForm
		}
	case ResourcePath:
		if r.Segment < 1 || r.Name != "" {
			return fmt.Sprintf("%q: the path segment must be a whole number from 1, like \"path:1\"", text)
		}
	case ResourceHeader, ResourceJSON:
		switch {
		case r.Name == "" || r.Segment != 0:
			return notAForm
		case r.Kind == ResourceHeader && !httpguts.ValidHeaderFieldName(r.Name):
			return fmt.Sprintf("%q: %q is not an HTTP header name (letters, digits and !#$%%&'*+-.^_`|~, no space, colon or control character)", text, r.Name)
		case r.Kind == ResourceJSON && names.Text(r.Name) != "":
			return fmt.Sprintf("%q: the field %s", text, names.Text(r.Name))
		}
	default:
		return notAForm
	}
	return ""
}

// String returns r as a scenario file writes it ("" for the default), so
// that ParseResourceFrom(r.String()) is r for every r without a Problem.
func (r ResourceFrom) String() string {
	switch r.Kind {
	case ResourceDefault:
		return ""
	case ResourcePath:
		return string(r.Kind) + ":" + strconv.Itoa(r.Segment)
	}
	return string(r.Kind) + ":" + r.Name
}

// WriteRoute is a path within a service whose requests are writes, as a
// scenario's tool of kind write declares it, and where each request names
// the resource it writes.
type WriteRoute struct {
	// Path is the route within the service, such as "/tools/save".
	// Requests to it and to paths below it ("/tools/save/doc-1") are
	// writes.
	Path string
	// ResourceFrom says where a request's resource key comes from (the
	// zero value: the X-Simbench-Write header's value, else the body's
	// "resource" field, else the path). A request that lacks the declared
	// key falls back to "".
	ResourceFrom ResourceFrom
}

// Problems returns what is wrong with the route: its path must start with
// "/" and its ResourceFrom have no Problem. Keys are "path" and
// "resource_from".
func (rt WriteRoute) Problems() []Problem {
	ps := &problems{}
	if !strings.HasPrefix(rt.Path, "/") {
		ps.add("path", "%q does not start with /", rt.Path)
	}
	if msg := rt.ResourceFrom.Problem(); msg != "" {
		ps.add("resource_from", "%s", msg)
	}
	return ps.list
}

// MarshalText writes r as a scenario file writes it (String), so that r
// encodes in JSON as the text it was parsed from.
func (r ResourceFrom) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText parses text with ParseResourceFrom.
func (r *ResourceFrom) UnmarshalText(text []byte) error {
	v, err := ParseResourceFrom(string(text))
	if err != nil {
		return fmt.Errorf("spec: resource_from %w", err)
	}
	*r = v
	return nil
}

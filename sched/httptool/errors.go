package httptool

import (
	"net/http"
	"strconv"
)

// StatusError is the error of an outcome whose response had a status other
// than 2xx. Callers branch on the outcome's Class; StatusError carries the
// details for messages and logs.
type StatusError struct {
	// Status is the HTTP status code.
	Status int
	// Code is the provider's error code ("insufficient_quota",
	// "context_length_exceeded"), else its error type ("rate_limit_error");
	// empty when the body carried neither.
	Code string
	// Message is the body's error message, or the body's text when it has
	// none, with whitespace collapsed and cut to 200 bytes.
	Message string
}

// Error returns "httptool: HTTP 429 Too Many Requests: message (code)".
func (e *StatusError) Error() string {
	s := "httptool: HTTP " + strconv.Itoa(e.Status)
	if text := http.StatusText(e.Status); text != "" {
		s += " " + text
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	return s
}

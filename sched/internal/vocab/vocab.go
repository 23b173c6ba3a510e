// Package vocab holds Vocab, the names of one of the scheduler's
// enumerations (backoff policies, fan-out and join modes, …): the one
// place a name is spelled, read by String, the Parse functions, the lists
// of choices and the text encodings of package sched.
package vocab

import "fmt"

// Vocab is the names of one enumeration's values, as scenario files write
// them and text shows them: Names[v] names value v, and "" leaves a value
// unnamed (a placeholder such as JoinDefault's zero, or an invalid zero).
// The named values from First on are the ones a caller picks from. Each
// enumeration's names are written once, beside its constants; String,
// Parse, the list of choices and the text encoding all read them.
type Vocab[T ~uint8] struct {
	What  string   // the enumeration, in errors and unnamed values' text
	Names []string // by value
	First T        // the first value offered as a choice
}

// Name returns the name of x, or what(N) for a value without one.
func (v *Vocab[T]) Name(x T) string {
	if int(x) < len(v.Names) && v.Names[x] != "" {
		return v.Names[x]
	}
	return fmt.Sprintf("%s(%d)", v.What, uint8(x))
}

// Choices returns the values offered as choices, in order.
func (v *Vocab[T]) Choices() []T {
	var out []T
	for i := int(v.First); i < len(v.Names); i++ {
		if v.Names[i] != "" {
			out = append(out, T(i))
		}
	}
	return out
}

// ChoiceNames returns the names of choices, in order.
func (v *Vocab[T]) ChoiceNames() []string {
	var out []string
	for _, x := range v.Choices() {
		out = append(out, v.Names[x])
	}
	return out
}

// Parse returns the value named s: any named value, choice or placeholder,
// so that every value MarshalText writes reads back.
func (v *Vocab[T]) Parse(s string) (T, error) {
	for i, n := range v.Names {
		if n != "" && n == s {
			return T(i), nil
		}
	}
	return 0, fmt.Errorf("sched: unknown %s %q (want one of %v)", v.What, s, v.ChoiceNames())
}

// Marshal returns x's name as text, refusing a value without one.
func (v *Vocab[T]) Marshal(x T) ([]byte, error) {
	if int(x) < len(v.Names) && v.Names[x] != "" {
		return []byte(v.Names[x]), nil
	}
	return nil, fmt.Errorf("sched: %s %d has no name", v.What, uint8(x))
}

// Unmarshal sets *x to the value text names.
func (v *Vocab[T]) Unmarshal(x *T, text []byte) error {
	y, err := v.Parse(string(text))
	if err != nil {
		return err
	}
	*x = y
	return nil
}

package sched

import "fmt"

// vocab is the names of one enumeration's values, as scenario files write
// them and text shows them: names[v] names value v, and "" leaves a value
// unnamed (a placeholder such as JoinDefault's zero, or an invalid zero).
// The named values from first on are the ones a caller picks from. Each
// enumeration's names are written once, beside its constants; String,
// Parse, the list of choices and the text encoding all read them.
type vocab[T ~uint8] struct {
	what  string   // the enumeration, in errors and unnamed values' text
	names []string // by value
	first T        // the first value offered as a choice
}

// name returns the name of x, or what(N) for a value without one.
func (v *vocab[T]) name(x T) string {
	if int(x) < len(v.names) && v.names[x] != "" {
		return v.names[x]
	}
	return fmt.Sprintf("%s(%d)", v.what, uint8(x))
}

// choices returns the values offered as choices, in order.
func (v *vocab[T]) choices() []T {
	var out []T
	for i := int(v.first); i < len(v.names); i++ {
		if v.names[i] != "" {
			out = append(out, T(i))
		}
	}
	return out
}

// choiceNames returns the names of choices, in order.
func (v *vocab[T]) choiceNames() []string {
	var out []string
	for _, x := range v.choices() {
		out = append(out, v.names[x])
	}
	return out
}

// parse returns the value named s: any named value, choice or placeholder,
// so that every value MarshalText writes reads back.
func (v *vocab[T]) parse(s string) (T, error) {
	for i, n := range v.names {
		if n != "" && n == s {
			return T(i), nil
		}
	}
	return 0, fmt.Errorf("sched: unknown %s %q (want one of %v)", v.what, s, v.choiceNames())
}

// marshal returns x's name as text, refusing a value without one.
func (v *vocab[T]) marshal(x T) ([]byte, error) {
	if int(x) < len(v.names) && v.names[x] != "" {
		return []byte(v.names[x]), nil
	}
	return nil, fmt.Errorf("sched: %s %d has no name", v.what, uint8(x))
}

// unmarshal sets *x to the value text names.
func (v *vocab[T]) unmarshal(x *T, text []byte) error {
	y, err := v.parse(string(text))
	if err != nil {
		return err
	}
	*x = y
	return nil
}

package scenarios

import "strings"

// SessionClass is one class of the closed model's sessions (workload key
// classes): the sessions of an interactive agent and of a batch backfill
// sharing one key, say. Strategies with a priority table rank the classes.
type SessionClass struct {
	// Name names the class in priority tables and results.
	Name string
	// Sessions is how many of the workload's sessions are of the class;
	// the classes' sessions add up to Workload.Sessions. Sessions are
	// given classes in file order: the first class's come first.
	Sessions int
}

// Priority is one entry of a strategy's priority table, highest class
// first (sched.PriorityClass).
type Priority struct {
	// Class names a class of Workload.Classes.
	Class string
	// Share is the class's guaranteed minimum fraction of each service's
	// admissions while its calls wait, in [0, 1] (0 when unset); the
	// shares of a table sum to at most 1.
	Share float64
}

// ClassOf returns the index in Classes of closed-model session s's class
// (0 without classes).
func (w *Workload) ClassOf(s int) int {
	for i, c := range w.Classes {
		if s < c.Sessions {
			return i
		}
		s -= c.Sessions
	}
	return 0
}

// decodeClasses reads the workload's session classes: unique names,
// sessions that add up to the workload's.
func (d *decoder) decodeClasses(t *table, w *Workload) []SessionClass {
	entries := t.tables("classes")
	if len(entries) == 0 {
		if t.has("classes") {
			t.add("classes", "is empty; list the session classes, like classes = [ { name = \"interactive\", sessions = 4 }, { name = \"batch\", sessions = 16 } ]")
		}
		return nil
	}
	var out []SessionClass
	seen := map[string]bool{}
	sum := 0
	for _, ct := range entries {
		if ct == nil {
			continue
		}
		var c SessionClass
		if name, ok := ct.str("name"); ok {
			switch {
			case strings.TrimSpace(name) == "":
				ct.add("name", "is empty; name the class, like name = \"interactive\"")
			case NameProblem("class", name) != "":
				ct.add("name", "%s", NameProblem("class", name))
			case seen[name]:
				ct.add("name", "class %q is listed twice; give each class a unique name", name)
			}
			seen[name] = true
			c.Name = name
		} else if !ct.has("name") {
			d.add(ct.path, "missing name; name the class, like name = \"interactive\"")
		}
		if n, ok := ct.integer("sessions", 1, MaxSessions, "each session is held in memory from the start of the run"); ok {
			c.Sessions = int(n)
			sum += c.Sessions
		} else if !ct.has("sessions") {
			d.add(ct.path, "missing sessions; say how many of the workload's sessions are of the class, like sessions = 4")
		}
		ct.finish()
		out = append(out, c)
	}
	switch {
	case !t.has("sessions"):
		t.add("classes", "only applies to the closed model; set sessions = N, the classes' sessions added up")
	case w.Sessions > 0 && sum != w.Sessions:
		t.add("classes", "give %d sessions in all, but sessions = %d; make them add up", sum, w.Sessions)
	}
	return out
}

// decodePriority reads a strategy's priority table: every class of the
// workload once, highest first, shares summing to at most 1.
func (d *decoder) decodePriority(sc *Scenario, t *table) []Priority {
	if !t.has("priority") {
		return nil
	}
	entries := t.tables("priority")
	classes := sc.Workload.Classes
	if len(classes) == 0 {
		t.add("priority", "ranks the workload's session classes, and it has none; add classes = [ { name = \"interactive\", sessions = 4 }, … ] to [workload] or remove priority")
		return nil
	}
	var out []Priority
	listed := map[string]bool{}
	sum := 0.0
	for _, pt := range entries {
		if pt == nil {
			continue
		}
		var p Priority
		if name, ok := pt.str("class"); ok {
			known := false
			for _, c := range classes {
				known = known || c.Name == name
			}
			switch {
			case !known:
				pt.add("class", "names class %q, which [workload] classes does not list (it lists %s)", name, classNames(classes))
			case listed[name]:
				pt.add("class", "class %q is ranked twice; list each class once, highest first", name)
			}
			listed[name] = true
			p.Class = name
		} else if !pt.has("class") {
			d.add(pt.path, "missing class; name a workload class, like class = \"interactive\"")
		}
		if f, ok := pt.fraction("share"); ok {
			p.Share = f
			sum += f
		}
		pt.finish()
		out = append(out, p)
	}
	var missing []string
	for _, c := range classes {
		if !listed[c.Name] {
			missing = append(missing, `"`+c.Name+`"`)
		}
	}
	if len(missing) > 0 {
		t.add("priority", "does not rank class %s; list every class of [workload] classes once, highest first", strings.Join(missing, ", "))
	}
	if sum > 1+1e-9 {
		t.add("priority", "shares add up to %.4g, more than 1; each is a guaranteed fraction of the admissions, so together they can be at most all of them", sum)
	}
	return out
}

// classNames lists the classes' names for an error message.
func classNames(cs []SessionClass) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = `"` + c.Name + `"`
	}
	return strings.Join(names, ", ")
}

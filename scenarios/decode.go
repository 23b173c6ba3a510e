package scenarios

import (
	"fmt"
	"math"
)

// decodeScenario builds a Scenario from the tree toml.Decode produced.
// Services are decoded before tools, and tools before the workload, so that
// references can be checked as they are read.
func (d *decoder) decodeScenario(root map[string]any, defaultName string) *Scenario {
	t := &table{d: d, m: root}
	sc := &Scenario{Name: defaultName}
	d.decodeHead(sc, t)
	d.decodeServices(sc, t)
	d.decodeRoutes(sc, t)
	d.decodeTools(sc, t)
	if wt := t.sub("workload"); wt != nil {
		sc.Workload = d.decodeWorkload(sc, wt)
	} else if !t.has("workload") {
		t.add("workload", "missing; add a [workload] table saying what the agents do")
	}
	d.decodeStrategies(sc, t)
	if tt := t.sub("thresholds"); tt != nil {
		sc.Thresholds = d.decodeThresholds(sc, tt)
	}
	sc.Events = d.decodeEvents(sc, t)
	if ct := t.sub("check"); ct != nil {
		sc.Check = d.decodeCheck(sc, ct)
	}
	if sc.Objective == ObjectiveCost && !anyPriced(sc) {
		t.add("objective", "is %q but no service has a price; give a service price_per_1k_input or price_per_1k_output, or use %q", ObjectiveCost, ObjectiveP95)
	}
	t.finish()
	return sc
}

// decodeHead reads the scenario's own keys: name, description, seed,
// duration and objective.
func (d *decoder) decodeHead(sc *Scenario, t *table) {
	if name, ok := t.str("name"); ok {
		if msg := ScenarioNameProblem(name); msg != "" {
			t.add("name", "%s", msg)
		} else {
			sc.Name = name
		}
	}
	if desc, ok := t.str("description"); ok {
		if msg := TextProblem(desc); msg != "" {
			t.add("description", "%s", msg)
		}
		sc.Description = desc
	}
	if seed, ok := t.integer("seed", 0, math.MaxInt64, ""); ok {
		sc.Seed = uint64(seed)
	}
	if dur, ok := t.duration("duration"); ok {
		if dur == 0 {
			t.add("duration", "is 0; set the virtual time a run covers, like duration = \"10m\"")
		}
		sc.Duration = dur
	} else if !t.has("duration") {
		t.add("duration", "missing; set the virtual time a run covers, like duration = \"10m\"")
	}

	sc.Objective = enum(t, "objective", "", Objectives...)
}

// decodeServices reads the [services.NAME] tables, at most MaxServices.
func (d *decoder) decodeServices(sc *Scenario, t *table) {
	// A missing or empty table is reported here; one of the wrong type was
	// reported when it was read, so it gets no second problem.
	reported := len(d.problems)
	if st := t.sub("services"); st != nil {
		names := st.keys()
		if len(names) > MaxServices {
			t.add("services", "%d services; a scenario may have at most %d (each one is simulated with timelines of its own in every strategy, and reported): model the services the agent's turns wait on, and fold the rest into one", len(names), MaxServices)
		}
		for _, name := range names {
			if len(name) > MaxNameLength {
				st.add(name, "%s", NameProblem("service", name))
			}
			if svc := st.sub(name); svc != nil {
				d.services[name] = len(sc.Services)
				sc.Services = append(sc.Services, d.decodeService(svc, name))
			}
		}
	}
	if len(sc.Services) == 0 && len(d.problems) == reported {
		t.add("services", "no services; add a [services.NAME] table with its limits")
	}
}

// decodeTools reads the [tools.NAME] tables.
func (d *decoder) decodeTools(sc *Scenario, t *table) {
	if tt := t.sub("tools"); tt != nil {
		for _, name := range tt.keys() {
			if msg := NameProblem("tool", name); msg != "" {
				tt.add(name, "%s", msg)
			}
			if tool := tt.sub(name); tool != nil {
				d.tools[name] = len(sc.Tools)
				sc.Tools = append(sc.Tools, d.decodeTool(sc, tool, name))
			}
		}
	}
}

// decodeStrategies reads the [[strategy]] tables: at least one, at most
// MaxStrategies.
func (d *decoder) decodeStrategies(sc *Scenario, t *table) {
	reported := len(d.problems)
	strategies := t.tables("strategy")
	if len(strategies) == 0 && len(d.problems) == reported {
		t.add("strategy", "no strategies; add at least one [[strategy]] table with a name")
	}
	if len(strategies) > MaxStrategies {
		t.add("strategy", "%d strategies; a scenario may have at most %d (each one is simulated, tabled and drawn): compare fewer, or vary one strategy's cap with simbench sweep", len(strategies), MaxStrategies)
		strategies = nil
	}
	for _, st := range strategies {
		if st != nil {
			sc.Strategies = append(sc.Strategies, d.decodeStrategy(sc, st))
		}
	}
}

// anyPriced reports whether sc prices a service.
func anyPriced(sc *Scenario) bool {
	for i := range sc.Services {
		if sc.Services[i].Priced() {
			return true
		}
	}
	return false
}

// checkService reports a reference to a service the scenario lacks.
func (d *decoder) checkService(sc *Scenario, key, name string) {
	if _, ok := d.services[name]; ok {
		return
	}
	names := d.serviceList(sc)
	if near := d.suggest.Closest(name, names); near != "" {
		d.add(key, "unknown service %q; did you mean %s?", name, near)
	} else if len(names) == 0 {
		d.add(key, "unknown service %q; define it in a [services.%s] table", name, name)
	} else {
		d.add(key, "unknown service %q; define [services.%s] or use one of %s", name, name, quoteSome(names))
	}
}

func (d *decoder) checkTool(sc *Scenario, key, name, what string) bool {
	if _, ok := d.tools[name]; ok {
		return true
	}
	names := d.toolList(sc)
	if near := d.suggest.Closest(name, names); near != "" {
		d.add(key, "unknown %s %q; did you mean %s?", what, name, near)
	} else {
		d.add(key, "unknown %s %q; define [tools.%s] or use one of %s", what, name, name, quoteSome(names))
	}
	return false
}

// serviceList returns the names of the services decoded so far, in file
// order; the list is built again only when a service was added since.
func (d *decoder) serviceList(sc *Scenario) []string {
	if len(d.serviceNames) != len(sc.Services) {
		d.serviceNames = make([]string, len(sc.Services))
		for i, s := range sc.Services {
			d.serviceNames[i] = s.Name
		}
	}
	return d.serviceNames
}

// toolList returns the names of the tools decoded so far, as serviceList.
func (d *decoder) toolList(sc *Scenario) []string {
	if len(d.toolNames) != len(sc.Tools) {
		d.toolNames = make([]string, len(sc.Tools))
		for i, t := range sc.Tools {
			d.toolNames[i] = t.Name
		}
	}
	return d.toolNames
}

func (d *decoder) serviceHint(sc *Scenario) string {
	if names := d.serviceList(sc); len(names) > 0 {
		return fmt.Sprintf("%q (one of %s)", names[0], quoteSome(names))
	}
	return `"NAME" and define [services.NAME]`
}

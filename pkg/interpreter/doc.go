// Package interpreter compiles users' ResourceInterpreters into health.Interpreters: the declarative parts
// (replicas, statusFeedback, health, aggregation, dependencies, retain) are validated and their CEL
// expressions compiled once per interpreter generation (Cache), and every part left out falls back to the
// built-in interpretation of the kind. Resolve builds the set the manager uses and says which interpreters
// it does not use and why. Pure: no client, no context, no I/O.
//
// # CEL
//
// spec.health.expression sees
//
//	object  map(string, dyn)  the manifest as delivered to the cluster (a split manifest carries the share)
//	status  map(string, dyn)  the reported feedback values by name: int, string, bool, or the decoded JSON of
//	                          a JsonRaw value; a name the agent did not report is absent (use has(status.x))
//	share   int               the cluster's share of the first replicas field, -1 when not split
//
// and returns a state, as a string, or a map {'state': ..., 'reason': ..., 'message': ...} whose reason
// (CamelCase, the state's name when left out) and message are optional. States: Healthy, Progressing,
// Degraded, Completed (healthy and finished) and Failed (degraded and finished). Both branches of a
// conditional have one type: return maps throughout, or wrap one branch in dyn().
//
// spec.dependencies.expression sees object (the manifest as in the template, or as a cluster's overrides leave
// it) and returns a list of maps {'kind': 'ConfigMap' | 'Secret' | 'ServiceAccount', 'name': ...}.
//
// Both have CEL's standard library, optional types (object.?spec.?replicas.orValue(1)), and cel-go's strings
// and lists extensions (split, join, lowerAscii, flatten, distinct, sort, ...).
//
// # Cost
//
// An expression whose worst-case cost, as the CEL checker estimates it, is above celeval.CostBudget is refused
// with CostLimitExceeded. The estimate assumes every list and map of object and status to have at most
// celeval.EstimatedMaxItems entries and every string at most celeval.EstimatedMaxStringSize characters (a value
// whose type the checker does not know, most of object, counts as a list): two nested loops over a pod
// template's lists fit, three do not. One evaluation stops after celeval.MaxIterations loop steps whatever the
// data, and the manifest is then Degraded with InterpreterFailed. Evaluation is deterministic: no clock, no
// context.
package interpreter

// Package scoreagent is the reference score agent's controller: it runs on a managed cluster as an OCM
// addon, measures what the AddOnPlacementScoreGenerators addressed to it ask for (through the plugins of
// pkg/scoreagent), and writes the results to the AddOnPlacementScore of the same name, where OCM's Placement
// and a PlacementManifestWork's Score split read them. cmd/score-agent wires it from flags.
//
// # Where the generators come from
//
// The agent reads the generators from the hub namespace named like its cluster, with the addon's hub
// credentials, instead of receiving a copy through a ManifestWork. OCM's addon registration gives the agent
// a hub kubeconfig whose permissions are scoped to its cluster namespace, and the agent needs it anyway to
// write AddOnPlacementScores, as OCM's own score addons do; through a watch it sees a generator change at
// once rather than after a work round trip; and it writes the generator's status (Valid, Measured, the last
// scores) on the hub, where the administrator who wrote the generator looks. The manager's cache is
// restricted to that one namespace (cache.Options.DefaultNamespaces), so the agent lists and watches nothing
// else on the hub. A second client, to the managed cluster itself, lists its nodes and pods for the headroom
// plugin.
//
// # One reconcile
//
// Only generators whose spec.addOnPlacementSelector names this addon (--addon-name), in this namespace or
// none, are read. A reconcile gathers the generator and its AddOnPlacementScore, then:
//
//   - validates every score it asks for (the plugins' own checks, the SSRF guard for latency URLs, and that
//     validFor is longer than interval plus a measurement's worst case, so the scores are rewritten before
//     they expire) before measuring any: an invalid generator gets Valid False with
//     the reason (ProbeRefused, InvalidPlugin, Invalid) and a message saying why, Measured False (NotValid),
//     and no probe runs and no score is written;
//   - measures when it is due: the spec changed, the generator was not valid before, or spec.interval passed
//     since the last measurement (the agent's memory of it, else status.lastMeasuredTime after a restart,
//     then only while the AddOnPlacementScore exists). The agent's own writes do not wake it, and a
//     reconcile with nothing due writes nothing;
//   - writes the AddOnPlacementScore from the last measurement when it says something else (created owned by
//     the generator, so it goes with it; written again, without measuring, when someone deletes it): the
//     scores, and validUntil = the end of the measurement plus spec.validFor, so a cluster whose agent
//     stopped stops counting once it passes;
//   - writes the generator's status: Valid, Measured, lastMeasuredTime and status.scores with the raw
//     measurements; and requeues for the next measurement.
//
// A score that cannot be measured (its plugin returns an error: a redirect the guard refuses at run time, the
// nodes cannot be listed) is left out of the AddOnPlacementScore rather than kept at its old value beside
// fresh ones under one validUntil: OCM then counts it as a cluster without the score. The others are written,
// and Measured is False with reason MeasureFailed naming it. When no score could be measured, the
// AddOnPlacementScore is left as it is, and its old scores stop counting at their validUntil. A latency probe
// whose runs fail is not such an error: the runs count as the timeout (see package latency).
package scoreagent

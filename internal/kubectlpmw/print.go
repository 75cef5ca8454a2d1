package kubectlpmw

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"
	"sigs.k8s.io/yaml"
)

// Output formats of -o.
const (
	outputTable = ""
	outputWide  = "wide"
	outputYAML  = "yaml"
	outputJSON  = "json"
)

// checkOutput validates -o against the formats a command prints.
func checkOutput(o string, allowed ...string) error {
	for _, a := range allowed {
		if o == a {
			return nil
		}
	}
	names := make([]string, 0, len(allowed))
	for _, a := range allowed {
		if a != "" {
			names = append(names, a)
		}
	}
	return usageError("unknown output format %q: use -o %s", o, strings.Join(names, "|"))
}

// encode writes v as YAML or JSON.
func encode(w io.Writer, v any, format string) error {
	if format == outputJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	out, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// color is an ANSI colour of a table cell; none prints plain.
type color string

const (
	none   color = ""
	green  color = "32"
	yellow color = "33"
	red    color = "31"
)

// useColor reports whether w is a terminal and NO_COLOR (https://no-color.org) is not set.
func useColor(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

type cell struct {
	text  string
	color color
}

func plain(s string) cell { return cell{text: s} }

// table writes rows with columns padded to their widest cell, two spaces apart, as kubectl prints. Colours are
// added after padding, so escape codes never shift a column; trailing spaces are trimmed.
type table struct {
	rows  [][]cell
	color bool
}

func (t *table) add(cells ...cell) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer) error {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c.text))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		var line strings.Builder
		for i, c := range r {
			text := c.text
			if t.color && c.color != none && text != "" {
				text = "\x1b[" + string(c.color) + "m" + text + "\x1b[0m"
			}
			line.WriteString(text)
			if i < len(r)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c.text)+2))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// paint colours s when on is set.
func paint(on bool, c color, s string) string {
	if !on || c == none || s == "" {
		return s
	}
	return "\x1b[" + string(c) + "m" + s + "\x1b[0m"
}

// WriteStatus prints a report as text: the summary and conditions, then the table of clusters; wide adds the
// work's Available condition, whether the cluster is decided, who judged its health, and the health message.
func WriteStatus(w io.Writer, r StatusReport, wide, colored bool) error {
	var b strings.Builder
	ready := paint(colored, green, "Ready")
	if !r.Ready {
		ready = paint(colored, yellow, "not Ready")
	}
	fmt.Fprintf(&b, "PlacementManifestWork %s/%s: %s (generation %d, observed %d), placement %s\n",
		r.Namespace, r.Name, ready, r.Generation, r.ObservedGeneration, orDash(r.Placement))
	s := r.Summary
	fmt.Fprintf(&b, "Clusters: %d decided, %d available, %d progressing, %d degraded, %d applied\n",
		s.Total, s.Available, s.Progressing, s.Degraded, s.Applied)
	if ro := r.Rollout; ro != nil {
		fmt.Fprintf(&b, "Rollout: %d of %d updated, %d succeeded, %d failed", ro.Updated, ro.Total, ro.Succeeded, ro.Failed)
		if ro.CurrentGroup != "" {
			fmt.Fprintf(&b, ", group %s", ro.CurrentGroup)
		}
		b.WriteByte('\n')
	}
	if cur := r.CurrentRevision; cur != nil {
		fmt.Fprintf(&b, "Revision: current %d (%s)", cur.Revision, cur.Name)
		if done := r.CompletedRevision; done != nil {
			fmt.Fprintf(&b, ", completed %d (%s)", done.Revision, done.Name)
		}
		b.WriteByte('\n')
	}
	if len(r.TemplateHashes) > 0 {
		short := make([]string, len(r.TemplateHashes))
		for i, h := range r.TemplateHashes {
			short[i] = shortHash(h)
		}
		fmt.Fprintf(&b, "Current template: %s\n", strings.Join(short, ", "))
	}
	for _, sp := range r.Splits {
		fmt.Fprintf(&b, "Split %s %s: total %d, placed %d, unplaced %d", splitName(sp.Kind, sp.Namespace, sp.Name), sp.FieldPath,
			sp.Total, sp.Placed, sp.Unplaced)
		if sp.FailedOver > 0 {
			fmt.Fprintf(&b, ", failed over %d", sp.FailedOver)
		}
		b.WriteByte('\n')
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "%s %s\n", paint(colored, yellow, "Note:"), n)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}

	if len(r.Conditions) > 0 {
		fmt.Fprintln(w)
		t := &table{color: colored}
		t.add(plain("CONDITION"), plain("STATUS"), plain("REASON"), plain("MESSAGE"))
		for _, c := range r.Conditions {
			st := cell{text: string(c.Status), color: green}
			switch {
			case c.Stale:
				st = cell{text: string(c.Status) + " (stale)", color: yellow}
			case c.Good:
			case c.Type == "Stalled":
				st.color = red
			default:
				st.color = yellow
			}
			t.add(plain(c.Type), st, plain(c.Reason), plain(oneLine(c.Message)))
		}
		if err := t.write(w); err != nil {
			return err
		}
	}

	fmt.Fprintln(w)
	t := &table{color: colored}
	if wide {
		t.add(plain("CLUSTER"), plain("WORK"), plain("DECIDED"), plain("APPLIED"), plain("AVAILABLE"), plain("HEALTH"),
			plain("REASON"), plain("SOURCE"), plain("SHARES"), plain("TEMPLATE"), plain("REVISION"), plain("MESSAGE"))
	} else {
		t.add(plain("CLUSTER"), plain("WORK"), plain("APPLIED"), plain("HEALTH"), plain("REASON"), plain("SHARES"), plain("TEMPLATE"), plain("REVISION"))
	}
	if len(r.Clusters) == 0 {
		t.add(plain("(none)"))
	}
	for _, c := range r.Clusters {
		name := c.Cluster
		if !c.Decided {
			name += " (leaving)"
		}
		tmpl := cell{}
		if c.TemplateHash != "" || c.Template != "" {
			tmpl.text = strings.TrimSpace(shortHash(c.TemplateHash) + " " + c.Template)
			if c.Template == TemplateOutdated {
				tmpl.color = yellow
			}
		}
		hc := cell{text: c.Health, color: healthColor(c.Health)}
		if wide {
			decided := "yes"
			if !c.Decided {
				decided = "no"
			}
			t.add(plain(name), plain(orDash(c.Work)), plain(decided), plain(orDash(c.Applied)), plain(orDash(c.Available)), hc,
				plain(c.Reason), plain(c.HealthSource), plain(shareText(c.Shares)), tmpl, plain(revisionText(c.Revision)), plain(oneLine(c.Message)))
		} else {
			t.add(plain(name), plain(orDash(c.Work)), plain(orDash(c.Applied)), hc, plain(c.Reason), plain(shareText(c.Shares)), tmpl,
				plain(revisionText(c.Revision)))
		}
	}
	return t.write(w)
}

// revisionText is a work's revision number, or "-" when none is known.
func revisionText(n int64) string {
	if n == 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

func healthColor(h string) color {
	switch h {
	case HealthAvailable:
		return green
	case HealthProgressing:
		return yellow
	case HealthDegraded:
		return red
	}
	return none
}

func splitName(kind, namespace, name string) string {
	if namespace != "" {
		name = namespace + "/" + name
	}
	if kind != "" {
		return kind + " " + name
	}
	return name
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

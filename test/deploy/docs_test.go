package deploy

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// reasonFiles hold the reason constants a user can meet in a PlacementManifestWork's status: condition reasons
// and unhealthy-cluster reasons (api), and the per-manifest health reasons (pkg/health).
var reasonFiles = []string{"api/v1alpha1/conditions.go", "pkg/health/interpret.go"}

// stringConstants returns the string constants of a Go file whose names start with prefix, by value.
func stringConstants(t *testing.T, rel, prefix string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, rel), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, prefix) || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				v, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				out[v] = name.Name
			}
		}
	}
	return out
}

// TestTroubleshootingCoversEveryReason fails when a condition type or reason constant is not explained in
// docs/troubleshooting.md (written as `Reason`).
func TestTroubleshootingCoversEveryReason(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "docs", "troubleshooting.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	total := 0
	for _, rel := range reasonFiles {
		for _, prefix := range []string{"Reason", "Condition"} {
			for value, name := range stringConstants(t, rel, prefix) {
				total++
				if !strings.Contains(doc, "`"+value+"`") {
					t.Errorf("docs/troubleshooting.md does not explain %s (%s.%s)", value, rel, name)
				}
			}
		}
	}
	if total < 20 {
		t.Fatalf("found only %d reason constants in %v: has the code moved?", total, reasonFiles)
	}
}

// exampleDocs are the docs whose YAML examples TestDocsExamplesApply applies, relative to the repository root.
var exampleDocs = []string{"README.md", "docs/install.md", "docs/operating.md", "docs/troubleshooting.md",
	"docs/migrating-from-manifestworkreplicaset.md", "docs/user-guide.md", "docs/reference.md", "docs/scores.md"}

// linkedDocs are README.md and every docs/*.md, relative to the repository root: the docs TestDocsLinks checks.
func linkedDocs(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	if len(out) < 10 {
		t.Fatalf("found only %v: have the docs moved?", out)
	}
	return out
}

var (
	linkRE        = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE     = regexp.MustCompile(`^#{1,6}\s+(.+?)\s*#*\s*$`)
	headingLinkRE = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// anchors returns the anchors GitHub gives the headings of a Markdown document (outside fenced code blocks):
// lower case, punctuation dropped, spaces turned into hyphens, and -1, -2, ... added to repeated ones.
func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for _, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			fence = trimmed[:3]
			continue
		}
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		text := headingLinkRE.ReplaceAllString(m[1], "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// TestDocsLinks checks every relative link of README.md and docs/*.md: the file or folder it points at exists,
// and an anchor (#section), in the same document or another Markdown file, is one of that document's headings.
func TestDocsLinks(t *testing.T) {
	for _, name := range linkedDocs(t) {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRE.FindAllStringSubmatch(string(data), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			target, anchor, _ := strings.Cut(link, "#")
			path := filepath.Join(root, name)
			if target != "" {
				path = filepath.Join(filepath.Dir(path), filepath.FromSlash(target))
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s links to %s, which does not exist", name, link)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			doc, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%s links to %s: %v", name, link, err)
				continue
			}
			if !anchors(string(doc))[anchor] {
				t.Errorf("%s links to %s, but %s has no heading with the anchor #%s", name, link, filepath.Base(path), anchor)
			}
		}
	}
}

var (
	makeCommandRE = regexp.MustCompile("`(?:[A-Z0-9_]+=\\S+ )*make ([^`]+)`")
	makeLineRE    = regexp.MustCompile(`(?m)^\s*(?:[A-Z0-9_]+=\S+\s+)*make\s+([^#\n]*)`)
	fencedRE      = regexp.MustCompile("(?s)```[a-z]*\n(.*?)```")
	quotedRE      = regexp.MustCompile(`"[^"]*"|'[^']*'`)
	makeTargetRE  = regexp.MustCompile(`(?m)^([a-zA-Z0-9][a-zA-Z0-9_.-]*):`)
)

// TestDocsMakeTargets fails when README.md or a doc names a make target the Makefile does not have, in inline
// code such as `make sandbox ARGS="..."` or on a line of a code block that runs make.
func TestDocsMakeTargets(t *testing.T) {
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]bool{}
	for _, m := range makeTargetRE.FindAllStringSubmatch(string(makefile), -1) {
		targets[m[1]] = true
	}
	named := 0
	for _, name := range linkedDocs(t) {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		commands := makeCommandRE.FindAllStringSubmatch(string(data), -1)
		for _, block := range fencedRE.FindAllStringSubmatch(string(data), -1) {
			commands = append(commands, makeLineRE.FindAllStringSubmatch(block[1], -1)...)
		}
		for _, m := range commands {
			for _, word := range strings.Fields(quotedRE.ReplaceAllString(m[1], "")) {
				if strings.HasPrefix(word, "-") || strings.Contains(word, "=") || strings.ContainsAny(word, "/.<>…") {
					continue // a flag, a variable, or not a target (`make bench`'s BENCH_ARGS=..., a path)
				}
				named++
				if !targets[word] {
					t.Errorf("%s names `make %s`, but the Makefile has no target %s", name, m[1], word)
				}
			}
		}
	}
	for _, must := range []string{"sandbox", "test"} {
		if !targets[must] {
			t.Errorf("the Makefile has no target %s, which README.md gives newcomers", must)
		}
	}
	if named < 10 {
		t.Fatalf("found only %d make targets named in the docs: has the form changed?", named)
	}
}

// TestREADMEIsALandingPage holds README.md to its job: the two commands a newcomer runs, and the way into the
// docs.
func TestREADMEIsALandingPage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`make sandbox`", "`make test`", "(docs/README.md)", "(docs/reference.md)",
		"(docs/install.md)", "(docs/user-guide.md)"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("README.md lacks %s", want)
		}
	}
}

var yamlBlockRE = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// TestDocsExamplesApply applies every complete object in the YAML examples of exampleDocs to the hub with
// a dry run: the worked examples must be accepted as written. Kinds the hub does not serve (Argo CD's
// Application, Flux's HelmRelease) are skipped; fragments without apiVersion and kind are not objects.
func TestDocsExamplesApply(t *testing.T) {
	c, w := hubClient(t)
	applied := 0
	for _, name := range exampleDocs {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, block := range yamlBlockRE.FindAllStringSubmatch(string(data), -1) {
			for _, o := range decodeAll(t, []byte(block[1])) {
				if o.GetAPIVersion() == "" || o.GetKind() == "" || o.GetName() == "" {
					continue
				}
				gvk := o.GroupVersionKind()
				if _, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); meta.IsNoMatchError(err) {
					t.Logf("%s: %s is not served by the test hub; not applied", name, gvk)
					continue
				}
				t.Run(name+"/"+o.GetKind()+"/"+o.GetName(), func(t *testing.T) {
					if ns := o.GetNamespace(); ns != "" {
						// The example's namespace, for real: a dry run does not create it.
						ensureNamespaces(t, c, []*unstructured.Unstructured{{Object: map[string]any{
							"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}})
					}
					dryRunApply(t, c, w, []*unstructured.Unstructured{o})
				})
				applied++
			}
		}
	}
	if applied < 5 {
		t.Fatalf("only %d example objects found in the docs", applied)
	}
}

// conditionReasonBlock is a const block of api/v1alpha1/conditions.go documented "Reasons of the A, B and C
// conditions...": the condition types it names and its reasons (values).
type conditionReasonBlock struct {
	conditions []string
	reasons    []string
}

var reasonsOfRE = regexp.MustCompile(`^Reasons of the (.+?) conditions?\b`)

// conditionCode is what api/v1alpha1 and the code say about conditions: the condition types and the reasons
// of the condition blocks by constant name, the blocks, and per condition type the reasons the code sets on it
// directly (see directConditionReasons).
type conditionCode struct {
	types   map[string]string // constant name -> value
	reasons map[string]string // constant name -> value, condition reasons only
	blocks  []conditionReasonBlock
	direct  map[string]map[string]bool
}

func readConditionCode(t *testing.T) conditionCode {
	t.Helper()
	const rel = "api/v1alpha1/conditions.go"
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, rel), nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	code := conditionCode{types: map[string]string{}, reasons: map[string]string{}}
	for value, name := range stringConstants(t, rel, "Condition") {
		code.types[name] = value
	}
	typeByValue := map[string]bool{}
	for _, v := range code.types {
		typeByValue[v] = true
	}
	all := stringConstants(t, rel, "Reason")
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST || g.Doc == nil {
			continue
		}
		m := reasonsOfRE.FindStringSubmatch(strings.TrimSpace(g.Doc.Text()))
		if m == nil {
			continue // not condition reasons (for example the reasons of status.unhealthyClusters)
		}
		var b conditionReasonBlock
		for _, c := range regexp.MustCompile(`,\s*|\s+and\s+`).Split(m[1], -1) {
			if !typeByValue[c] {
				t.Fatalf("%s: %q names %s, which is not a condition type", rel, m[0], c)
			}
			b.conditions = append(b.conditions, c)
		}
		for _, spec := range g.Specs {
			for _, name := range spec.(*ast.ValueSpec).Names {
				for value, n := range all {
					if n == name.Name {
						b.reasons = append(b.reasons, value)
						code.reasons[n] = value
					}
				}
			}
		}
		code.blocks = append(code.blocks, b)
	}
	code.direct = directConditionReasons(t, code)
	return code
}

// directConditionReasons finds, in the non-test Go files of controllers/ and pkg/, the reasons the code sets on
// each condition type directly: a metav1.Condition literal with Type: <pkg>.Condition<X> and Reason:
// <pkg>.Reason<Y>, or a variable holding such a literal whose .Reason is assigned <pkg>.Reason<Y> in the same
// function. Reasons copied from elsewhere (another condition's, a planner error's) are not followed: the
// reason blocks of conditions.go cover those.
func directConditionReasons(t *testing.T, code conditionCode) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	add := func(cond, reason string) {
		if out[cond] == nil {
			out[cond] = map[string]bool{}
		}
		out[cond][reason] = true
	}
	constant := func(e ast.Expr, names map[string]string) string {
		if sel, ok := e.(*ast.SelectorExpr); ok {
			return names[sel.Sel.Name]
		}
		return ""
	}
	// conditionLiteral returns the type of a metav1.Condition literal, recording its Reason.
	conditionLiteral := func(e ast.Expr) string {
		lit, ok := e.(*ast.CompositeLit)
		if !ok {
			return ""
		}
		if sel, ok := lit.Type.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Condition" {
			return ""
		}
		var typ, reason string
		for _, el := range lit.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				switch fmt.Sprint(kv.Key) {
				case "Type":
					typ = constant(kv.Value, code.types)
				case "Reason":
					reason = constant(kv.Value, code.reasons)
				}
			}
		}
		if typ != "" && reason != "" {
			add(typ, reason)
		}
		return typ
	}
	for _, dir := range []string{"controllers", "pkg", "internal/fleet"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				vars := map[string]string{}
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.CompositeLit:
						conditionLiteral(n)
					case *ast.AssignStmt:
						if len(n.Lhs) == len(n.Rhs) {
							for i, lhs := range n.Lhs {
								if id, ok := lhs.(*ast.Ident); ok {
									if typ := conditionLiteral(n.Rhs[i]); typ != "" {
										vars[id.Name] = typ
									}
								}
							}
						}
					}
					return true
				})
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					as, ok := n.(*ast.AssignStmt)
					if !ok || len(as.Lhs) != len(as.Rhs) {
						return true
					}
					for i, lhs := range as.Lhs {
						sel, ok := lhs.(*ast.SelectorExpr)
						if !ok || sel.Sel.Name != "Reason" {
							continue
						}
						id, ok := sel.X.(*ast.Ident)
						if !ok || vars[id.Name] == "" {
							continue
						}
						if reason := constant(as.Rhs[i], code.reasons); reason != "" {
							add(vars[id.Name], reason)
						}
					}
					return true
				})
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// conditionsDoc is the page whose table of conditions (the first table under "## Conditions") holds every
// condition type and its reasons: the API reference.
const conditionsDoc = "docs/reference.md"

// docConditions reads conditionsDoc's table of conditions: per condition type, the reasons its rows list
// (`Reason` in the reason column) and the condition types that column refers to by name (for example "as
// Ready's", "the Stalled reason"), whose reasons count as listed too.
func docConditions(t *testing.T) (listed map[string][]string, refs map[string][]string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, conditionsDoc))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Conditions\n")
	if !ok {
		t.Fatalf(`%s has no "## Conditions" section`, conditionsDoc)
	}
	listed, refs = map[string][]string{}, map[string][]string{}
	backticked := regexp.MustCompile("`([^`]+)`")
	inTable, current := false, ""
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if !inTable {
			if len(cells) < 3 || cells[0] != "type" || cells[2] != "reason" {
				t.Fatalf("%s's conditions table has the header %q, want | type | status | reason | meaning |", conditionsDoc, line)
			}
			inTable = true
			continue
		}
		if strings.HasPrefix(cells[0], "---") {
			continue
		}
		if typ := strings.Trim(cells[0], "`"); typ != "" {
			current = typ
		}
		if current == "" {
			t.Fatalf("%s's conditions table starts a row without a type: %q", conditionsDoc, line)
		}
		if _, ok := listed[current]; !ok {
			listed[current] = []string{}
		}
		for _, m := range backticked.FindAllStringSubmatch(cells[2], -1) {
			listed[current] = append(listed[current], m[1])
		}
		refs[current] = append(refs[current], strings.Fields(backticked.ReplaceAllString(cells[2], " "))...)
	}
	return listed, refs
}

// TestDocsReferenceConditionsMatchTheCode holds the table of conditions of docs/reference.md (conditionsDoc) to
// the code, as TestTroubleshootingCoversEveryReason holds docs/troubleshooting.md: it has a row for every
// condition type and no other; every reason it lists is a condition reason of api/v1alpha1/conditions.go; each
// condition's rows list every reason the code sets on that condition directly (directConditionReasons), and
// every reason of a "Reasons of the X condition" block of conditions.go under X (under one of them, for a block
// naming several). A row may stand for another condition's reasons by naming it ("as Ready's").
func TestDocsReferenceConditionsMatchTheCode(t *testing.T) {
	code := readConditionCode(t)
	listed, words := docConditions(t)

	reasonValues := map[string]bool{}
	for _, v := range code.reasons {
		reasonValues[v] = true
	}
	types := map[string]bool{}
	for _, v := range code.types {
		types[v] = true
		if _, ok := listed[v]; !ok {
			t.Errorf("%s's conditions table has no row for the condition %s", conditionsDoc, v)
		}
		if len(code.direct[v]) == 0 {
			t.Errorf("found no place in controllers/ or pkg/ that sets a reason on the condition %s (a metav1.Condition literal with Type: ...Condition...): has the code moved? Teach directConditionReasons", v)
		}
	}
	for typ, reasons := range listed {
		if !types[typ] {
			t.Errorf("%s's conditions table has a row for %s, which is not a condition type of api/v1alpha1", conditionsDoc, typ)
		}
		for _, r := range reasons {
			if !reasonValues[r] {
				t.Errorf("%s lists the reason %s for %s, which is not a condition reason of api/v1alpha1/conditions.go", conditionsDoc, r, typ)
			}
		}
	}

	// effective: a condition's listed reasons and those of the conditions its rows name.
	effective := map[string]map[string]bool{}
	var collect func(typ string, seen map[string]bool) map[string]bool
	collect = func(typ string, seen map[string]bool) map[string]bool {
		out := map[string]bool{}
		if seen[typ] {
			return out
		}
		seen[typ] = true
		for _, r := range listed[typ] {
			out[r] = true
		}
		for _, w := range words[typ] {
			w = strings.TrimSuffix(strings.Trim(w, ".,;()"), "'s")
			if types[w] && w != typ {
				for r := range collect(w, seen) {
					out[r] = true
				}
			}
		}
		return out
	}
	for typ := range types {
		effective[typ] = collect(typ, map[string]bool{})
	}

	for typ, reasons := range code.direct {
		for _, r := range sortedKeys(reasons) {
			if !effective[typ][r] {
				t.Errorf("the code sets %s on %s, which %s's conditions table does not list for it", r, typ, conditionsDoc)
			}
		}
	}
	for _, b := range code.blocks {
		for _, r := range b.reasons {
			found := false
			for _, c := range b.conditions {
				found = found || effective[c][r]
			}
			if !found {
				t.Errorf("api/v1alpha1/conditions.go has %s among the reasons of %s, which %s's conditions table does not list there", r, strings.Join(b.conditions, ", "), conditionsDoc)
			}
		}
	}
	if len(code.blocks) < 4 || len(code.reasons) < 15 {
		t.Fatalf("found only %d reason blocks with %d reasons in api/v1alpha1/conditions.go: has the code moved?", len(code.blocks), len(code.reasons))
	}
}

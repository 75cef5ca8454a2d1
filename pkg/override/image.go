package override

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// The grammar of image references, as github.com/distribution/reference writes it (that module is not in this
// module's graph; the grammar is small and stable, so it is written out here and table-tested).
var (
	// domainPattern is a registry host: DNS labels joined by dots (or a bracketed IPv6 address), and a port.
	domainPattern = regexp.MustCompile(`^(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?$`)
	// repositoryPattern is a repository path: lowercase components joined by slashes.
	repositoryPattern = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*)*$`)
	// tagPattern is a tag.
	tagPattern = regexp.MustCompile(`^[\w][\w.-]{0,127}$`)
	// digestPattern is a digest: algorithm:hex.
	digestPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$`)
)

// maxImageName bounds the length of registry and repository together, as the distribution grammar does.
const maxImageName = 255

// imageRef is an image reference: [registry/]repository[:tag][@digest]. The registry is empty when the image
// names none (nginx:1.25, library/nginx): it is read as written, not expanded to docker.io/library.
type imageRef struct {
	registry   string
	repository string
	tag        string
	digest     string
}

func (r imageRef) String() string {
	s := r.repository
	if r.registry != "" {
		s = r.registry + "/" + s
	}
	if r.tag != "" {
		s += ":" + r.tag
	}
	if r.digest != "" {
		s += "@" + r.digest
	}
	return s
}

// parseImage parses an image reference as container runtimes do: the first path component is the registry
// when it has a dot or a port, is localhost, or has an uppercase letter.
func parseImage(s string) (imageRef, error) {
	var r imageRef
	name := s
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name, r.digest = name[:i], name[i+1:]
		if !digestPattern.MatchString(r.digest) {
			return imageRef{}, fmt.Errorf("image %q: %q is not a digest such as sha256:<64 hex digits>", s, r.digest)
		}
	}
	if i := strings.LastIndexByte(name, ':'); i >= 0 && i > strings.LastIndexByte(name, '/') {
		name, r.tag = name[:i], name[i+1:]
		if !tagPattern.MatchString(r.tag) {
			return imageRef{}, fmt.Errorf("image %q: %q is not a tag", s, r.tag)
		}
	}
	if i := strings.IndexByte(name, '/'); i >= 0 && isRegistry(name[:i]) {
		r.registry, name = name[:i], name[i+1:]
		if !domainPattern.MatchString(r.registry) {
			return imageRef{}, fmt.Errorf("image %q: %q is not a registry host", s, r.registry)
		}
	}
	r.repository = name
	if !repositoryPattern.MatchString(r.repository) {
		return imageRef{}, fmt.Errorf("image %q: %q is not a repository (lowercase letters, digits, '.', '_', '-' and '/')", s, r.repository)
	}
	if n := len(r.registry) + len(r.repository); n > maxImageName {
		return imageRef{}, fmt.Errorf("image %q: its name is %d characters, more than %d", s, n, maxImageName)
	}
	return r, nil
}

// isRegistry reports whether the first component of an image's name is a registry host.
func isRegistry(component string) bool {
	return strings.ContainsAny(component, ".:") || component == "localhost" || strings.ToLower(component) != component
}

// checkRegistry checks a registry override's value: a host that reads as a registry (with a dot or a port, or
// localhost), optionally followed by a repository path prefix.
func checkRegistry(v string) error {
	host, prefix, hasPrefix := strings.Cut(v, "/")
	switch {
	case !strings.ContainsAny(host, ".:") && host != "localhost":
		return fmt.Errorf("%q is not a registry host with a dot or a port, or localhost (mirror.example.com, registry:5000)", v)
	case !domainPattern.MatchString(host):
		return fmt.Errorf("%q is not a registry host (mirror.example.com, registry:5000)", host)
	case hasPrefix && !repositoryPattern.MatchString(prefix):
		return fmt.Errorf("%q after the host is not a repository path prefix (lowercase letters, digits, '.', '_', '-' and '/')", prefix)
	}
	return nil
}

// checkRepository checks a repository override's value.
func checkRepository(v string) error {
	if !repositoryPattern.MatchString(v) {
		return fmt.Errorf("%q is not a repository such as team/web (lowercase letters, digits, '.', '_', '-' and '/')", v)
	}
	return nil
}

// checkTag checks a tag override's value.
func checkTag(v string) error {
	if !tagPattern.MatchString(v) {
		return fmt.Errorf("%q is not a tag such as 1.2.3 (letters, digits, '_', '.' and '-', at most 128, not starting with '.' or '-')", v)
	}
	return nil
}

// imageParts are the values an image override sets for one cluster; nil when not set.
type imageParts struct {
	registry, repository, tag *string
}

// rewriteImage sets the parts of one image. Changing the tag removes the digest. The result must read back as
// what was meant: a repository whose first component looks like a host, on an image without a registry,
// would be read as a registry, and is refused.
func rewriteImage(image string, p imageParts) (string, error) {
	ref, err := parseImage(image)
	if err != nil {
		return "", err
	}
	if p.registry != nil {
		host, prefix, _ := strings.Cut(*p.registry, "/")
		ref.registry = host
		if prefix != "" {
			ref.repository = prefix + "/" + ref.repository
		}
	}
	if p.repository != nil {
		ref.repository = *p.repository
		if p.registry != nil {
			if _, prefix, _ := strings.Cut(*p.registry, "/"); prefix != "" {
				ref.repository = prefix + "/" + ref.repository
			}
		}
	}
	if p.tag != nil {
		ref.tag, ref.digest = *p.tag, ""
	}
	out := ref.String()
	back, err := parseImage(out)
	if err != nil {
		return "", err
	}
	if back != ref {
		return "", fmt.Errorf("image %q would become %q, which reads as registry %q and repository %q: set the registry too", image, out, back.registry, back.repository)
	}
	return out, nil
}

// rewriteImages returns a copy of obj with the image of every container and init container of its pod specs
// (template.PodSpecPaths: a Pod's spec, any other kind's spec.template.spec and
// spec.jobTemplate.spec.template.spec) rewritten, and whether any changed; obj itself when it has no pod spec
// or nothing changes.
func rewriteImages(m template.Manifest, obj *unstructured.Unstructured, p imageParts) (*unstructured.Unstructured, bool, error) {
	var out *unstructured.Unstructured
	for _, path := range template.PodSpecPaths(m.GVK.GroupKind()) {
		spec, found, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
		if err != nil || !found {
			continue
		}
		if _, ok := spec.(map[string]any); !ok {
			continue
		}
		for _, list := range containerLists {
			items, _, _ := unstructured.NestedFieldNoCopy(obj.Object, append(path, list)...)
			containers, ok := items.([]any)
			if !ok {
				continue
			}
			for i, item := range containers {
				ctr, ok := item.(map[string]any)
				if !ok {
					continue
				}
				img, ok := ctr["image"]
				if !ok {
					continue
				}
				s, ok := img.(string)
				if !ok {
					return nil, false, fmt.Errorf("%s[%d].image is a %T, not a string", fieldName(path, list), i, img)
				}
				rewritten, err := rewriteImage(s, p)
				if err != nil {
					return nil, false, fmt.Errorf("%s[%d].image: %w", fieldName(path, list), i, err)
				}
				if rewritten == s {
					continue
				}
				if out == nil {
					out = obj.DeepCopy()
				}
				copied, _, _ := unstructured.NestedFieldNoCopy(out.Object, append(path, list)...)
				copied.([]any)[i].(map[string]any)["image"] = rewritten
			}
		}
	}
	if out == nil {
		return obj, false, nil
	}
	return out, true, nil
}

// containerLists are the lists of a pod spec whose images the image short form rewrites.
var containerLists = []string{"initContainers", "containers"}

func fieldName(path []string, list string) string {
	return "." + strings.Join(path, ".") + "." + list
}

// hasPodContainers reports whether m has a container or init container with an image in one of its pod specs:
// one that the image short form rewrites.
func hasPodContainers(m template.Manifest) bool {
	for _, path := range template.PodSpecPaths(m.GVK.GroupKind()) {
		for _, list := range containerLists {
			items, _, _ := unstructured.NestedFieldNoCopy(m.Object.Object, append(path, list)...)
			if hasImage(items) {
				return true
			}
		}
	}
	return false
}

// hasImage reports whether v is a list of containers one of which has an image.
func hasImage(v any) bool {
	items, ok := v.([]any)
	if !ok {
		return false
	}
	for _, item := range items {
		if ctr, ok := item.(map[string]any); ok {
			if _, ok := ctr["image"]; ok {
				return true
			}
		}
	}
	return false
}

// strayContainers finds a list of containers (a containers or initContainers list with an image) anywhere in
// v, depth first in key order: the keys and list indexes that lead to it, nil when there is none. Called where
// the pod specs hold none, it finds the containers the image short form would pass over (a RayCluster's
// spec.headGroupSpec.template.spec.containers, a CronJob-like kind's spec.template.jobTemplate...).
func strayContainers(v any, at []string) []string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if slices.Contains(containerLists, k) && hasImage(x[k]) {
				return append(slices.Clip(at), k)
			}
		}
		for _, k := range keys {
			if found := strayContainers(x[k], append(slices.Clip(at), k)); found != nil {
				return found
			}
		}
	case []any:
		for i, item := range x {
			if found := strayContainers(item, append(slices.Clip(at), strconv.Itoa(i))); found != nil {
				return found
			}
		}
	}
	return nil
}

// podSpecPlaces names, for messages, where the image short form looks in a manifest of kind gk.
func podSpecPlaces(gk schema.GroupKind) string {
	paths := template.PodSpecPaths(gk)
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = "." + strings.Join(p, ".")
	}
	return strings.Join(names, " and ")
}

// Package manifestwork names, labels and builds the ManifestWorks a PlacementManifestWork owns.
package manifestwork

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

// maxWorkNameLength keeps ManifestWork names short enough for the agent's AppliedManifestWork, which is named
// "<64-character hub hash>-<work name>" and is itself limited to 253 characters.
const maxWorkNameLength = 253 - 65

// hashLength is how many hex characters of a SHA-256 disambiguate names and label values.
const hashLength = 10

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:hashLength]
}

// OwnerLabelValue is the value of workv1alpha1.LabelPlacementManifestWork for a PlacementManifestWork: "<namespace>.<name>"
// when that is a valid label value (namespaces cannot contain dots, so it is unambiguous), otherwise a prefix
// of it followed by a hash of the full key, so it stays within 63 characters and unique.
func OwnerLabelValue(owner types.NamespacedName) string {
	readable := owner.Namespace + "." + owner.Name
	if len(validation.IsValidLabelValue(readable)) == 0 {
		return readable
	}
	prefix := trimToAlnum(readable[:min(len(readable), validation.LabelValueMaxLength-hashLength-1)])
	return prefix + "-" + shortHash(owner.String())
}

// WorkName is the name of the PlacementManifestWork's ManifestWork in every cluster namespace: its own name
// followed by a hash of "<namespace>/<name>", so PlacementManifestWorks of the same name in different
// namespaces never collide, cut so the name stays valid for any PlacementManifestWork name.
func WorkName(owner types.NamespacedName) string {
	name := trimToAlnum(owner.Name[:min(len(owner.Name), maxWorkNameLength-hashLength-1)])
	return name + "-" + shortHash(owner.String())
}

// trimToAlnum drops trailing characters that may not end a name or label value.
func trimToAlnum(s string) string {
	return strings.TrimRight(s, "-_.")
}

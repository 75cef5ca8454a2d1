package webhook

import (
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// ApplyPatch applies a ReviseReplica answer's patch to the object and returns the revised object. The patch
// may change the object's spec as it likes but not what it is: its apiVersion, kind, name and namespace stay.
func ApplyPatch(object []byte, resp *Response) ([]byte, error) {
	if resp.PatchType != PatchTypeJSONPatch {
		return nil, fmt.Errorf("patchType %q, want %s", resp.PatchType, PatchTypeJSONPatch)
	}
	patch, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		return nil, fmt.Errorf("patch is not an RFC 6902 JSON patch: %w", err)
	}
	opts := jsonpatch.NewApplyOptions()
	// A copy may not grow the object by more than the object itself.
	opts.AccumulatedCopySizeLimit = int64(len(object)) + 1
	revised, err := patch.ApplyWithOptions(object, opts)
	if err != nil {
		return nil, fmt.Errorf("patch does not apply: %w", err)
	}
	before, err := identityOf(object)
	if err != nil {
		return nil, fmt.Errorf("object: %w", err)
	}
	after, err := identityOf(revised)
	if err != nil {
		return nil, fmt.Errorf("patched object: %w", err)
	}
	if before != after {
		return nil, fmt.Errorf("patch changes the object's identity from %s to %s", before, after)
	}
	return revised, nil
}

type identity struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

func (i identity) String() string {
	return fmt.Sprintf("%s %s %s/%s", i.APIVersion, i.Kind, i.Metadata.Namespace, i.Metadata.Name)
}

func identityOf(object []byte) (identity, error) {
	var id identity
	if err := json.Unmarshal(object, &id); err != nil {
		return identity{}, fmt.Errorf("not a JSON object: %w", err)
	}
	return id, nil
}

package override

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseImage(t *testing.T) {
	const hex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	cases := map[string]struct {
		image string
		want  imageRef
		err   string
	}{
		"name only":                    {image: "nginx", want: imageRef{repository: "nginx"}},
		"name and tag":                 {image: "nginx:1.25", want: imageRef{repository: "nginx", tag: "1.25"}},
		"docker hub path, no registry": {image: "library/nginx:1.25", want: imageRef{repository: "library/nginx", tag: "1.25"}},
		"registry with a dot":          {image: "registry.example.com/team/web:1.2", want: imageRef{registry: "registry.example.com", repository: "team/web", tag: "1.2"}},
		"registry with a port, no tag": {image: "registry:5000/web", want: imageRef{registry: "registry:5000", repository: "web"}},
		"port and tag":                 {image: "localhost:5000/web:dev", want: imageRef{registry: "localhost:5000", repository: "web", tag: "dev"}},
		"localhost":                    {image: "localhost/web", want: imageRef{registry: "localhost", repository: "web"}},
		"uppercase registry":           {image: "Registry/web", want: imageRef{registry: "Registry", repository: "web"}},
		"IPv6 registry":                {image: "[::1]:5000/web:1", want: imageRef{registry: "[::1]:5000", repository: "web", tag: "1"}},
		"digest":                       {image: "nginx@sha256:" + hex, want: imageRef{repository: "nginx", digest: "sha256:" + hex}},
		"tag and digest":               {image: "ghcr.io/a/b:1@sha256:" + hex, want: imageRef{registry: "ghcr.io", repository: "a/b", tag: "1", digest: "sha256:" + hex}},
		"separators":                   {image: "a__b/c-d--e.f_g:1_x.y-z", want: imageRef{repository: "a__b/c-d--e.f_g", tag: "1_x.y-z"}},
		"uppercase repository":         {image: "team/Web", err: `"team/Web" is not a repository`},
		"empty":                        {image: "", err: `"" is not a repository`},
		"a short digest":               {image: "nginx@sha256:abc", err: `"sha256:abc" is not a digest`},
		"a tag starting with a dot":    {image: "nginx:.1", err: `".1" is not a tag`},
		"a tag too long":               {image: "nginx:" + strings.Repeat("a", 129), err: "is not a tag"},
		"an empty tag":                 {image: "nginx:", err: `"" is not a tag`},
		"a double slash":               {image: "a//b", err: `"a//b" is not a repository`},
		"a bad registry":               {image: "-bad.example.com/web", err: `"-bad.example.com" is not a registry host`},
		"a name too long":              {image: "r.io/" + strings.Repeat("a", 252), err: "more than 255"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseImage(tc.image)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("parseImage(%q) = %+v, %v; want an error with %q", tc.image, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseImage(%q): %v", tc.image, err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(imageRef{})); diff != "" {
				t.Errorf("parseImage(%q) (-want +got):\n%s", tc.image, diff)
			}
			if got.String() != tc.image {
				t.Errorf("String() = %q, want %q back", got.String(), tc.image)
			}
		})
	}
}

func TestRewriteImage(t *testing.T) {
	s := func(v string) *string { return &v }
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	cases := map[string]struct {
		image string
		parts imageParts
		want  string
		err   string
	}{
		"registry added":                    {image: "nginx:1.25", parts: imageParts{registry: s("mirror.example.com")}, want: "mirror.example.com/nginx:1.25"},
		"registry replaced, digest kept":    {image: "ghcr.io/a/b@" + digest, parts: imageParts{registry: s("mirror.io")}, want: "mirror.io/a/b@" + digest},
		"registry with a prefix":            {image: "ghcr.io/a/b:1", parts: imageParts{registry: s("mirror.io/ghcr")}, want: "mirror.io/ghcr/a/b:1"},
		"repository replaced":               {image: "ghcr.io/a/b:1", parts: imageParts{repository: s("c/d")}, want: "ghcr.io/c/d:1"},
		"prefix and repository":             {image: "ghcr.io/a/b:1", parts: imageParts{registry: s("mirror.io/ghcr"), repository: s("c")}, want: "mirror.io/ghcr/c:1"},
		"tag replaces tag and digest":       {image: "a/b:1@" + digest, parts: imageParts{tag: s("2")}, want: "a/b:2"},
		"tag added":                         {image: "registry:5000/web", parts: imageParts{tag: s("2")}, want: "registry:5000/web:2"},
		"all three":                         {image: "nginx", parts: imageParts{registry: s("r.io"), repository: s("x/y"), tag: s("3")}, want: "r.io/x/y:3"},
		"nothing set":                       {image: "nginx:1", want: "nginx:1"},
		"a repository that reads as a host": {image: "nginx", parts: imageParts{repository: s("my.team/web")}, err: "reads as registry"},
		"a name too long":                   {image: "nginx", parts: imageParts{repository: s(strings.Repeat("a", 250)), registry: s("mirror.io")}, err: "more than 255"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := rewriteImage(tc.image, tc.parts)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("rewriteImage = %q, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("rewriteImage = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

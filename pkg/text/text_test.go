package text

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 clusters"}, {1, "1 cluster"}, {2, "2 clusters"}, {-1, "-1 clusters"}} {
		if got := Count(c.n, "cluster", "clusters"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if Plural(1, "is", "are") != "is" || Plural(3, "is", "are") != "are" {
		t.Error("Plural picks the wrong word")
	}
}

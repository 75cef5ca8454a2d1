// Package text holds the small wording helpers of the manager's messages, so conditions, events and CLI output
// count things the same way.
package text

import "strconv"

// Plural is one when n is 1, else many: "is" or "are", "cluster" or "clusters".
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count is n followed by the noun in the number n needs: "1 cluster", "0 clusters", "3 clusters".
func Count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Plural(n, one, many)
}

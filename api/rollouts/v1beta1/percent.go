package v1beta1

import (
	"strconv"
	"strings"
)

// Percent reads a percentage as the Rollout's fields write it ("20%" for
// traffic, replicas or failureThreshold): a whole number in plain decimal
// form (no "+", no leading zeros, no spaces) followed by "%". It is false
// for anything else. It does not check the range: each field says which
// one it takes.
func Percent(s string) (int, bool) {
	digits, ok := strings.CutSuffix(s, "%")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || strconv.Itoa(n) != digits {
		return 0, false
	}
	return n, true
}

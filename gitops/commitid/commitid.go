// Package commitid is sluice's one reading of a Git commit id: whether a string is a full
// one, and the short form sluice writes in messages, statuses and branch names. It imports
// nothing of sluice, so every GitOps package (the webhook receivers, the SCM clients, the
// applied-commit record and the GitOps controller) can use it.
package commitid

// ShortLength is how many hex digits Short keeps.
const ShortLength = 12

// Valid tells whether s is a full SHA-1 (40 digits) or SHA-256 (64 digits) commit id in
// lower-case hex.
func Valid(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Short is the first ShortLength characters of a commit id; a shorter string is returned as
// it is.
func Short(sha string) string {
	if len(sha) > ShortLength {
		return sha[:ShortLength]
	}
	return sha
}

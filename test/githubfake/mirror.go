package githubfake

// MirrorCommit records a commit made in another, real Git repository (a
// test's Git server) under that repository's SHA, as the new head of branch,
// so that statuses can be posted on it and pull requests can name it. The
// commit keeps the branch's files; parents the fake does not know are kept
// as names only.
func (s *Server) MirrorCommit(fullName, branch, sha string, parents []string, message string, author Signature) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(fullName)
	if author.When.IsZero() {
		author.When = s.clock()
	}
	treeSHA := treeID(tree{})
	if head := r.refs["refs/heads/"+branch]; head != "" && r.commits[head] != nil {
		treeSHA = r.commits[head].Tree
	}
	if r.trees[treeSHA] == nil {
		r.trees[treeSHA] = tree{}
	}
	r.commits[sha] = &commit{SHA: sha, Tree: treeSHA, Parents: append([]string(nil), parents...), Message: message, Author: author, Committer: author}
	r.refs["refs/heads/"+branch] = sha
}

// MirrorMerge records that pull request number was merged as the commit sha,
// mirrored with MirrorCommit first, by the user by.
func (s *Server) MirrorMerge(fullName string, number int, sha, by string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(fullName)
	pr := r.pulls[number]
	now := s.clock()
	pr.state, pr.merged, pr.mergeCommit, pr.mergedBy, pr.mergedAt, pr.updatedAt = "closed", true, sha, by, now, now
}

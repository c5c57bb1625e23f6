package githubfake

import (
	"net/http"
	"sort"
	"strings"
	"time"
)

// resolve turns a ref (a sha, a branch name or "heads/<branch>") into a commit sha.
func (s *Server) resolve(r *repository, ref string) string {
	if r.commits[ref] != nil {
		return ref
	}
	if sha := r.refs["refs/heads/"+strings.TrimPrefix(ref, "heads/")]; sha != "" {
		return sha
	}
	return r.refs["refs/"+ref]
}

func (s *Server) refJSON(r *repository, name, sha string) map[string]any {
	return map[string]any{
		"ref": name, "node_id": "REF_" + name, "url": s.apiURL("repos/%s/%s/git/%s", r.owner, r.name, name),
		"object": map[string]any{"type": "commit", "sha": sha, "url": s.apiURL("repos/%s/%s/git/commits/%s", r.owner, r.name, sha)},
	}
}

func (s *Server) getRef(c *call) (int, any, error) {
	name := "refs/" + c.params["ref"]
	sha := c.repo.refs[name]
	if sha == "" {
		return 0, nil, fail(http.StatusNotFound, "Not Found")
	}
	return http.StatusOK, s.refJSON(c.repo, name, sha), nil
}

func (s *Server) createRef(c *call) (int, any, error) {
	var in struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	}
	if err := decode(c, &in); err != nil {
		return 0, nil, err
	}
	if !strings.HasPrefix(in.Ref, "refs/") || strings.Count(in.Ref, "/") < 2 {
		return 0, nil, fail(http.StatusUnprocessableEntity, "Reference name must start with 'refs/' and have at least two slashes.")
	}
	if c.repo.commits[in.SHA] == nil {
		return 0, nil, fail(http.StatusUnprocessableEntity, "Object does not exist")
	}
	if c.repo.refs[in.Ref] != "" {
		return 0, nil, fail(http.StatusUnprocessableEntity, "Reference already exists")
	}
	c.repo.refs[in.Ref] = in.SHA
	return http.StatusCreated, s.refJSON(c.repo, in.Ref, in.SHA), nil
}

func (s *Server) updateRef(c *call) (int, any, error) {
	var in struct {
		SHA   string `json:"sha"`
		Force bool   `json:"force"`
	}
	if err := decode(c, &in); err != nil {
		return 0, nil, err
	}
	name := "refs/" + c.params["ref"]
	old := c.repo.refs[name]
	if old == "" {
		return 0, nil, fail(http.StatusUnprocessableEntity, "Reference does not exist")
	}
	if c.repo.commits[in.SHA] == nil {
		return 0, nil, fail(http.StatusUnprocessableEntity, "Object does not exist")
	}
	if !in.Force && !ancestors(c.repo, in.SHA)[old] {
		return 0, nil, fail(http.StatusUnprocessableEntity, "Update is not a fast forward")
	}
	c.repo.refs[name] = in.SHA
	return http.StatusOK, s.refJSON(c.repo, name, in.SHA), nil
}

func (s *Server) commitJSON(r *repository, cm *commit) map[string]any {
	parents := make([]any, 0, len(cm.Parents))
	for _, p := range cm.Parents {
		parents = append(parents, map[string]any{
			"sha": p, "url": s.apiURL("repos/%s/%s/git/commits/%s", r.owner, r.name, p),
			"html_url": s.htmlRoot() + r.owner + "/" + r.name + "/commit/" + p,
		})
	}
	sig := func(g Signature) map[string]any {
		return map[string]any{"name": g.Name, "email": g.Email, "date": stamp(g.When)}
	}
	return map[string]any{
		"sha": cm.SHA, "node_id": "C_" + cm.SHA, "url": s.apiURL("repos/%s/%s/git/commits/%s", r.owner, r.name, cm.SHA),
		"html_url": s.htmlRoot() + r.owner + "/" + r.name + "/commit/" + cm.SHA,
		"author":   sig(cm.Author), "committer": sig(cm.Committer), "message": cm.Message,
		"tree":    map[string]any{"sha": cm.Tree, "url": s.apiURL("repos/%s/%s/git/trees/%s", r.owner, r.name, cm.Tree)},
		"parents": parents,
		"verification": map[string]any{
			"verified": false, "reason": "unsigned", "signature": nil, "payload": nil, "verified_at": nil,
		},
	}
}

func (s *Server) getCommit(c *call) (int, any, error) {
	cm := c.repo.commits[c.params["commit_sha"]]
	if cm == nil {
		return 0, nil, fail(http.StatusNotFound, "Not Found")
	}
	return http.StatusOK, s.commitJSON(c.repo, cm), nil
}

func (s *Server) createCommit(c *call) (int, any, error) {
	type person struct {
		Name  string `json:"name"`
		Email string `json:"email"`
		Date  string `json:"date"`
	}
	var in struct {
		Message   string   `json:"message"`
		Tree      string   `json:"tree"`
		Parents   []string `json:"parents"`
		Author    *person  `json:"author"`
		Committer *person  `json:"committer"`
	}
	if err := decode(c, &in); err != nil {
		return 0, nil, err
	}
	if _, ok := c.repo.trees[in.Tree]; !ok {
		return 0, nil, fail(http.StatusUnprocessableEntity, "Tree SHA does not exist")
	}
	for _, p := range in.Parents {
		if c.repo.commits[p] == nil {
			return 0, nil, fail(http.StatusUnprocessableEntity, "Parent SHA does not exist or is not a commit object")
		}
	}
	sig := func(p *person) Signature {
		if p == nil {
			return Signature{Name: c.login, Email: c.login + "@users.invalid", When: s.clock()}
		}
		when, err := time.Parse(time.RFC3339, p.Date)
		if err != nil {
			when = s.clock()
		}
		return Signature{Name: p.Name, Email: p.Email, When: when}
	}
	author := sig(in.Author)
	committer := author
	if in.Committer != nil {
		committer = sig(in.Committer)
	}
	cm := &commit{Tree: in.Tree, Parents: in.Parents, Message: in.Message, Author: author, Committer: committer}
	cm.SHA = commitID(cm)
	c.repo.commits[cm.SHA] = cm
	return http.StatusCreated, s.commitJSON(c.repo, cm), nil
}

func (s *Server) treeJSON(r *repository, sha string, t tree, recursive bool) map[string]any {
	var entries []any
	add := func(path, mode, kind, sha string, size int) {
		e := map[string]any{"path": path, "mode": mode, "type": kind, "sha": sha}
		if kind == "blob" {
			e["size"] = size
			e["url"] = s.apiURL("repos/%s/%s/git/blobs/%s", r.owner, r.name, sha)
		} else {
			e["url"] = s.apiURL("repos/%s/%s/git/trees/%s", r.owner, r.name, sha)
		}
		entries = append(entries, e)
	}
	paths := make([]string, 0, len(t))
	for p := range t {
		paths = append(paths, p)
	}
	dirs := t.dirs()
	for d := range dirs {
		paths = append(paths, d)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if !recursive && strings.Contains(p, "/") {
			continue
		}
		if dirSHA, isDir := dirs[p]; isDir {
			add(p, "040000", "tree", dirSHA, 0)
			continue
		}
		e := t[p]
		add(p, e.Mode, e.Type, e.SHA, len(r.blobs[e.SHA]))
	}
	if entries == nil {
		entries = []any{}
	}
	return map[string]any{
		"sha": sha, "url": s.apiURL("repos/%s/%s/git/trees/%s", r.owner, r.name, sha), "truncated": false, "tree": entries,
	}
}

func (s *Server) getTree(c *call) (int, any, error) {
	sha := c.params["tree_sha"]
	t, ok := c.repo.trees[sha]
	if !ok {
		return 0, nil, fail(http.StatusNotFound, "Not Found")
	}
	recursive := c.req.URL.Query().Get("recursive") != ""
	return http.StatusOK, s.treeJSON(c.repo, sha, t, recursive), nil
}

func (s *Server) createTree(c *call) (int, any, error) {
	var in struct {
		BaseTree string `json:"base_tree"`
		Tree     []struct {
			Path    string  `json:"path"`
			Mode    string  `json:"mode"`
			Type    string  `json:"type"`
			SHA     *string `json:"sha"`
			Content *string `json:"content"`
		} `json:"tree"`
	}
	if err := decode(c, &in); err != nil {
		return 0, nil, err
	}
	base := tree{}
	if in.BaseTree != "" {
		var ok bool
		if base, ok = c.repo.trees[in.BaseTree]; !ok {
			return 0, nil, fail(http.StatusUnprocessableEntity, "base_tree is not a valid tree oid")
		}
	}
	set := map[string]entry{}
	var removed []string
	for _, e := range in.Tree {
		switch {
		case e.Type == "tree":
			return 0, nil, fail(http.StatusUnprocessableEntity, "the fake does not take tree entries of type tree")
		case e.Content != nil:
			sha := objectID("blob", []byte(*e.Content))
			c.repo.blobs[sha] = []byte(*e.Content)
			set[e.Path] = entry{SHA: sha, Mode: e.Mode, Type: e.Type}
		case e.SHA == nil:
			if _, ok := base[e.Path]; !ok {
				return 0, nil, fail(http.StatusUnprocessableEntity, "GitRPC::BadObjectState")
			}
			removed = append(removed, e.Path)
		default:
			if _, ok := c.repo.blobs[*e.SHA]; !ok && e.Type == "blob" {
				return 0, nil, fail(http.StatusUnprocessableEntity, "tree.sha %s is not a valid blob", *e.SHA)
			}
			set[e.Path] = entry{SHA: *e.SHA, Mode: e.Mode, Type: e.Type}
		}
	}
	t := base.apply(set, removed)
	sha := treeID(t)
	c.repo.trees[sha] = t
	return http.StatusCreated, s.treeJSON(c.repo, sha, t, true), nil
}

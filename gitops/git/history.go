package git

import (
	"container/heap"
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// CommitsSince implements Reader.
func (r *branchReader) CommitsSince(ctx context.Context, sha string) ([]Arrival, error) {
	from, err := parseSHA(sha)
	if err != nil {
		return nil, fmt.Errorf("list commits of %s: %w", r.where(), err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		head, err := r.headCommit()
		if err != nil {
			return nil, err
		}
		if _, err := r.commitObject(ctx, from); err != nil {
			return nil, fmt.Errorf("list commits after %s: %w", from, err)
		}
		arrivals, err := r.arrivals(head, from)
		if !errors.Is(err, errShallow) {
			return arrivals, err
		}
		more, derr := r.deepen(ctx)
		if derr != nil {
			return nil, derr
		}
		if !more {
			return nil, fmt.Errorf("%s: %w", r.where(), err)
		}
	}
}

// errShallow says a walk reached the shallow boundary where it needed to
// go further.
var errShallow = errors.New("history needed beyond the fetched part")

// Flags of the walk in arrivals.
const (
	reachedFromHead uint8 = 1 << iota // reachable from the head
	reachedFromBase                   // reachable from the base commit: not new
)

// slop is how many more commits the walk looks at once every commit left
// to look at is known not to be new, in case committer dates are skewed
// (git's revision walk does the same).
const slop = 5

// arrivals lists the commits reachable from head and not from base, ordered
// for CommitsSince. It walks both histories newest first by committer date,
// marking what base reaches, and stops once nothing left can be new. It
// returns errShallow when a new commit's parent was not fetched.
func (r *branchReader) arrivals(head *object.Commit, base plumbing.Hash) ([]Arrival, error) {
	if head.Hash == base {
		return nil, nil
	}
	baseCommit, err := object.GetCommit(r.st, base)
	if err != nil {
		return nil, fmt.Errorf("%s: commit %s: %w", r.where(), base, err)
	}
	w := newWalk()
	w.mark(baseCommit, reachedFromBase)
	w.mark(head, reachedFromHead)
	reachesBase := false
	budget := slop
	for w.queue.Len() > 0 {
		c := heap.Pop(&w.queue).(*object.Commit)
		f := w.flags[c.Hash]
		if w.done[c.Hash] == f {
			continue // seen with these flags already
		}
		w.done[c.Hash] = f
		for _, p := range c.ParentHashes {
			pc, err := object.GetCommit(r.st, p)
			if err != nil {
				if f&reachedFromBase == 0 && errors.Is(err, plumbing.ErrObjectNotFound) {
					return nil, fmt.Errorf("parent %s of %s: %w", p, c.Hash, errShallow)
				}
				if f&reachedFromBase != 0 && errors.Is(err, plumbing.ErrObjectNotFound) {
					continue // below the boundary on the old side: not needed
				}
				return nil, fmt.Errorf("%s: commit %s: %w", r.where(), p, err)
			}
			if f&reachedFromBase == 0 && p == base {
				reachesBase = true
			}
			w.mark(pc, f)
		}
		if w.onlyOld() {
			budget--
			if budget == 0 {
				break
			}
		} else {
			budget = slop
		}
	}
	if !reachesBase {
		return nil, fmt.Errorf("%s: commit %s: %w", r.where(), base, ErrNotAncestor)
	}
	return w.order(head), nil
}

// walk is the state of the walk in arrivals.
type walk struct {
	queue commitQueue
	flags map[plumbing.Hash]uint8
	done  map[plumbing.Hash]uint8
	// commits holds every commit reached.
	commits map[plumbing.Hash]*object.Commit
}

func newWalk() *walk {
	return &walk{
		flags:   map[plumbing.Hash]uint8{},
		done:    map[plumbing.Hash]uint8{},
		commits: map[plumbing.Hash]*object.Commit{},
	}
}

// mark adds flags to c and queues it when that changes what it carries.
func (w *walk) mark(c *object.Commit, f uint8) {
	old := w.flags[c.Hash]
	if old|f == old && w.commits[c.Hash] != nil {
		return
	}
	w.flags[c.Hash] = old | f
	w.commits[c.Hash] = c
	heap.Push(&w.queue, c)
}

// onlyOld reports whether every queued commit is reachable from the base.
func (w *walk) onlyOld() bool {
	for _, c := range w.queue {
		if w.flags[c.Hash]&reachedFromBase == 0 {
			return false
		}
	}
	return true
}

// isNew reports whether h was reached from the head and not from the base.
func (w *walk) isNew(h plumbing.Hash) bool {
	return w.flags[h] == reachedFromHead
}

// order arranges the new commits: the first-parent line from the oldest to
// the head, each merge preceded by the commits it brought in, parents
// before children.
func (w *walk) order(head *object.Commit) []Arrival {
	var line []*object.Commit
	for c := head; c != nil && w.isNew(c.Hash); {
		line = append(line, c)
		if len(c.ParentHashes) == 0 {
			break
		}
		c = w.commits[c.ParentHashes[0]]
	}
	onLine := map[plumbing.Hash]bool{}
	for _, c := range line {
		onLine[c.Hash] = true
	}
	placed := map[plumbing.Hash]bool{}
	var out []Arrival
	var visit func(h plumbing.Hash, via plumbing.Hash)
	visit = func(h plumbing.Hash, via plumbing.Hash) {
		if placed[h] || onLine[h] || !w.isNew(h) {
			return
		}
		placed[h] = true
		c := w.commits[h]
		for _, p := range c.ParentHashes {
			visit(p, via)
		}
		out = append(out, Arrival{Commit: fromObject(c), Via: via.String()})
	}
	for i := len(line) - 1; i >= 0; i-- {
		c := line[i]
		for _, p := range c.ParentHashes[min(1, len(c.ParentHashes)):] {
			visit(p, c.Hash)
		}
		out = append(out, Arrival{Commit: fromObject(c), Via: c.Hash.String()})
	}
	return out
}

// commitQueue orders commits newest first by committer date.
type commitQueue []*object.Commit

func (q commitQueue) Len() int { return len(q) }

func (q commitQueue) Less(i, j int) bool {
	a, b := q[i].Committer.When, q[j].Committer.When
	if !a.Equal(b) {
		return a.After(b)
	}
	return q[i].Hash.String() < q[j].Hash.String()
}

func (q commitQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }

// Push implements heap.Interface.
func (q *commitQueue) Push(x any) { *q = append(*q, x.(*object.Commit)) }

// Pop implements heap.Interface.
func (q *commitQueue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}

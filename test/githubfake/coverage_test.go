package githubfake

import (
	"slices"
	"testing"
)

// The fake serves exactly the operations of the trimmed description: a
// request sluice may validly send never lands on an operation without a
// handler, and no handler serves an operation GitHub does not describe.
func TestHandlers_coverEveryDescribedOperation(t *testing.T) {
	sp, err := loadSpec("http://127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{}
	handlers := s.handlers()
	var described []string
	for _, item := range sp.doc.Paths.Map() {
		for _, op := range item.Operations() {
			described = append(described, op.OperationID)
			if _, ok := handlers[op.OperationID]; !ok {
				t.Errorf("operation %s is described but the fake has no handler for it: add one to handlers()", op.OperationID)
			}
		}
	}
	for op := range handlers {
		if !slices.Contains(described, op) {
			t.Errorf("handler %s serves an operation the trimmed description lacks: add it to hack/githubapi/operations.txt and run update.sh", op)
		}
	}
}

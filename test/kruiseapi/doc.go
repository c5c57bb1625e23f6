// Package kruiseapi holds, for tests only, Go types for the OpenKruise
// workload kinds sluice releases (apps.kruise.io CloneSet, Advanced
// StatefulSet and Advanced DaemonSet), limited to the fields sluice reads
// and writes and those the test controllers in test/fakeoperators honour,
// under the JSON names of OpenKruise's API. The openkruise/kruise-api module
// is not available to this project, and sluice itself never needs these
// types: its adapter works on unstructured objects, which keeps every field
// of the real kinds. The types exist to generate the test CRDs in
// test/e2e/testdata/partition (go generate) and to build test objects.
//
// They live under test/ rather than api/ because api/ holds the APIs sluice
// serves; these describe someone else's API, and only as far as the tests
// need.
package kruiseapi

//go:generate ../../bin/controller-gen-v0.23.0 object:headerFile=../../hack/boilerplate.go.txt paths=./...
//go:generate ../../bin/controller-gen-v0.23.0 crd paths=./... output:crd:artifacts:config=../e2e/testdata/partition

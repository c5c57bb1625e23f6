// Package chaos holds sluice's long fault tests (make chaos): kill storms,
// leader failover, kube-apiserver restarts and etcd pauses, a flood of
// forged GitHub deliveries, and an SCM storm (the GitHub fake failing with
// 500, 403 and 429 during a GitOps release applied by real Flux), each while
// releases run on the local control plane. They are built only with the chaos build tag, so make test does
// not run them:
//
//	go test -tags chaos -count=1 -timeout 60m ./test/chaos/
//
// CHAOS_KILLS sets how many times the kill storm kills the manager (default
// 50). Every judgement is made from the Rollouts' own records (the
// approvals sluice recorded in sluice.dev/approvals) and the pods at each
// pause, never from a watch re-opened after a restart.
package chaos

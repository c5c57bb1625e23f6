package helm

// justified is why the manager needs verbs of a resource that the release
// in TestChart_installed_* does not use.
type justified struct {
	// verbs, space-separated.
	verbs string
	// why the manager needs them: the code path, with the test that runs it.
	why string
}

// unexercised lists, by "group/resource", what the chart grants that a
// two-step release of a Deployment does not use. Everything the chart grants
// is either used in that release or listed here, and nothing is listed that
// the chart does not grant; the rules themselves are the controllers' RBAC
// markers (TestChart_rbac_sameRulesAsMarkers) plus the leader election Role
// and the conversion ClusterRole.
var unexercised = map[string]justified{
	// Reading through the cache: client-go fills informers with a streaming
	// list (a watch with initial events), so "list" shows up only on API
	// servers without it; "get" where code reads uncached.
	"/pods": {"get list delete", "pods are read through the cache (progress deadline: the pods that are not ready); " +
		"DaemonSet batches delete old pods (test/e2e/daemonset)"},
	"apps/replicasets": {"get list patch", "cache fill (see above); the watch is used here. An abort of an in-place " +
		"Deployment resizes its ReplicaSets to hold every pod on the stable revision (test/e2e/abort_deployment_test), " +
		"and a ReplicaSet sluice wrote is read from the API server until the cache has caught up with the write " +
		"(internal/ownwrites); a release without an abort reads them only from the cache"},
	"rollouts.kruise.io/rollouts": {"create get list" + noUpdate, "cache fill, the watch is used here; get: Rollouts are " +
		"read from the cache once the storage guard has seen them all stored as v1beta1, and from the API server only " +
		"until the cache has caught up with sluice's own last write (internal/ownwrites), which a run may not meet; " +
		"create: the dry-run probes of the conversion before the storage guard stores the objects of a cluster where " +
		"OpenKruise stored v1alpha1 again (test/migrate); here every object is stored as v1beta1 already"},
	"apiextensions.k8s.io/customresourcedefinitions/status": {"patch", "the storage guard sets storedVersions to [v1beta1] " +
		"once it has stored every Rollout and BatchRelease again (test/migrate)"},
	"rollouts.kruise.io/batchreleases": {"get list" + noUpdate, "cache fill, the watch is used here; get: as for " +
		"Rollouts, only until the cache has caught up with sluice's own write"},
	"apps/deployments": {"create delete get list" + noUpdate, "canary-style Deployments: the extra canary Deployment " +
		"is created and deleted (enableExtraWorkloadForCanary, test/e2e/canary_deployment_test); get: the workload is " +
		"read from the cache, and from the API server only until the cache has caught up with sluice's own last write " +
		"(internal/ownwrites), which a run may not meet"},
	"apps/statefulsets":           {"get list patch" + noUpdate, "releases of StatefulSets through their partition (test/e2e/partition_*)"},
	"apps/daemonsets":             {"get list patch" + noUpdate, "releases of DaemonSets node by node (test/e2e/daemonset)"},
	"apps/controllerrevisions":    {"get list watch", "revisions of StatefulSets and DaemonSets (partition and daemonset adapters)"},
	"apps.kruise.io/clonesets":    {"get list watch patch" + noUpdate, "OpenKruise CloneSets (watched only when the kind is served)"},
	"apps.kruise.io/daemonsets":   {"get list watch patch" + noUpdate, "OpenKruise Advanced DaemonSets (watched only when served)"},
	"apps.kruise.io/statefulsets": {"get list watch patch" + noUpdate, "OpenKruise Advanced StatefulSets (watched only when served)"},
	"admissionregistration.k8s.io/mutatingwebhookconfigurations": {"list create patch delete", "the webhook rules controller " +
		"writes StatefulSet-like custom kinds into a webhook configuration of sluice's own, and deletes it when no Rollout " +
		"names one (TestChart_helmUpgrade_keepsTheCustomKindRules, test/e2e/partition_custom_test); its reads and watch are used here"},
	"apiextensions.k8s.io/customresourcedefinitions": {"get list", "the CRD of a StatefulSet-like custom kind, read " +
		"uncached when a Rollout names one; the metadata watch is used here"},
	// Status: every write is a patch of the status subresource.
	"rollouts.kruise.io/rollouts/status":      {"get" + noUpdate, "no call reads status alone"},
	"rollouts.kruise.io/batchreleases/status": {"get" + noUpdate, "no call reads status alone"},
	// Owner references with blockOwnerDeletion need update on the owner's
	// finalizers where the OwnerReferencesPermissionEnforcement admission
	// plugin runs (not on the local control plane).
	"rollouts.kruise.io/rollouts/finalizers":      {"update", "the BatchRelease's owner reference to its Rollout"},
	"rollouts.kruise.io/batchreleases/finalizers": {"update", "owner references to a BatchRelease"},
	// Events: a repeated event is patched (its series) instead of created.
	"events.k8s.io/events": {"get list watch patch", "a repeated event's series (patch); the web view's events " +
		"timeline reads events through the cache (test/web, off unless --web-bind-address is set)"},
	"/configmaps": {"get", "the Lua scripts of custom traffic routes, read from ConfigMap kruise-rollout-configuration " +
		"in the release namespace (test/e2e/traffic_lua_test)"},
	"/events": {"patch", "a repeated leader election event"},
	// Traffic routing and GitOps, not part of a plain release.
	"/services":                            {"get list create update patch delete", "canary and stable Services of trafficRoutings; list fills the metadata cache the Rollout controller watches"},
	"networking.k8s.io/ingresses":          {"get list create update patch delete", "traffic routing through a canary Ingress; list fills the metadata cache"},
	"gateway.networking.k8s.io/httproutes": {"get list watch update patch", "traffic routing through Gateway API HTTPRoutes; watched when served as sluice starts"},
	// TrafficRoutings (test/e2e/traffic_routingref_test).
	"rollouts.kruise.io/trafficroutings":            {"get list update patch", "TrafficRoutings: cache fill, the finalizers Rollouts and the controller put on them"},
	"rollouts.kruise.io/trafficroutings/status":     {"get update patch", "the TrafficRouting controller reports on TrafficRoutings"},
	"rollouts.kruise.io/trafficroutings/finalizers": {"update", "owner references to a TrafficRouting (its canary Ingress)"},
	"/secrets": {"get", "GitGates read the Git credentials Secret they name; metric providers and notification sinks read their credentials"},
	"gitops.sluice.dev/gitgates": {"get list patch", "the GitOps controller reads GitGates (cache fill); a webhook delivery " +
		"to any replica asks the gates of its repository to reconcile through reconcile.fluxcd.io/requestedAt (test/gitops ha_test)"},
	"gitops.sluice.dev/gitgates/status": {"get update patch", "the GitOps controller reports on GitGates"},
	"argoproj.io/applications":          {"get", "GitOps: the Argo CD Application a GitGate follows"},
	// Analysis and notifications, not part of a plain release
	// (controllers/analysis, controllers/notification).
	"analysis.sluice.dev/metricgates":            {"get list", "MetricGates: read uncached by their controller, cache fill; the watch is used here"},
	"analysis.sluice.dev/metricgates/status":     {"get update patch", "the MetricGate controller records measurements and verdicts"},
	"batch/jobs":                                 {"get list create delete", "Job metrics: one Job per measurement, earlier ones deleted; the watch is used here"},
	"notification.sluice.dev/notifiers":          {"get list", "Notifiers: read uncached by their controller, cache fill; the watch is used here"},
	"notification.sluice.dev/notifiers/status":   {"get update patch", "the Notifier controller keeps its outbox and deliveries"},
	"kustomize.toolkit.fluxcd.io/kustomizations": {"get", "GitOps: the Flux Kustomization a GitGate follows"},
}

// noUpdate marks an "update" the markers grant but no code calls: sluice
// writes workloads, Rollouts, BatchReleases and their status with patches
// only. The markers could drop it; until they do, the chart grants it.
const noUpdate = " update"

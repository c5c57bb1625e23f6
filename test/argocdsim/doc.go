// Package argocdsim stands in for Argo CD in sluice's tests: Argo CD cannot
// be built here (its Go modules do not resolve from the module proxy), so
// this package does, against a real control plane, the part of Argo CD that
// sluice meets: an Application with automated sync and self-heal that keeps
// a path of a Git branch applied.
//
// What is simulated, exactly:
//
//   - Refresh: every Interval (and on SyncNow), the branch head is fetched
//     from the repository's URL over Git's smart HTTP (go-git, like Argo
//     CD's repo-server) and every .yaml, .yml and .json file under Path
//     (recursively; several documents per file allowed) is read as plain
//     manifests. No Kustomize, Helm or plugins, no sync waves or hooks:
//     objects are applied in file order.
//   - Sync (automated, selfHeal: true): every manifest is applied each
//     refresh. An object whose live state already matches Git for the fields
//     Git sets is left alone (no write); one that drifted is put back,
//     which is Argo CD's self-heal. Namespaced objects without a namespace
//     go to Destination.
//   - How it applies: by default as Argo CD does by default, a client-side
//     apply as `kubectl apply` computes it: a three-way patch of the
//     kubectl.kubernetes.io/last-applied-configuration annotation, the new
//     manifest and the live object (a strategic merge patch for built-in
//     kinds, a JSON merge patch for custom resources), sent with the field
//     manager argocd-controller, the annotation updated. With
//     ServerSideApply (the ServerSideApply=true sync option) it is a
//     server-side apply by argocd-controller with forced conflicts.
//   - Tracking: every applied object gets Argo CD's default resource
//     tracking annotation argocd.argoproj.io/tracking-id,
//     "<app>:<group>/<kind>:<namespace>/<name>", where <app> is the
//     Application's name, or "<namespace>_<name>" when the Application is
//     not in Argo CD's namespace (argocd).
//   - The Application: Start creates it (when missing) with its source,
//     destination and an automated, self-healing sync policy. A refresh
//     that changes anything (another commit, a sync that wrote, an error)
//     writes status.sync (status Synced or OutOfSync, revision: the commit
//     compared, comparedTo) and status.reconciledAt, and after a sync that
//     wrote or failed, status.operationState with the sync result's
//     revision; Argo CD also writes reconciledAt on every refresh, which
//     nothing here reads. The Application's CRD has no status subresource,
//     so status is written with a merge patch of the object, as Argo CD
//     does.
//
// Not simulated: pruning, health assessment, ignoreDifferences, the UI and
// API, multi-source Applications, and Argo CD's diff normalisation beyond
// "the fields Git sets".
package argocdsim

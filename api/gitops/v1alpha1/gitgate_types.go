package v1alpha1

import (
	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// GitGate binds the Rollouts its selector picks to the Git branch their
// manifests are applied from and to the repository on GitHub, Gitea (or
// Forgejo) or GitLab that hosts it: a
// label on the pull request that brought the revision being released, or a
// commit on the branch with a sluice trailer, approves a step, promotes the
// release fully or rolls it back; a commit that reverts the revision rolls it
// back; and a commit status on that revision reports each Rollout's progress.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=gg
// +kubebuilder:printcolumn:name="REPOSITORY",type="string",JSONPath=".spec.github.repository",description="The GitHub repository (spec.github), owner/name."
// +kubebuilder:printcolumn:name="SCM",type="string",JSONPath=".spec.scm.repository",description="The repository of spec.scm.",priority=1
// +kubebuilder:printcolumn:name="BRANCH",type="string",JSONPath=".spec.git.branch",description="The branch watched."
// +kubebuilder:printcolumn:name="HEAD",type="string",JSONPath=".status.head",description="The branch head last read.",priority=1
// +kubebuilder:printcolumn:name="ROLLOUTS",type="integer",JSONPath=".status.boundRollouts",description="How many Rollouts are bound."
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Whether the last reconciliation succeeded."
// +kubebuilder:printcolumn:name="STATUS",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].message",description="What the last reconciliation found."
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type GitGate struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says what the gate binds and how it decides.
	// +required
	Spec GitGateSpec `json:"spec"`
	// Status reports what the gate last saw and did.
	// +optional
	Status GitGateStatus `json:"status,omitempty"`
}

// GitGateList is a list of GitGates.
//
// +kubebuilder:object:root=true
type GitGateList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the GitGates.
	Items []GitGate `json:"items"`
}

// GitGateSpec binds Rollouts to a Git branch and the repository of a
// source-code host.
// +kubebuilder:validation:XValidation:rule="!(has(self.github) && has(self.scm))",message="set spec.scm or spec.github, not both (spec.github is spec.scm with provider github)"
// +kubebuilder:validation:XValidation:rule="has(self.scm) || has(self.github) || !has(self.approval) || !has(self.approval.requiredApprovers) || size(self.approval.requiredApprovers) == 0",message="spec.approval.requiredApprovers needs spec.scm or spec.github: required approvers are users and teams of the host",fieldPath=".approval.requiredApprovers"
type GitGateSpec struct {
	// Git is the repository and branch the Rollouts' manifests are applied
	// from.
	// +required
	Git GitSource `json:"git"`
	// GitHub is the repository on GitHub (or GitHub Enterprise) that hosts
	// the branch: its pull requests carry the approval labels, its commits
	// the statuses. Without it the gate works from Git alone: trailers,
	// reverts and declarative approvals apply, no label is read and no
	// status is posted (the CommitStatuses condition says so).
	// +optional
	GitHub *GitHubRepository `json:"github,omitempty"`
	// SCM is the repository on a source-code host (GitHub, Gitea or
	// Forgejo, GitLab) that hosts the branch: its pull or merge requests
	// carry the approval labels, its commits the statuses. It is the
	// general form of spec.github (one or the other); without either the
	// gate works from Git alone.
	// +optional
	SCM *SCMRepository `json:"scm,omitempty"`
	// RolloutSelector picks the Rollouts of the GitGate's namespace that it
	// binds. An empty selector binds every Rollout of the namespace.
	// +required
	RolloutSelector metav1.LabelSelector `json:"rolloutSelector"`
	// Revision says where the commit a Rollout is releasing is read from.
	// +optional
	Revision RevisionSource `json:"revision,omitempty"`
	// Approval says who may approve and how.
	// +optional
	Approval ApprovalPolicy `json:"approval,omitempty"`
	// Status says how the commit statuses are named and linked.
	// +optional
	Status StatusPolicy `json:"status,omitempty"`
	// WebhookSecretRef names a Secret of the GitGate's namespace whose key
	// "token" holds the secret of the GitHub webhook that notifies sluice of
	// label and push events (X-Hub-Signature-256). Without it deliveries
	// for this repository are not accepted and only the poll reads changes.
	// On Gitea the key holds the webhook's secret (X-Gitea-Signature,
	// /hook/gitea), on GitLab its secret token (X-Gitlab-Token,
	// /hook/gitlab).
	// +optional
	WebhookSecretRef *meta.LocalObjectReference `json:"webhookSecretRef,omitempty"`
	// Interval is how often the branch and the pull requests are read when
	// no webhook delivery says they changed.
	// +kubebuilder:default="1m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	Interval metav1.Duration `json:"interval,omitempty"`
	// Suspend stops the gate: it reads nothing, applies nothing and posts
	// nothing until it is set back to false. Rollouts keep to their own
	// steps.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// GitSource is a branch of a Git repository.
type GitSource struct {
	// URL of the repository: https://host/owner/repo.git,
	// ssh://git@host/owner/repo.git or git@host:owner/repo.git, without
	// credentials.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('https://') || self.startsWith('http://') || self.startsWith('ssh://') || self.matches('^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:.+$')",message="url must be https://, ssh:// or user@host:path"
	// +required
	URL string `json:"url"`
	// Branch watched, without refs/heads/.
	// +kubebuilder:default=main
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Branch string `json:"branch,omitempty"`
	// SecretRef names a Secret of the GitGate's namespace with the
	// credentials: for HTTPS "username" and "password" (a token as
	// password), or "bearerToken"; for SSH "identity" (a private key),
	// optionally "passphrase", and "known_hosts" (required for SSH).
	// "ca.crt" adds certificates to trust for HTTPS.
	// +optional
	SecretRef *meta.LocalObjectReference `json:"secretRef,omitempty"`
}

// GitHubRepository is a repository on GitHub or GitHub Enterprise.
type GitHubRepository struct {
	// Repository is "owner/name".
	// +kubebuilder:validation:Pattern="^[A-Za-z0-9-]+/[A-Za-z0-9._-]+$"
	// +kubebuilder:validation:MaxLength=140
	// +required
	Repository string `json:"repository"`
	// APIURL is the REST API's root: https://api.github.com/ (the default)
	// or https://<host>/api/v3/ for GitHub Enterprise Server.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('https://') || self.startsWith('http://')",message="apiURL must be an http(s) URL"
	// +optional
	APIURL string `json:"apiURL,omitempty"`
	// SecretRef names a Secret of the GitGate's namespace with the API
	// credentials: "token" (a personal access or fine-grained token), or a
	// GitHub App's "appID", "installationID" and "privateKey" (PEM).
	// +required
	SecretRef meta.LocalObjectReference `json:"secretRef"`
	// ProposeRevert opens a pull request reverting the commit of a release
	// rolled back by the rollback label, so that Git converges on the
	// stable revision.
	// +optional
	ProposeRevert bool `json:"proposeRevert,omitempty"`
}

// StepTimeoutAction is what a step does once it waited its StepTimeout.
type StepTimeoutAction string

// The actions of a step that waited too long for its approval.
const (
	// StepTimeoutAbort aborts the release, holding it on stable.
	StepTimeoutAbort StepTimeoutAction = "Abort"
	// StepTimeoutWait keeps waiting and says the step is overdue.
	StepTimeoutWait StepTimeoutAction = "Wait"
)

// SCMProvider names a kind of source-code host.
// +kubebuilder:validation:Enum=github;gitea;gitlab
type SCMProvider string

// The source-code hosts a GitGate can name.
const (
	// SCMGitHub is GitHub or GitHub Enterprise Server.
	SCMGitHub SCMProvider = "github"
	// SCMGitea is Gitea or Forgejo (which keeps Gitea's API).
	SCMGitea SCMProvider = "gitea"
	// SCMGitLab is gitlab.com or a self-managed GitLab.
	SCMGitLab SCMProvider = "gitlab"
)

// SCMRepository is a repository on a source-code host.
// +kubebuilder:validation:XValidation:rule="self.provider != 'gitea' || has(self.apiURL)",message="apiURL is required for gitea: the server's root URL, https://gitea.example.com/"
// +kubebuilder:validation:XValidation:rule="self.provider == 'gitlab' || self.repository.split('/').size() == 2",message="repository must be owner/name on github and gitea (a group path is for gitlab)"
type SCMRepository struct {
	// Provider names the host's kind: github, gitea (Gitea and Forgejo)
	// or gitlab.
	// +required
	Provider SCMProvider `json:"provider"`
	// Repository names the repository as the host does: "owner/name" on
	// GitHub and Gitea, the project's full path ("group/subgroup/name") on
	// GitLab.
	// +kubebuilder:validation:Pattern="^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)+$"
	// +kubebuilder:validation:MaxLength=255
	// +required
	Repository string `json:"repository"`
	// APIURL is where the host's API is: for github the REST API's root
	// (https://api.github.com/, the default, or https://<host>/api/v3/);
	// for gitea the server's root URL (required); for gitlab the server's
	// root URL (https://gitlab.com, the default).
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('https://') || self.startsWith('http://')",message="apiURL must be an http(s) URL"
	// +optional
	APIURL string `json:"apiURL,omitempty"`
	// SecretRef names a Secret of the GitGate's namespace with the API
	// credentials: "token" on every host (on github also a GitHub App's
	// "appID", "installationID" and "privateKey" instead).
	// +required
	SecretRef meta.LocalObjectReference `json:"secretRef"`
	// ProposeRevert opens a pull (merge) request reverting the commit of a
	// release rolled back by the rollback label, so that Git converges on
	// the stable revision.
	// +optional
	ProposeRevert bool `json:"proposeRevert,omitempty"`
}

// RevisionFrom names where the commit being released is read from.
// +kubebuilder:validation:Enum=Auto;Flux;ArgoCD;Annotation
type RevisionFrom string

// The sources of the commit being released.
const (
	// RevisionAuto tries the annotation, then Flux, then Argo CD.
	RevisionAuto RevisionFrom = "Auto"
	// RevisionFlux reads the Kustomization named by the workload's
	// kustomize.toolkit.fluxcd.io/name and /namespace labels.
	RevisionFlux RevisionFrom = "Flux"
	// RevisionArgoCD reads the Application named by the workload's
	// argocd.argoproj.io/tracking-id annotation or app.kubernetes.io/instance
	// label.
	RevisionArgoCD RevisionFrom = "ArgoCD"
	// RevisionAnnotation reads an annotation of the workload.
	RevisionAnnotation RevisionFrom = "Annotation"
)

// DefaultRevisionAnnotation is the workload annotation that names the
// commit of its manifest when no GitOps tool does.
const DefaultRevisionAnnotation = "sluice.dev/revision"

// RevisionPathAnnotation is the workload annotation that names, beside the
// revision annotation, the path of the repository its manifests come from
// ("apps/checkout", a directory or a file). With it, a revision that brings
// several commits counts only those that changed that path as the
// release's (as a Kustomization's spec.path does); without it, every one.
const RevisionPathAnnotation = "sluice.dev/revision-path"

// RevisionSource says where the commit being released is read from.
type RevisionSource struct {
	// From is Auto, Flux, ArgoCD or Annotation.
	// +kubebuilder:default=Auto
	// +optional
	From RevisionFrom `json:"from,omitempty"`
	// Annotation is the workload annotation read by From Annotation (and
	// first by Auto); defaults to sluice.dev/revision.
	// +kubebuilder:validation:MaxLength=317
	// +optional
	Annotation string `json:"annotation,omitempty"`
	// ArgoCDNamespace is where Argo CD's Applications live when the
	// tracking annotation does not say (default argocd).
	// +kubebuilder:validation:MaxLength=63
	// +optional
	ArgoCDNamespace string `json:"argoCDNamespace,omitempty"`
}

// ApprovalPolicy says which labels, comment commands, reviews and trailers
// act on a release, who may use them, and how many must agree: see
// docs/gitops.md#approval-policy.
type ApprovalPolicy struct {
	// Labels names the pull-request labels.
	// +optional
	Labels ApprovalLabels `json:"labels,omitempty"`
	// DisableTrailers ignores sluice trailers (Sluice-Approve,
	// Sluice-Promote-Full, Sluice-Rollback) in commits on the branch.
	// +optional
	DisableTrailers bool `json:"disableTrailers,omitempty"`
	// MinPermission is the least permission on the GitHub repository a user
	// needs for a label to count.
	// +kubebuilder:validation:Enum=triage;write;maintain;admin
	// +kubebuilder:default=write
	// +optional
	MinPermission string `json:"minPermission,omitempty"`
	// AllowedUsers, when set, lists the GitHub logins whose labels count
	// (they also need MinPermission).
	// +kubebuilder:validation:MaxItems=100
	// +listType=set
	// +optional
	AllowedUsers []string `json:"allowedUsers,omitempty"`
	// AllowedTeams, when set, lists GitHub teams as "org/team-slug" whose
	// active members' labels count (they also need MinPermission). With
	// AllowedUsers, a label counts when its author is one of the users or a
	// member of one of the teams. Reading team membership needs the
	// organisation's members:read permission (a token's read:org scope).
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:Pattern="^[A-Za-z0-9-]+/[A-Za-z0-9._-]+$"
	// +kubebuilder:validation:items:MaxLength=140
	// +listType=set
	// +optional
	AllowedTeams []string `json:"allowedTeams,omitempty"`
	// AllowedCommitters, when set, lists the e-mail addresses whose trailer
	// commits count: the signer's identity when SigningKeysSecretRef is
	// set, else the commit's author (which Git does not verify).
	// +kubebuilder:validation:MaxItems=100
	// +listType=set
	// +optional
	AllowedCommitters []string `json:"allowedCommitters,omitempty"`
	// AllowSelfApproval lets the authors of a release approve or promote
	// it. By default they cannot (separation of duties: someone else
	// reviews what goes out): neither the author of a pull request that
	// brought the release nor the author of any of its commits (as the host
	// links the commit's e-mail to an account, or by e-mail for a trailer or
	// a declarative approval), whichever way they approve. A rollback, a
	// rejection or a retry by an author is always allowed.
	// +optional
	AllowSelfApproval bool `json:"allowSelfApproval,omitempty"`
	// MinApprovals is how many different people must approve a step (and a
	// full promotion) before it is applied: each person counts once per
	// step, however many ways they approve (the approve label, a
	// "/sluice approve" comment, an approving review). The approvals given
	// so far are in the gate's status (status.rollouts[].quorum) and the
	// commit status says "1 of 2 approvals (alice); waiting for 1 more".
	// With more than 1, an approval from Git (a trailer, a declarative
	// approval) counts only on a gate without a host, where every approver
	// is named by the e-mail of a commit: a commit's author cannot be told
	// apart from the host's users. Defaults to 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +optional
	MinApprovals int32 `json:"minApprovals,omitempty"`
	// ExpireAfter bounds how old an approval may be when it is counted: one
	// given longer ago than this when the quorum would be reached counts
	// for nothing, and the message says it expired (it has to be given
	// again). Unset, approvals do not expire.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	ExpireAfter *metav1.Duration `json:"expireAfter,omitempty"`
	// RequiredApprovers are sets of people of whom some must be among a
	// step's approvers, as GitHub environments' required reviewers: each
	// set that applies to the step (all of its steps when it names none)
	// must count its minApprovals approvers (default 1) among the people who
	// approved, beside the gate's minApprovals. A full promotion needs the
	// sets of every step it skips. Requires spec.scm or spec.github.
	// +kubebuilder:validation:MaxItems=10
	// +optional
	RequiredApprovers []RequiredApprovers `json:"requiredApprovers,omitempty"`
	// DisableComments ignores "/sluice ..." commands in pull-request
	// comments (see docs/approvals.md for the commands).
	// +optional
	DisableComments bool `json:"disableComments,omitempty"`
	// DisableReviews ignores pull-request reviews: an approving review
	// submitted after a step paused no longer approves it.
	// +optional
	DisableReviews bool `json:"disableReviews,omitempty"`
	// StepTimeout is how long a paused step waits for its approval; unset
	// waits for ever. OnStepTimeout says what happens then.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	StepTimeout *metav1.Duration `json:"stepTimeout,omitempty"`
	// OnStepTimeout is what a step that waited StepTimeout for its
	// approval does: Abort (the default) moves every pod and all traffic
	// back to the stable revision and holds them there until Git changes,
	// as the rollback label does, recorded as sluice's via
	// approval-timeout; Wait only says in the commit status and the gate's
	// status that the step is overdue.
	// +kubebuilder:validation:Enum=Abort;Wait
	// +optional
	OnStepTimeout StepTimeoutAction `json:"onStepTimeout,omitempty"`
	// SigningKeysSecretRef names a Secret of the GitGate's namespace with
	// the keys trailer commits must be signed with: "openpgp" (armored
	// public keys) and/or "allowed_signers" (ssh-keygen format). Unsigned
	// commits and commits signed with another key then count for nothing.
	// +optional
	SigningKeysSecretRef *meta.LocalObjectReference `json:"signingKeysSecretRef,omitempty"`
}

// RequiredApprovers is a set of people some of whom must approve the steps
// it applies to.
// +kubebuilder:validation:XValidation:rule="(has(self.users) && size(self.users) > 0) || (has(self.teams) && size(self.teams) > 0) || (has(self.codeOwners) && self.codeOwners)",message="name users, teams or codeOwners: a set of nobody could never approve"
// +kubebuilder:validation:XValidation:rule="!has(self.minApprovals) || (has(self.teams) && size(self.teams) > 0) || (has(self.codeOwners) && self.codeOwners) || (has(self.users) && self.minApprovals <= size(self.users))",message="minApprovals is more than the users listed, and no team or code owners can make up the rest",fieldPath=".minApprovals"
type RequiredApprovers struct {
	// Name names the set in messages and statuses ("security"); defaults to
	// a description of its members.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Name string `json:"name,omitempty"`
	// Steps are the steps (from 1) whose approval needs the set; empty,
	// every step.
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:Minimum=1
	// +listType=set
	// +optional
	Steps []int32 `json:"steps,omitempty"`
	// Users are logins on the host.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=255
	// +listType=set
	// +optional
	Users []string `json:"users,omitempty"`
	// Teams are teams on the host, "org/team-slug" (on GitLab
	// "group/subgroup"), whose active members belong to the set. Reading
	// membership needs the permissions spec.approval.allowedTeams needs.
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:Pattern="^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)+$"
	// +kubebuilder:validation:items:MaxLength=255
	// +listType=set
	// +optional
	Teams []string `json:"teams,omitempty"`
	// CodeOwners adds the code owners of the workload's manifest path (the
	// Kustomization's spec.path or the Argo CD source's path) to the set:
	// the owners the repository's CODEOWNERS file (CODEOWNERS,
	// .github/CODEOWNERS, docs/CODEOWNERS or .gitea/CODEOWNERS on the
	// gate's branch, the first found) gives that path, by its last matching
	// pattern as GitHub reads it. "@user" owners are users, "@org/team"
	// owners teams; e-mail owners are matched against the e-mail of a Git
	// approval. No CODEOWNERS file, or no owner for the path, leaves the
	// set waiting and says so.
	// +optional
	CodeOwners bool `json:"codeOwners,omitempty"`
	// MinApprovals is how many different members of the set must approve;
	// defaults to 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +optional
	MinApprovals int32 `json:"minApprovals,omitempty"`
}

// ApprovalLabels names the pull-request labels.
type ApprovalLabels struct {
	// Approve approves the step the release is paused at.
	// +kubebuilder:default="sluice/approve"
	// +kubebuilder:validation:MaxLength=50
	// +optional
	Approve string `json:"approve,omitempty"`
	// PromoteFull approves every remaining step.
	// +kubebuilder:default="sluice/promote-full"
	// +kubebuilder:validation:MaxLength=50
	// +optional
	PromoteFull string `json:"promoteFull,omitempty"`
	// Rollback aborts the release: every pod and all traffic go back to
	// the stable revision at once, without the pod template changing, until
	// the revert syncs or a new commit arrives.
	// +kubebuilder:default="sluice/rollback"
	// +kubebuilder:validation:MaxLength=50
	// +optional
	Rollback string `json:"rollback,omitempty"`
	// Retry releases an aborted revision again from step 1.
	// +kubebuilder:default="sluice/retry"
	// +kubebuilder:validation:MaxLength=50
	// +optional
	Retry string `json:"retry,omitempty"`
	// Reject aborts the release as Rollback does (every pod and all traffic
	// back on the stable revision at once, the pod template left as Git has
	// it), recorded and reported as a rejection of the commit: "rejected:
	// label sluice/reject by <user> on pull request #N". Anyone who may
	// roll back may reject, the pull request's author too.
	// +kubebuilder:default="sluice/reject"
	// +kubebuilder:validation:MaxLength=50
	// +optional
	Reject string `json:"reject,omitempty"`
}

// StatusPolicy says how commit statuses are named and linked, and whether
// the pull request gets sluice's comment and check runs.
type StatusPolicy struct {
	// Context names each Rollout's commit status; ${namespace} and
	// ${rollout} are replaced. Default "sluice/${namespace}/${rollout}".
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Context string `json:"context,omitempty"`
	// TargetURL links each status to a page about the release; ${namespace},
	// ${rollout} and ${revision} are replaced. Empty posts no link.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	TargetURL string `json:"targetURL,omitempty"`
	// Disabled posts no commit statuses.
	// +optional
	Disabled bool `json:"disabled,omitempty"`
	// DisableComment posts no comment on pull requests. By default each
	// bound Rollout keeps one comment on the pull request of the release,
	// edited in place as it moves on: its steps with the current one
	// marked, the pods and requests of each revision, who approved what,
	// what was refused and why, and how to move it on.
	// +optional
	DisableComment bool `json:"disableComment,omitempty"`
	// DisableCheckRuns posts no check runs. When sluice runs as a GitHub App
	// (spec.github or spec.scm with an App's credentials), each bound
	// Rollout keeps a check run, named like its commit status, on the
	// commit being released, with the comment's summary and the buttons
	// "Approve step N", "Promote" and "Roll back"; a press is an approval
	// by whoever pressed it, under the approval policy. Tokens cannot write
	// check runs: with a token there are none, whatever this says.
	// +optional
	DisableCheckRuns bool `json:"disableCheckRuns,omitempty"`
}

// GetConditions returns the conditions.
func (g *GitGate) GetConditions() []metav1.Condition { return g.Status.Conditions }

// SetConditions sets the conditions.
func (g *GitGate) SetConditions(c []metav1.Condition) { g.Status.Conditions = c }

// Binds tells whether the gate's rolloutSelector picks a Rollout with
// these labels (an empty selector picks every Rollout of its namespace;
// one that does not parse, none). The namespace is the caller's to match.
func (g *GitGate) Binds(rolloutLabels map[string]string) bool {
	sel, err := metav1.LabelSelectorAsSelector(&g.Spec.RolloutSelector)
	return err == nil && sel.Matches(labels.Set(rolloutLabels))
}

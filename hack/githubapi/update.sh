#!/usr/bin/env bash
# Regenerates test/githubfake/testdata/{api.github.com,webhooks}.trimmed.json from GitHub's
# published descriptions, as npm packages at pinned versions:
#   @octokit/openapi          generated/api.github.com.json (OpenAPI 3.0 of api.github.com)
#   @octokit/webhooks-schemas schema.json (JSON Schema draft-07 of every webhook payload)
# Usage: hack/githubapi/update.sh   (from the repository root; needs npm and go)
set -euo pipefail
OPENAPI_VERSION=23.0.2
WEBHOOKS_VERSION=7.6.1
EVENTS='check_run$requested_action,ping$event,pull_request$opened,pull_request$reopened,pull_request$synchronize,pull_request$closed,pull_request$labeled,pull_request$unlabeled,push$event,issue_comment$created,issue_comment$edited,pull_request_review$submitted,pull_request_review$dismissed'

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "@octokit/openapi@${OPENAPI_VERSION}" "@octokit/webhooks-schemas@${WEBHOOKS_VERSION}" >/dev/null)
mkdir -p "$tmp/openapi" "$tmp/webhooks"
tar -xzf "$tmp/octokit-openapi-${OPENAPI_VERSION}.tgz" -C "$tmp/openapi"
tar -xzf "$tmp/octokit-webhooks-schemas-${WEBHOOKS_VERSION}.tgz" -C "$tmp/webhooks"

cd "$root"
go run ./hack/githubapi -mode openapi \
  -in "$tmp/openapi/package/generated/api.github.com.json" \
  -ops hack/githubapi/operations.txt \
  -note "Trimmed by hack/githubapi/update.sh from @octokit/openapi@${OPENAPI_VERSION} generated/api.github.com.json to the operations in hack/githubapi/operations.txt." \
  -out test/githubfake/testdata/api.github.com.trimmed.json
go run ./hack/githubapi -mode webhooks \
  -in "$tmp/webhooks/package/schema.json" \
  -events "$EVENTS" \
  -note "Trimmed by hack/githubapi/update.sh from @octokit/webhooks-schemas@${WEBHOOKS_VERSION} schema.json to ${EVENTS}." \
  -out test/githubfake/testdata/webhooks.trimmed.json

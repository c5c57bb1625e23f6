package gitea

import (
	"errors"
	"fmt"
	"net/http"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// mapError turns what the SDK (or a raw request) returns into the scm errors. what names the
// object asked for. The SDK's error text is the server's "message".
func (c *Client) mapError(err error, resp *sdk.Response, what string) error {
	if err == nil {
		return nil
	}
	var limited *scm.RateLimitError
	if errors.As(err, &limited) {
		return fmt.Errorf("%s: %w", what, limited)
	}
	status := 0
	if resp != nil && resp.Response != nil {
		status = resp.StatusCode
	}
	return fmt.Errorf("%s: %w", what, statusError(status, what, err))
}

// statusError is the scm error of an HTTP status (err itself for the others).
func statusError(status int, what string, err error) error {
	switch status {
	case http.StatusNotFound:
		return &scm.NotFoundError{What: what, Message: err.Error()}
	case http.StatusUnauthorized, http.StatusForbidden:
		return &scm.UnauthorizedError{StatusCode: status, Message: err.Error()}
	}
	return err
}

// statusOf returns the HTTP status of an SDK answer, 0 without one.
func statusOf(resp *sdk.Response) int {
	if resp == nil || resp.Response == nil {
		return 0
	}
	return resp.StatusCode
}

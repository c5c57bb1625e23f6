package gitlab

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// mapError turns what client-go returns into the scm errors. what names the object asked for.
// client-go answers a 404 with its ErrNotFound (GitLab's message is not kept); other error
// answers are *gl.ErrorResponse carrying GitLab's message.
func mapError(err error, resp *gl.Response, what string) error {
	if err == nil {
		return nil
	}
	var limited *scm.RateLimitError
	if errors.As(err, &limited) {
		return fmt.Errorf("%s: %w", what, limited)
	}
	switch status := statusOf(resp); {
	case status == http.StatusNotFound || errors.Is(err, gl.ErrNotFound):
		return fmt.Errorf("%s: %w", what, &scm.NotFoundError{What: what, Message: "404 Not Found"})
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Errorf("%s: %w", what, &scm.UnauthorizedError{StatusCode: status, Message: messageOf(err)})
	}
	return fmt.Errorf("%s: %w", what, err)
}

// statusOf returns the HTTP status of a client-go answer, 0 without one.
func statusOf(resp *gl.Response) int {
	if resp == nil || resp.Response == nil {
		return 0
	}
	return resp.StatusCode
}

// messageOf is GitLab's message of an error answer (its "message", or "error" for a parameter
// GitLab's API framework refused), else client-go's rendering of the body, else the error's
// text.
func messageOf(err error) string {
	var er *gl.ErrorResponse
	if !errors.As(err, &er) {
		return err.Error()
	}
	var body struct {
		Message any    `json:"message"`
		Error   string `json:"error"`
	}
	if json.Unmarshal(er.Body, &body) == nil {
		if m, ok := body.Message.(string); ok && m != "" {
			return m
		}
		if body.Error != "" {
			return body.Error
		}
	}
	if er.Message != "" {
		return er.Message
	}
	return err.Error()
}

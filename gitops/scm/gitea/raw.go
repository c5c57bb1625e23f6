package gitea

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	sdk "code.gitea.io/sdk/gitea"
)

// maxResponseBody caps a response read by getJSON.
const maxResponseBody = 16 << 20

// getJSON sends GET /api/v1{path}?{query} through the client's transport, authenticated like
// the SDK's requests, and decodes a 2xx JSON answer into out. A non-2xx answer is an error
// carrying the server's message, with the response for mapError. It serves the requests the SDK
// cannot express.
func (c *Client) getJSON(ctx context.Context, path string, query url.Values, out any) (*sdk.Response, error) {
	u := c.base + "/api/v1" + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, http.NoBody)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "token "+c.token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.agent)
	httpResp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = httpResp.Body.Close() }()
	resp := &sdk.Response{Response: httpResp}
	body, err := io.ReadAll(io.LimitReader(httpResp.Body, maxResponseBody))
	if err != nil {
		return resp, fmt.Errorf("reading the answer: %w", err)
	}
	if httpResp.StatusCode/100 != 2 {
		return resp, errors.New(serverMessage(httpResp.Status, body))
	}
	if err := json.Unmarshal(body, out); err != nil {
		return resp, fmt.Errorf("decoding the answer: %w", err)
	}
	return resp, nil
}

// serverMessage returns the "message" of a Gitea error body, or the status and the start of
// the body.
func serverMessage(status string, body []byte) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) == nil && e.Message != "" {
		return e.Message
	}
	text := strings.TrimSpace(string(body))
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	if text == "" {
		return status
	}
	return status + ": " + text
}

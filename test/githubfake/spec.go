package githubfake

import (
	"bytes"
	"context"
	_ "embed" // the trimmed API descriptions
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// The trimmed descriptions (see testdata/README.md for how they were produced).
var (
	//go:embed testdata/api.github.com.trimmed.json
	restDescription []byte
	//go:embed testdata/webhooks.trimmed.json
	webhookSchemas []byte
)

// spec validates requests and responses against GitHub's OpenAPI description.
type spec struct {
	doc    *openapi3.T
	router routers.Router
	// multiSegment matches the operations whose {ref} parameter spans several path segments
	// (x-multi-segment in GitHub's description), which a path router cannot match as one.
	multiSegment *regexp.Regexp
}

// loadSpec loads the embedded description with base as its only server.
func loadSpec(base string) (*spec, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(restDescription)
	if err != nil {
		return nil, fmt.Errorf("loading the GitHub description: %w", err)
	}
	// Examples are documentation: GitHub's description has some that do not match their own
	// schema (a quoted date-time in nullable-git-user), which says nothing of the schemas.
	if err := doc.Validate(context.Background(), openapi3.DisableExamplesValidation()); err != nil {
		return nil, fmt.Errorf("the GitHub description is invalid: %w", err)
	}
	doc.Servers = openapi3.Servers{{URL: base}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, err
	}
	return &spec{doc: doc, router: router, multiSegment: regexp.MustCompile(`^(/repos/[^/]+/[^/]+/git/refs?/)(.+)$`)}, nil
}

// route finds the operation of a request and its path parameters.
func (s *spec) route(req *http.Request) (*routers.Route, map[string]string, error) {
	m := s.multiSegment.FindStringSubmatch(req.URL.Path)
	if m == nil {
		return s.router.FindRoute(req)
	}
	probe := req.Clone(req.Context())
	probe.URL = &url.URL{Scheme: req.URL.Scheme, Host: req.URL.Host, Path: m[1] + "ref", RawQuery: req.URL.RawQuery}
	if probe.URL.Host == "" {
		probe.URL.Host = req.Host
	}
	route, params, err := s.router.FindRoute(probe)
	if err != nil {
		return nil, nil, err
	}
	params["ref"] = m[2]
	return route, params, nil
}

// validateRequest checks a request against its operation; the body is left readable.
func (s *spec) validateRequest(ctx context.Context, req *http.Request, route *routers.Route, params map[string]string) error {
	return openapi3filter.ValidateRequest(ctx, &openapi3filter.RequestValidationInput{
		Request:    req,
		PathParams: params,
		Route:      route,
		Options: &openapi3filter.Options{
			MultiError:                        true,
			RejectWhenRequestBodyNotSpecified: true,
			AuthenticationFunc:                openapi3filter.NoopAuthenticationFunc,
		},
	})
}

// validateResponse checks a response against its operation: the status must be one the
// operation documents, and the body must match its schema.
func (s *spec) validateResponse(ctx context.Context, req *http.Request, route *routers.Route, params map[string]string, status int, header http.Header, body []byte) error {
	return openapi3filter.ValidateResponse(ctx, &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{ExcludeRequestBody: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status: status,
		Header: header,
		Body:   io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{
			MultiError:            true,
			IncludeResponseStatus: true,
		},
	})
}

// validateError checks an error body against GitHub's basic-error schema (used for the
// failures the fake injects, whose status an operation may not document).
func (s *spec) validateError(body []byte) error {
	ref := s.doc.Components.Schemas["basic-error"]
	if ref == nil {
		return fmt.Errorf("the description has no basic-error schema")
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return err
	}
	return ref.Value.VisitJSON(v, openapi3.MultiErrors())
}

// responseSchema returns the JSON schema of an operation's response with the given status.
func (s *spec) responseSchema(route *routers.Route, status int) *openapi3.Schema {
	resp := route.Operation.Responses.Status(status)
	if resp == nil || resp.Value == nil {
		return nil
	}
	media := resp.Value.Content.Get("application/json")
	if media == nil || media.Schema == nil {
		return nil
	}
	return media.Schema.Value
}

// skeleton builds the smallest value that satisfies schema: every required property, with
// null where allowed, the first enum value, the first alternative of a oneOf or anyOf. The fake
// lays its own values over it (fill), so a response carries every field GitHub always sends
// while the values the client reads come from the fake's state.
func skeleton(schema *openapi3.Schema, depth int) any {
	if schema == nil || depth > 12 {
		return nil
	}
	if len(schema.AllOf) > 0 {
		merged := map[string]any{}
		for _, part := range schema.AllOf {
			if m, ok := skeleton(part.Value, depth+1).(map[string]any); ok {
				merged = overlay(merged, m).(map[string]any)
			}
		}
		return merged
	}
	if len(schema.OneOf) > 0 {
		return skeleton(schema.OneOf[0].Value, depth+1)
	}
	if len(schema.AnyOf) > 0 {
		return skeleton(schema.AnyOf[0].Value, depth+1)
	}
	if schema.Const != nil {
		return schema.Const
	}
	if len(schema.Enum) > 0 {
		return schema.Enum[0]
	}
	if schema.Type.IncludesNull() {
		return nil
	}
	switch {
	case schema.Type.Includes("object") || schema.Properties != nil:
		out := map[string]any{}
		required := append([]string(nil), schema.Required...)
		sort.Strings(required)
		for _, name := range required {
			prop := schema.Properties[name]
			if prop == nil || prop.Value == nil {
				out[name] = "x"
				continue
			}
			if prop.Value.Nullable || prop.Value.Type.IncludesNull() {
				out[name] = nil
				continue
			}
			out[name] = skeleton(prop.Value, depth+1)
		}
		return out
	case schema.Type.Includes("array"):
		return []any{}
	case schema.Type.Includes("integer"), schema.Type.Includes("number"):
		if schema.Min != nil && *schema.Min > 1 {
			return *schema.Min
		}
		return 1
	case schema.Type.Includes("boolean"):
		return false
	case schema.Type.Includes("string"):
		switch schema.Format {
		case "date-time":
			return "2024-01-01T00:00:00Z"
		case "uri", "uri-template":
			return "https://github.invalid/"
		case "email":
			return "fake@github.invalid"
		}
		return "x"
	}
	if schema.Nullable {
		return nil
	}
	return "x"
}

// fill lays values over the skeleton of schema; an array schema fills each element.
func fill(schema *openapi3.Schema, values any) any {
	if schema == nil {
		return values
	}
	if list, ok := values.([]any); ok && schema.Items != nil {
		out := make([]any, len(list))
		for i, e := range list {
			out[i] = fill(schema.Items.Value, e)
		}
		return out
	}
	if m, ok := values.(map[string]any); ok {
		return fillObject(schema, m, 0)
	}
	return values
}

// fillObject fills an object and, through the schema's properties, the objects nested in it.
func fillObject(schema *openapi3.Schema, values map[string]any, depth int) any {
	if alts := alternatives(schema); len(alts) > 0 && len(schema.Properties) == 0 {
		return fillAlternative(alts, values, depth)
	}
	base, _ := skeleton(schema, depth).(map[string]any)
	if base == nil {
		base = map[string]any{}
	}
	props := properties(schema)
	for k, v := range values {
		prop := props[k]
		switch tv := v.(type) {
		case map[string]any:
			if prop != nil {
				base[k] = fillObject(prop, tv, depth+1)
				continue
			}
		case []any:
			if prop != nil && prop.Items != nil && prop.Items.Value != nil {
				items := make([]any, len(tv))
				for i, e := range tv {
					if em, ok := e.(map[string]any); ok {
						items[i] = fillObject(prop.Items.Value, em, depth+1)
					} else {
						items[i] = e
					}
				}
				base[k] = items
				continue
			}
		}
		base[k] = v
	}
	return base
}

func alternatives(schema *openapi3.Schema) openapi3.SchemaRefs {
	if len(schema.OneOf) > 0 {
		return schema.OneOf
	}
	return schema.AnyOf
}

// fillAlternative fills the first alternative of a oneOf or anyOf that the values satisfy once
// filled (the event types of an issue's history, say), or the first one if none does.
func fillAlternative(alts openapi3.SchemaRefs, values map[string]any, depth int) any {
	var first any
	for i, alt := range alts {
		candidate := fillObject(alt.Value, values, depth+1)
		if i == 0 {
			first = candidate
		}
		data, err := json.Marshal(candidate)
		if err != nil {
			continue
		}
		var decoded any
		if json.Unmarshal(data, &decoded) == nil && alt.Value.VisitJSON(decoded) == nil {
			return candidate
		}
	}
	return first
}

// properties collects the properties of an object schema through allOf and the first
// alternative of anyOf/oneOf (the one skeleton picks).
func properties(schema *openapi3.Schema) map[string]*openapi3.Schema {
	out := map[string]*openapi3.Schema{}
	if schema == nil {
		return out
	}
	for name, p := range schema.Properties {
		if p != nil {
			out[name] = p.Value
		}
	}
	var parts openapi3.SchemaRefs
	parts = append(parts, schema.AllOf...)
	if len(schema.AnyOf) > 0 {
		parts = append(parts, schema.AnyOf[0])
	}
	if len(schema.OneOf) > 0 {
		parts = append(parts, schema.OneOf[0])
	}
	for _, part := range parts {
		for name, p := range properties(part.Value) {
			if _, ok := out[name]; !ok {
				out[name] = p
			}
		}
	}
	return out
}

// overlay lays b over a, merging nested objects.
func overlay(a, b any) any {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		return b
	}
	out := make(map[string]any, len(am)+len(bm))
	for k, v := range am {
		out[k] = v
	}
	for k, v := range bm {
		out[k] = overlay(out[k], v)
	}
	return out
}

// etagOf is the ETag of a response body.
func etagOf(body []byte) string {
	h := fnv.New64a()
	_, _ = h.Write(body)
	return `W/"` + strconv.FormatUint(h.Sum64(), 16) + `"`
}

package gitlabfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// checkRequest checks a request against the client-go options type of its route: a body (POST,
// PUT) must decode into it with DisallowUnknownFields, and every query parameter must be one of
// its `url` tags with a value of the field's kind. The decoded body is kept in c.body's place
// for the handler (decodeBody).
func (s *Server) checkRequest(rt route, c *call) error {
	if rt.options == nil {
		if len(c.query) > 0 {
			return fmt.Errorf("the operation takes no query parameters, got %v", c.query)
		}
		if len(bytes.TrimSpace(c.body)) > 0 {
			return fmt.Errorf("the operation takes no body, got %q", c.body)
		}
		return nil
	}
	t := reflect.TypeOf(rt.options).Elem()
	if c.req.Method == http.MethodPost || c.req.Method == http.MethodPut {
		if ct := c.req.Header.Get("Content-Type"); len(c.body) > 0 && !strings.HasPrefix(ct, "application/json") {
			return fmt.Errorf("content type %q, want application/json", ct)
		}
		v := reflect.New(t).Interface()
		if len(bytes.TrimSpace(c.body)) > 0 {
			if err := strictDecode(c.body, v); err != nil {
				return fmt.Errorf("body: %w", err)
			}
		}
	}
	fields := queryFields(t)
	for key, values := range c.query {
		kind, ok := fields[key]
		if !ok {
			return fmt.Errorf("query parameter %q is not one client-go's %s declares", key, t.Name())
		}
		for _, v := range values {
			if err := checkValue(kind, v); err != nil {
				return fmt.Errorf("query parameter %s=%q: %w", key, v, err)
			}
		}
	}
	return nil
}

// decodeBody decodes the request's body into v (a pointer to the route's options type); the
// body was checked by checkRequest.
func decodeBody(c *call, v any) error {
	if len(bytes.TrimSpace(c.body)) == 0 {
		return nil
	}
	return json.Unmarshal(c.body, v)
}

// queryFields lists the query parameters an options struct declares (embedded structs, such as
// ListOptions, included) with the kind of their values.
func queryFields(t reflect.Type) map[string]reflect.Kind {
	out := map[string]reflect.Kind{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			for k, v := range queryFields(f.Type) {
				out[k] = v
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("url"), ",")
		if name == "" || name == "-" {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		out[name] = ft.Kind()
	}
	return out
}

func checkValue(kind reflect.Kind, v string) error {
	switch kind {
	case reflect.Int, reflect.Int64, reflect.Int32:
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Errorf("not an integer")
		}
	case reflect.Bool:
		if _, err := strconv.ParseBool(v); err != nil {
			return fmt.Errorf("not a boolean")
		}
	}
	return nil
}

// strictDecode decodes one JSON value into v, refusing fields v's type does not have.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("data after the JSON value")
	}
	return nil
}

// plainMergeRequest is client-go's MergeRequest without its UnmarshalJSON (which decodes
// leniently, ignoring DisallowUnknownFields), so that a response can be checked strictly.
type plainMergeRequest gitlab.MergeRequest

// encode marshals a response value (of a client-go type) and checks that it decodes back into
// that type with DisallowUnknownFields.
func (s *Server) encode(rt route, v any) ([]byte, error) {
	payload, err := json.Marshal(v)
	if err != nil {
		return []byte(`{"message":"500 Internal Server Error"}`), err
	}
	var target any
	switch v.(type) {
	case *gitlab.MergeRequest:
		target = new(plainMergeRequest)
	default:
		target = reflect.New(reflect.TypeOf(v)).Interface()
	}
	if err := strictDecode(payload, target); err != nil {
		return payload, fmt.Errorf("%s: %w", rt.name(), err)
	}
	return payload, nil
}

// quote is s as a JSON string.
func quote(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

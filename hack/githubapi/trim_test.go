package main

import (
	"reflect"
	"testing"
)

func testDoc() map[string]any {
	ref := func(to string) map[string]any { return map[string]any{"$ref": to} }
	return map[string]any{
		"openapi": "3.0.3",
		"info":    map[string]any{"title": "t", "version": "1"},
		"paths": map[string]any{
			"/a": map[string]any{
				"get": map[string]any{
					"operationId": "a/get",
					"responses": map[string]any{"200": map[string]any{"content": map[string]any{"application/json": map[string]any{
						"schema":   ref("#/components/schemas/A"),
						"examples": map[string]any{"default": ref("#/components/examples/big")},
					}}}},
				},
				"post": map[string]any{"operationId": "a/post", "requestBody": ref("#/components/requestBodies/unused")},
			},
			"/b": map[string]any{"get": map[string]any{"operationId": "b/get"}},
		},
		"components": map[string]any{
			"schemas": map[string]any{
				"A":      map[string]any{"properties": map[string]any{"b": ref("#/components/schemas/B"), "examples": map[string]any{"type": "string"}}},
				"B":      map[string]any{"items": ref("#/components/schemas/A")},
				"Unused": map[string]any{"type": "string"},
			},
			"examples":      map[string]any{"big": map[string]any{"value": "x"}},
			"requestBodies": map[string]any{"unused": map[string]any{}},
		},
	}
}

func TestTrimOpenAPI_keepsOperationsAndWhatTheyReference(t *testing.T) {
	out, err := trimOpenAPI(testDoc(), []string{"a/get"}, "trimmed")
	if err != nil {
		t.Fatal(err)
	}
	paths := out["paths"].(map[string]any)
	if len(paths) != 1 || len(paths["/a"].(map[string]any)) != 1 {
		t.Fatalf("paths = %v, want only GET /a", paths)
	}
	components := out["components"].(map[string]any)
	schemas := components["schemas"].(map[string]any)
	if len(schemas) != 2 || schemas["A"] == nil || schemas["B"] == nil {
		t.Fatalf("schemas = %v, want A and B (B through A, A again through B)", schemas)
	}
	if _, ok := components["examples"]; ok {
		t.Fatal("named examples were kept")
	}
	if _, ok := schemas["A"].(map[string]any)["properties"].(map[string]any)["examples"]; !ok {
		t.Fatal("a schema property called examples was dropped")
	}
	if out["info"].(map[string]any)["description"] != "trimmed" {
		t.Fatal("the note was not recorded")
	}
}

func TestTrimOpenAPI_missingOperation(t *testing.T) {
	if _, err := trimOpenAPI(testDoc(), []string{"a/get", "c/get"}, ""); err == nil {
		t.Fatal("an operation missing from the description was not reported")
	}
}

func TestTrimWebhooks(t *testing.T) {
	doc := map[string]any{
		"$schema": "draft-07",
		"definitions": map[string]any{
			"ping$event": map[string]any{"properties": map[string]any{"hook": map[string]any{"$ref": "#/definitions/hook"}}},
			"hook":       map[string]any{"type": "object"},
			"other":      map[string]any{"type": "object"},
		},
	}
	out, err := trimWebhooks(doc, []string{"ping$event"}, "")
	if err != nil {
		t.Fatal(err)
	}
	defs := out["definitions"].(map[string]any)
	if len(defs) != 2 || defs["hook"] == nil || defs["ping$event"] == nil {
		t.Fatalf("definitions = %v", defs)
	}
	if want := []any{map[string]any{"$ref": "#/definitions/ping$event"}}; !reflect.DeepEqual(out["oneOf"], want) {
		t.Fatalf("oneOf = %v", out["oneOf"])
	}
	if _, err := trimWebhooks(doc, []string{"nope"}, ""); err == nil {
		t.Fatal("a missing definition was not reported")
	}
}

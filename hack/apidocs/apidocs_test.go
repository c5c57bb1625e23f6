package main

import (
	"strings"
	"testing"
)

func TestRender_fixture(t *testing.T) {
	p, err := load("testdata/v1")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	render(&b, []*apiPackage{p})
	out := b.String()
	for _, want := range []string{
		"## example.sluice.dev/v1",
		"  - [Widget](#example-sluice-dev-v1-widget)",
		"`apiVersion: example.sluice.dev/v1`, `kind: Widget`",
		"| `spec` | [WidgetSpec](#example-sluice-dev-v1-widgetspec) | Spec is what the widget should be. *Required.* |",
		"| `size` | int32 | Size is how big \\| how wide. *Required.* Validation: Minimum=1; default 3 |",
		"| `color` | [Color](#example-sluice-dev-v1-color) | Color is the colour. *Optional.* |",
		"### Color (string)",
		"| `red` | Red is red. |",
		"| `blue` | Blue is blue. |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, unwanted := range []string{"WidgetList", "internal", "TypeMeta", "+kubebuilder"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("output contains %q:\n%s", unwanted, out)
		}
	}
	// Types appear after the kind that uses them.
	if strings.Index(out, "### Widget\n") > strings.Index(out, "### WidgetSpec") {
		t.Errorf("WidgetSpec before Widget:\n%s", out)
	}
}

func TestLoad_withoutGroupName_fails(t *testing.T) {
	if _, err := load("."); err == nil || !strings.Contains(err.Error(), "+groupName") {
		t.Fatalf("load of a package without +groupName: %v", err)
	}
}

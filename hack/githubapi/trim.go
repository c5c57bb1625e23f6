// Command githubapi trims GitHub's published API descriptions down to what sluice uses, for the
// GitHub fake in test/githubfake to validate against.
//
// Two modes:
//
//	go run ./hack/githubapi -mode openapi -in api.github.com.json -ops hack/githubapi/operations.txt -out trimmed.json
//	go run ./hack/githubapi -mode webhooks -in schema.json -events 'ping$event,push$event' -out trimmed.json
//
// The openapi mode keeps the operations named in -ops (by operationId) and every component they
// reference, directly or through other components; media-type examples are dropped. The webhooks
// mode keeps the named definitions of @octokit/webhooks-schemas and everything they reference, with
// a root oneOf over them. The output is indented JSON with sorted keys, so re-running the command on
// the same input gives the same bytes.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "githubapi:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("githubapi", flag.ContinueOnError)
	mode := fs.String("mode", "openapi", "openapi or webhooks")
	in := fs.String("in", "", "the description to trim")
	out := fs.String("out", "", "where to write the trimmed description")
	ops := fs.String("ops", "", "openapi: file listing the operationIds to keep, one a line (# comments)")
	events := fs.String("events", "", "webhooks: comma-separated definition names to keep")
	note := fs.String("note", "", "text recorded in the output (info.description or $comment)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" || *out == "" {
		return errors.New("-in and -out are required")
	}
	raw, err := os.ReadFile(*in)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("decoding %s: %w", *in, err)
	}
	var trimmed map[string]any
	switch *mode {
	case "openapi":
		list, err := readList(*ops)
		if err != nil {
			return err
		}
		trimmed, err = trimOpenAPI(doc, list, *note)
		if err != nil {
			return err
		}
	case "webhooks":
		trimmed, err = trimWebhooks(doc, splitList(*events), *note)
		if err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown -mode %q", *mode)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", " ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(trimmed); err != nil {
		return err
	}
	return os.WriteFile(*out, buf.Bytes(), 0o644)
}

// readList reads one entry a line, skipping blank lines and # comments.
func readList(path string) ([]string, error) {
	if path == "" {
		return nil, errors.New("-ops is required in openapi mode")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var list []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		list = append(list, line)
	}
	return list, sc.Err()
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// trimOpenAPI keeps the operations whose operationId is in ops and the components they reach.
func trimOpenAPI(doc map[string]any, ops []string, note string) (map[string]any, error) {
	doc, _ = dropExamples(doc).(map[string]any)
	want := map[string]bool{}
	for _, op := range ops {
		want[op] = true
	}
	paths, _ := doc["paths"].(map[string]any)
	keptPaths := map[string]any{}
	found := map[string]bool{}
	for path, item := range paths {
		itemMap, _ := item.(map[string]any)
		kept := map[string]any{}
		for key, val := range itemMap {
			op, isOp := val.(map[string]any)
			if !isOp || !isMethod(key) {
				continue
			}
			id, _ := op["operationId"].(string)
			if want[id] {
				kept[key] = op
				found[id] = true
			}
		}
		if len(kept) == 0 {
			continue
		}
		if params, ok := itemMap["parameters"]; ok {
			kept["parameters"] = params
		}
		keptPaths[path] = kept
	}
	var missing []string
	for _, op := range ops {
		if !found[op] {
			missing = append(missing, op)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("operations not in the description: %s", strings.Join(missing, ", "))
	}
	components, _ := doc["components"].(map[string]any)
	refs := reachable(doc, keptPaths)
	keptComponents := map[string]any{}
	for _, ref := range refs {
		section, name, ok := splitComponentRef(ref)
		if !ok {
			return nil, fmt.Errorf("unsupported reference %q", ref)
		}
		sec, _ := components[section].(map[string]any)
		if _, ok := sec[name]; !ok {
			return nil, fmt.Errorf("dangling reference %q", ref)
		}
		out, _ := keptComponents[section].(map[string]any)
		if out == nil {
			out = map[string]any{}
			keptComponents[section] = out
		}
		out[name] = sec[name]
	}
	info, _ := doc["info"].(map[string]any)
	keptInfo := map[string]any{}
	for k, v := range info {
		keptInfo[k] = v
	}
	if note != "" {
		keptInfo["description"] = note
	}
	trimmed := map[string]any{
		"openapi":    doc["openapi"],
		"info":       keptInfo,
		"servers":    doc["servers"],
		"paths":      keptPaths,
		"components": keptComponents,
	}
	return trimmed, nil
}

// trimWebhooks keeps the named definitions and what they reach, with a root oneOf over them.
func trimWebhooks(doc map[string]any, names []string, note string) (map[string]any, error) {
	if len(names) == 0 {
		return nil, errors.New("-events is required in webhooks mode")
	}
	defs, _ := doc["definitions"].(map[string]any)
	var roots []any
	for _, n := range names {
		if _, ok := defs[n]; !ok {
			return nil, fmt.Errorf("definition %q not in the schema", n)
		}
		roots = append(roots, map[string]any{"$ref": "#/definitions/" + escapePointer(n)})
	}
	keptDefs := map[string]any{}
	for _, ref := range reachable(doc, roots) {
		name, ok := strings.CutPrefix(ref, "#/definitions/")
		if !ok {
			return nil, fmt.Errorf("unsupported reference %q", ref)
		}
		name = unescapePointer(name)
		def, ok := defs[name]
		if !ok {
			return nil, fmt.Errorf("dangling reference %q", ref)
		}
		keptDefs[name] = def
	}
	trimmed := map[string]any{
		"$schema":     doc["$schema"],
		"definitions": keptDefs,
		"oneOf":       roots,
	}
	if note != "" {
		trimmed["$comment"] = note
	}
	return trimmed, nil
}

// reachable returns every local reference ("#/...") reachable from start, following references
// through the document, sorted.
func reachable(doc map[string]any, start any) []string {
	seen := map[string]bool{}
	queue := collectRefs(start, nil)
	for len(queue) > 0 {
		ref := queue[0]
		queue = queue[1:]
		if seen[ref] {
			continue
		}
		seen[ref] = true
		if target, ok := resolve(doc, ref); ok {
			queue = collectRefs(target, queue)
		}
	}
	out := make([]string, 0, len(seen))
	for ref := range seen {
		out = append(out, ref)
	}
	sort.Strings(out)
	return out
}

// collectRefs appends every "$ref" string found in v to acc.
func collectRefs(v any, acc []string) []string {
	switch t := v.(type) {
	case map[string]any:
		if ref, ok := t["$ref"].(string); ok && strings.HasPrefix(ref, "#/") {
			acc = append(acc, ref)
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			acc = collectRefs(t[k], acc)
		}
	case []any:
		for _, e := range t {
			acc = collectRefs(e, acc)
		}
	}
	return acc
}

// resolve follows a local JSON pointer reference.
func resolve(doc map[string]any, ref string) (any, bool) {
	var cur any = doc
	for _, tok := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[unescapePointer(tok)]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

func splitComponentRef(ref string) (section, name string, ok bool) {
	rest, ok := strings.CutPrefix(ref, "#/components/")
	if !ok {
		return "", "", false
	}
	section, name, ok = strings.Cut(rest, "/")
	if !ok || strings.Contains(name, "/") {
		return "", "", false
	}
	return section, unescapePointer(name), true
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

func isMethod(key string) bool {
	switch key {
	case "get", "put", "post", "delete", "options", "head", "patch", "trace":
		return true
	}
	return false
}

// dropExamples returns a copy of v without "examples" maps (named examples of media types and
// parameters), which the validator does not need and which make up much of the description's size.
func dropExamples(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if k == "examples" && isNamedExamples(e) {
				continue
			}
			out[k] = dropExamples(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = dropExamples(e)
		}
		return out
	}
	return v
}

// isNamedExamples tells an OpenAPI "examples" map (name -> Example Object or reference to one) from
// a schema property that happens to be called "examples".
func isNamedExamples(v any) bool {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return false
	}
	for _, e := range m {
		ex, ok := e.(map[string]any)
		if !ok {
			return false
		}
		ref, _ := ex["$ref"].(string)
		_, hasValue := ex["value"]
		if !strings.HasPrefix(ref, "#/components/examples/") && !hasValue {
			return false
		}
	}
	return true
}

package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// apiPackage is one API group version, read from its Go package.
type apiPackage struct {
	// Group and Version name the API (from +groupName and the package name).
	Group, Version string
	// Doc is the package documentation, without markers.
	Doc string
	// Kinds are the root kinds (+kubebuilder:object:root, not lists), in
	// source order.
	Kinds []string
	// Types are the exported types by name.
	Types map[string]*apiType
}

// apiType is one exported type.
type apiType struct {
	Name string
	// Doc is its documentation, without markers.
	Doc string
	// Markers are its kubebuilder markers worth showing.
	Markers []string
	// Fields are the fields of a struct type, in order.
	Fields []apiField
	// Underlying is the underlying type of a non-struct type.
	Underlying ast.Expr
	// Consts are the constants declared with this type.
	Consts []apiConst
	// root and list come from the kubebuilder markers.
	root bool
	pos  token.Pos
}

// apiField is one field of a struct type.
type apiField struct {
	// JSON is the field's JSON name; empty for an inlined field.
	JSON string
	Type ast.Expr
	Doc  string
	// Markers are its kubebuilder markers worth showing.
	Markers  []string
	Optional bool
	Inline   bool
}

// apiConst is one constant of an enum-like type.
type apiConst struct {
	Name, Value, Doc string
}

// load reads the API package in dir.
func load(dir string) (*apiPackage, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { //nolint:staticcheck // a whole directory of one package, without build tags
		return !strings.HasSuffix(fi.Name(), "_test.go") && !strings.HasPrefix(fi.Name(), "zz_generated")
	}, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	if len(pkgs) != 1 {
		return nil, fmt.Errorf("%d packages, want one", len(pkgs))
	}
	p := &apiPackage{Types: map[string]*apiType{}}
	for name, pkg := range pkgs {
		p.Version = name
		files := make([]string, 0, len(pkg.Files))
		for f := range pkg.Files {
			files = append(files, f)
		}
		sort.Strings(files)
		for _, f := range files {
			file := pkg.Files[f]
			if file.Doc != nil {
				doc, markers := splitDoc(file.Doc)
				for _, m := range markers {
					if g, ok := strings.CutPrefix(m, "+groupName="); ok {
						p.Group = g
						p.Doc = doc
					}
				}
			}
			for _, decl := range file.Decls {
				if gd, ok := decl.(*ast.GenDecl); ok {
					p.addDecl(gd)
				}
			}
		}
	}
	if p.Group == "" {
		return nil, fmt.Errorf("no +groupName marker in the package documentation")
	}
	var roots []*apiType
	for _, t := range p.Types {
		if t.root && !strings.HasSuffix(t.Name, "List") {
			roots = append(roots, t)
		}
	}
	sort.Slice(roots, func(i, j int) bool { return roots[i].pos < roots[j].pos })
	for _, t := range roots {
		p.Kinds = append(p.Kinds, t.Name)
	}
	return p, nil
}

// addDecl records the exported types and typed constants of decl.
func (p *apiPackage) addDecl(gd *ast.GenDecl) {
	switch gd.Tok {
	case token.TYPE:
		for _, s := range gd.Specs {
			ts, ok := s.(*ast.TypeSpec)
			if !ok || !ts.Name.IsExported() {
				continue
			}
			cg := ts.Doc
			if cg == nil && len(gd.Specs) == 1 {
				cg = gd.Doc
			}
			doc, markers := splitDoc(cg)
			t := &apiType{Name: ts.Name.Name, Doc: doc, Markers: shown(markers), pos: ts.Pos()}
			for _, m := range markers {
				if m == "+kubebuilder:object:root=true" {
					t.root = true
				}
			}
			if st, ok := ts.Type.(*ast.StructType); ok {
				t.Fields = fields(st)
			} else {
				t.Underlying = ts.Type
			}
			if old, ok := p.Types[t.Name]; ok {
				t.Consts = old.Consts
			}
			p.Types[t.Name] = t
		}
	case token.CONST:
		var typ string
		for _, s := range gd.Specs {
			vs, ok := s.(*ast.ValueSpec)
			if !ok {
				continue
			}
			if id, ok := vs.Type.(*ast.Ident); ok {
				typ = id.Name
			} else if vs.Type != nil || len(vs.Values) > 0 {
				typ = ""
			}
			if typ == "" || len(vs.Values) != len(vs.Names) {
				continue
			}
			cg := vs.Doc
			if cg == nil && len(gd.Specs) == 1 {
				cg = gd.Doc
			}
			doc, _ := splitDoc(cg)
			for i, n := range vs.Names {
				if !n.IsExported() {
					continue
				}
				value := exprString(vs.Values[i])
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if v, err := strconv.Unquote(lit.Value); err == nil {
						value = v
					}
				}
				t, ok := p.Types[typ]
				if !ok {
					t = &apiType{Name: typ}
					p.Types[typ] = t
				}
				t.Consts = append(t.Consts, apiConst{Name: n.Name, Value: value, Doc: doc})
			}
		}
	}
}

// fields reads the fields of a struct type.
func fields(st *ast.StructType) []apiField {
	var out []apiField
	for _, f := range st.Fields.List {
		tag := ""
		if f.Tag != nil {
			if v, err := strconv.Unquote(f.Tag.Value); err == nil {
				tag = reflect.StructTag(v).Get("json")
			}
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		doc, markers := splitDoc(f.Doc)
		af := apiField{JSON: name, Type: f.Type, Doc: doc, Markers: shown(markers)}
		af.Inline = strings.Contains(opts, "inline") || (len(f.Names) == 0 && name == "")
		af.Optional = strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
		for _, m := range markers {
			switch m {
			case "+optional", "+kubebuilder:validation:Optional":
				af.Optional = true
			case "+required", "+kubebuilder:validation:Required":
				af.Optional = false
			}
		}
		if len(f.Names) > 0 && !f.Names[0].IsExported() {
			continue
		}
		out = append(out, af)
	}
	return out
}

// splitDoc separates a comment's prose from its +markers.
func splitDoc(cg *ast.CommentGroup) (doc string, markers []string) {
	if cg == nil {
		return "", nil
	}
	var lines []string
	for _, l := range strings.Split(cg.Text(), "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "+") {
			markers = append(markers, t)
			continue
		}
		lines = append(lines, l)
	}
	return strings.TrimSpace(strings.Join(lines, "\n")), markers
}

// shown keeps the markers a reader needs: validation and defaults.
func shown(markers []string) []string {
	var out []string
	for _, m := range markers {
		switch {
		case strings.HasPrefix(m, "+kubebuilder:validation:Optional"), strings.HasPrefix(m, "+kubebuilder:validation:Required"):
		case strings.HasPrefix(m, "+kubebuilder:validation:XValidation"):
			out = append(out, "rule: "+xvalidationMessage(m))
		case strings.HasPrefix(m, "+kubebuilder:validation:"):
			out = append(out, strings.TrimPrefix(m, "+kubebuilder:validation:"))
		case strings.HasPrefix(m, "+kubebuilder:default="):
			out = append(out, "default "+strings.TrimPrefix(m, "+kubebuilder:default="))
		}
	}
	return out
}

// xvalidationMessage returns the message of a CEL rule marker, or the rule.
func xvalidationMessage(m string) string {
	for _, key := range []string{`message="`, `rule="`} {
		if _, rest, ok := strings.Cut(m, key); ok {
			if end := strings.Index(rest, `"`); end >= 0 {
				return rest[:end]
			}
		}
	}
	return m
}

// exprString renders a type or value expression as Go source.
func exprString(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return exprString(x.X) + "." + x.Sel.Name
	case *ast.StarExpr:
		return "*" + exprString(x.X)
	case *ast.ArrayType:
		return "[]" + exprString(x.Elt)
	case *ast.MapType:
		return "map[" + exprString(x.Key) + "]" + exprString(x.Value)
	case *ast.BasicLit:
		return x.Value
	case *ast.InterfaceType:
		return "any"
	}
	return fmt.Sprintf("%T", e)
}

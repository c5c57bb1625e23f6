package lua

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// builtins are the scripts shipped in the binary, one per kind, at
// scripts/<group>/<Kind>.lua.
//
//go:embed scripts
var builtins embed.FS

// Script is the Lua script for one kind.
type Script struct {
	// Name says where it came from: the ConfigMap key or the built-in
	// file; errors name it.
	Name string
	// Source is the script.
	Source string
}

// Builtin returns the script built into sluice for the kind gk.
func Builtin(gk schema.GroupKind) (Script, bool) {
	path := "scripts/" + gk.Group + "/" + gk.Kind + ".lua"
	b, err := fs.ReadFile(builtins, path)
	if err != nil {
		return Script{}, false
	}
	return Script{Name: "built-in " + gk.Group + "/" + gk.Kind + ".lua", Source: string(b)}, true
}

// Load returns the script for the kind gk: the key ScriptKey(gk) of the
// ConfigMap ConfigMapName in namespace when it has one (users may replace
// a built-in script), else the built-in script. It is an error if there
// is neither.
func Load(ctx context.Context, reader client.Reader, namespace string, gk schema.GroupKind) (Script, error) {
	key := ScriptKey(gk)
	cm := &corev1.ConfigMap{}
	err := reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ConfigMapName}, cm)
	switch {
	case err == nil:
		if src, ok := cm.Data[key]; ok {
			return Script{Name: fmt.Sprintf("%s (ConfigMap %s/%s)", key, namespace, ConfigMapName), Source: src}, nil
		}
	case apierrors.IsNotFound(err):
	default:
		return Script{}, fmt.Errorf("reading ConfigMap %s/%s: %w", namespace, ConfigMapName, err)
	}
	if s, ok := Builtin(gk); ok {
		return s, nil
	}
	return Script{}, fmt.Errorf("no Lua script for %s: add the key %s to ConfigMap %s/%s", gk, key, namespace, ConfigMapName)
}

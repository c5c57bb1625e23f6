package argocdsim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// manifests fetches the head of branch from url and returns it with every
// object of the manifest files under dir, in file order.
func manifests(ctx context.Context, url, branch, dir string) (string, []*unstructured.Unstructured, error) {
	repo, err := gogit.CloneContext(ctx, memory.NewStorage(), nil, &gogit.CloneOptions{
		URL: url, ReferenceName: plumbing.NewBranchReferenceName(branch), SingleBranch: true, Depth: 1, NoCheckout: true,
	})
	if err != nil {
		return "", nil, fmt.Errorf("fetching %s of %s: %w", branch, url, err)
	}
	ref, err := repo.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		return "", nil, fmt.Errorf("reading branch %s: %w", branch, err)
	}
	commit, err := repo.CommitObject(ref.Hash())
	if err != nil {
		return "", nil, fmt.Errorf("reading commit %s: %w", ref.Hash(), err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return "", nil, err
	}
	dir = strings.Trim(path.Clean("/"+dir), "/")
	if dir != "" {
		if tree, err = tree.Tree(dir); err != nil {
			return "", nil, fmt.Errorf("path %s at %s: %w", dir, ref.Hash(), err)
		}
	}
	var objs []*unstructured.Unstructured
	err = tree.Files().ForEach(func(f *object.File) error {
		switch path.Ext(f.Name) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		content, err := f.Contents()
		if err != nil {
			return err
		}
		got, err := decode(content)
		if err != nil {
			return fmt.Errorf("%s: %w", path.Join(dir, f.Name), err)
		}
		objs = append(objs, got...)
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	return ref.Hash().String(), objs, nil
}

// decode reads every non-empty YAML or JSON document of content.
func decode(content string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewBufferString(content), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" || u.GetAPIVersion() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("a document lacks apiVersion, kind or metadata.name")
		}
		out = append(out, u)
	}
}

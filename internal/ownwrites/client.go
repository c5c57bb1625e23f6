package ownwrites

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Client is a client.Client whose writes are recorded in a Tracker: after
// each one the Tracker knows the resourceVersion the API server gave the
// object, or that its outcome is unknown. Reads go to the wrapped client.
type Client struct {
	client.Client
	tracker *Tracker
}

// NewClient wraps c so that its writes, and those of its status and other
// subresource clients, are recorded in t.
func NewClient(c client.Client, t *Tracker) *Client { return &Client{Client: c, tracker: t} }

// keyOf names obj for the tracker; ok is false when its kind is unknown.
func (c *Client) keyOf(obj runtime.Object, namespace, name string) (key, bool) {
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		return key{}, false
	}
	return key{gk: gvk.GroupKind(), name: types.NamespacedName{Namespace: namespace, Name: name}}, true
}

// record folds the outcome of a write of obj into the tracker. A write the
// API server refused (an invalid object, a missing one, no permission)
// changed nothing; a conflict says the copy the write rested on was stale,
// so the next read must not be served that copy again; any other error may
// have been applied.
func (c *Client) record(obj client.Object, err error) {
	k, ok := c.keyOf(obj, obj.GetNamespace(), obj.GetName())
	if !ok || obj.GetName() == "" {
		return
	}
	switch {
	case err == nil:
		c.tracker.saw(k, obj.GetResourceVersion())
	case refused(err):
	default:
		c.tracker.lost(k)
	}
}

// applied records an apply of obj, whose answer the client does not hand
// back: unless the API server refused it, the object's next read must come
// from the API server.
func (c *Client) applied(obj runtime.ApplyConfiguration, err error) {
	named, ok := obj.(interface {
		GetName() string
		GetNamespace() string
		GetObjectKind() schema.ObjectKind
	})
	if !ok || (err != nil && refused(err)) {
		return
	}
	gvk := named.GetObjectKind().GroupVersionKind()
	c.tracker.lost(key{gk: gvk.GroupKind(), name: types.NamespacedName{Namespace: named.GetNamespace(), Name: named.GetName()}})
}

// refused reports whether err says the API server did not apply a write.
func refused(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsNotFound(err) ||
		apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) || apierrors.IsAlreadyExists(err) ||
		apierrors.IsUnauthorized(err) || apierrors.IsMethodNotSupported(err) || apierrors.IsUnsupportedMediaType(err)
}

// Create creates obj and records its resourceVersion.
func (c *Client) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	err := c.Client.Create(ctx, obj, opts...)
	c.record(obj, err)
	return err
}

// Update updates obj and records its resourceVersion.
func (c *Client) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	err := c.Client.Update(ctx, obj, opts...)
	c.record(obj, err)
	return err
}

// Patch patches obj and records its resourceVersion.
func (c *Client) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	err := c.Client.Patch(ctx, obj, patch, opts...)
	c.record(obj, err)
	return err
}

// Delete deletes obj and records that the copy with its UID is gone (or,
// with a finalizer, going: the cache must show a newer copy or none).
func (c *Client) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	err := c.Client.Delete(ctx, obj, opts...)
	k, ok := c.keyOf(obj, obj.GetNamespace(), obj.GetName())
	switch {
	case !ok:
	case err == nil || apierrors.IsNotFound(err):
		c.tracker.gone(k, obj.GetUID())
	case !refused(err):
		c.tracker.lost(k)
	}
	return err
}

// Apply applies obj; the API server's answer is not handed back, so the
// object's next cached read must wait for a read from the API server.
func (c *Client) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	err := c.Client.Apply(ctx, obj, opts...)
	c.applied(obj, err)
	return err
}

// Status returns the status client, whose writes are recorded too.
func (c *Client) Status() client.SubResourceWriter { return c.SubResource("status") }

// SubResource returns the client of subResource, whose writes are recorded.
func (c *Client) SubResource(subResource string) client.SubResourceClient {
	return &subResourceClient{SubResourceClient: c.Client.SubResource(subResource), parent: c}
}

// subResourceClient records the writes of one subresource client.
type subResourceClient struct {
	client.SubResourceClient
	parent *Client
}

// Create creates a subresource of obj (an eviction, a token) and records
// obj's resourceVersion as unknown.
func (s *subResourceClient) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	err := s.SubResourceClient.Create(ctx, obj, sub, opts...)
	if k, ok := s.parent.keyOf(obj, obj.GetNamespace(), obj.GetName()); ok && (err == nil || !refused(err)) {
		s.parent.tracker.lost(k)
	}
	return err
}

// Update updates the subresource and records obj's resourceVersion.
func (s *subResourceClient) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	err := s.SubResourceClient.Update(ctx, obj, opts...)
	s.parent.record(obj, err)
	return err
}

// Patch patches the subresource and records obj's resourceVersion.
func (s *subResourceClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	err := s.SubResourceClient.Patch(ctx, obj, patch, opts...)
	s.parent.record(obj, err)
	return err
}

// Apply applies the subresource; as with Client.Apply, the object's next
// cached read waits for a read from the API server.
func (s *subResourceClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	err := s.SubResourceClient.Apply(ctx, obj, opts...)
	s.parent.applied(obj, err)
	return err
}

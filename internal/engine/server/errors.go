package server

import (
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/mysqlbench/mysqlbench-operator/internal/object"
)

// ConfigError is a spec that cannot work as written; retrying does not help.
type ConfigError struct{ Message string }

func (e *ConfigError) Error() string { return e.Message }

// IsConfigError says whether err is (or wraps) a *ConfigError.
func IsConfigError(err error) bool {
	var ce *ConfigError
	return errors.As(err, &ce)
}

// IsPermanentAPIError says whether the API server refused a request in a way that repeating it
// cannot change: the object is invalid (422), malformed (400), too large (413), or forbidden
// (403: RBAC, a ResourceQuota, an admission policy). Such a refusal ends the target with the API
// server's own message instead of being retried forever.
func IsPermanentAPIError(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsForbidden(err) ||
		apierrors.IsRequestEntityTooLargeError(err) || apierrors.IsMethodNotSupported(err)
}

// Rejected is the ConfigError of an object the API server refused for good. It quotes the API
// server's own error, without what callers wrapped around it: the message names the object itself.
func Rejected(obj object.Object, err error) *ConfigError {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if kind == "" {
		// Typed objects carry no TypeMeta: *v1.StatefulSet says StatefulSet.
		t := fmt.Sprintf("%T", obj)
		kind = t[strings.LastIndex(t, ".")+1:]
	}
	return &ConfigError{Message: fmt.Sprintf("the API server rejected %s %s: %v "+
		"(fix the target's settings, or the namespace's quota or admission policy that refuses it)", kind, obj.GetName(), APIStatus(err))}
}

// APIStatus is the API server's own error inside err (err itself when nothing wraps it).
func APIStatus(err error) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if e, ok := status.(error); ok {
			return e
		}
	}
	return err
}

// WaitError says that Provision cannot go on yet for a reason the user should see (an earlier
// run's object under the same name is still being deleted); the controller says Message and tries
// again after After.
type WaitError struct {
	Message string
	After   time.Duration
}

func (e *WaitError) Error() string { return e.Message }

// AsWait returns the *WaitError err is or wraps, or nil.
func AsWait(err error) *WaitError {
	var we *WaitError
	if errors.As(err, &we) {
		return we
	}
	return nil
}
